package app_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/tally-analytics/tally/internal/accounts"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/pkg/api"
)

// Access changes apply on the very next request on every instance. Before,
// the ingest path cached roles and sites for 30 s: a member removed on one
// server kept sending events through another for up to 30 s, and a demoted
// admin kept writing.
func TestAccessChangesApplyAtOnce(t *testing.T) {
	h := newHarness(t)
	other := h.secondInstance()
	ctx := context.Background()
	const email = "member@example.com"
	team, k := adminWithKey(t, h, email)
	member := other.client(k.Secret) // sends through the second server
	send := func() error {
		_, err := member.Pageview(ctx, api.PageviewRequest{SiteID: string(h.siteID), URL: "https://example.com/", UserAgent: chromeUA})
		return err
	}
	if err := send(); err != nil { // the second server now holds the member's role
		t.Fatal(err)
	}
	// demoted on the first server: the next event through the second is refused
	if err := team.SetMember(ctx, h.userID, h.siteID, email, model.RoleViewer); err != nil {
		t.Fatal(err)
	}
	wantError(t, send(), http.StatusForbidden, "forbidden", "")
	// made admin again, then removed
	if err := team.SetMember(ctx, h.userID, h.siteID, email, model.RoleAdmin); err != nil {
		t.Fatal(err)
	}
	if err := send(); err != nil {
		t.Fatalf("admin again: %v", err)
	}
	if err := team.RemoveMember(ctx, h.userID, h.siteID, email); err != nil {
		t.Fatal(err)
	}
	wantError(t, send(), http.StatusBadRequest, "invalid_site_id", "site_id")
}

// adminWithKey makes email an admin of h's site, with an API key.
func adminWithKey(t *testing.T, h *harness, email string) (*accounts.Team, accounts.CreatedKey) {
	t.Helper()
	ctx := context.Background()
	if _, err := h.app.Accounts.CreateUser(ctx, accounts.NewUser{Email: email, Password: password, Name: "M"}); err != nil {
		t.Fatal(err)
	}
	team := accounts.NewTeam(h.app.Accounts, h.app.PG)
	if err := team.SetMember(ctx, h.userID, h.siteID, email, model.RoleAdmin); err != nil {
		t.Fatal(err)
	}
	k, err := h.app.Accounts.CreateKey(ctx, accounts.NewKey{OwnerEmail: email, Name: "member"})
	if err != nil {
		t.Fatal(err)
	}
	return team, k
}

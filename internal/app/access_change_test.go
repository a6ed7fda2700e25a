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

// A shared link is as good as its maker's access: a member removed from a
// site takes the links they made with them. Before, an admin could make a
// link (its URL shown to them alone) and, once removed, still read the
// site's dashboard through it, revenue included, for as long as nobody
// noticed the link in the list. The owner's links, and a link of the member
// on another site, stay.
func TestRemovedMembersLinksEnd(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	const email = "leaving@example.com"
	team, k := adminWithKey(t, h, email)
	member := h.client(k.Secret)
	theirs, err := member.CreateSharedLink(ctx, string(h.siteID), api.SharedLinkRequest{Label: "mine", ShowRevenue: true})
	if err != nil {
		t.Fatal(err)
	}
	owners, err := h.client(h.key).CreateSharedLink(ctx, string(h.siteID), api.SharedLinkRequest{Label: "the owner's"})
	if err != nil {
		t.Fatal(err)
	}
	// the member's link of a site of their own
	own, err := h.app.Accounts.CreateSite(ctx, accounts.NewSite{OwnerEmail: email, Domain: "leaving.example"})
	if err != nil {
		t.Fatal(err)
	}
	elsewhere, err := member.CreateSharedLink(ctx, string(own.ID), api.SharedLinkRequest{Label: "elsewhere"})
	if err != nil {
		t.Fatal(err)
	}
	open := func(token string) int {
		resp, err := http.Get(h.srv.URL + "/share/" + token)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if status := open(theirs.Token); status != http.StatusOK {
		t.Fatalf("the admin's link before: %d, want 200", status)
	}
	if err := team.RemoveMember(ctx, h.userID, h.siteID, email); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		token string
		want  int
	}{
		"the removed admin's link":           {theirs.Token, http.StatusNotFound},
		"the owner's link":                   {owners.Token, http.StatusOK},
		"the removed admin's link elsewhere": {elsewhere.Token, http.StatusOK},
	} {
		if status := open(tc.token); status != tc.want {
			t.Errorf("%s after the removal: %d, want %d", name, status, tc.want)
		}
	}
	list, err := h.client(h.key).SharedLinks(ctx, string(h.siteID))
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].Label != "the owner's" {
		t.Errorf("the site's links after the removal: %+v, want the owner's alone", list)
	}
}

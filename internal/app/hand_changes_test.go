package app_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tally-analytics/tally/pkg/api"
)

// Changes made by hand in Postgres — which bump no counter of tally's —
// apply at once on every instance: the database announces them and each
// server forgets what it cached. Before, a demoted member kept sending for
// up to 30 s and a deleted key worked for up to a minute. The test clock
// stands still, so no cache can expire on its own here.
func TestHandChangesApplyAtOnce(t *testing.T) {
	h := newHarness(t)
	other := h.secondInstance()
	ctx := context.Background()
	const email = "member@example.com"
	_, k := adminWithKey(t, h, email)
	db, err := pgx.Connect(ctx, h.cfg.PostgresURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(ctx)
	byHand := func(sql string, args ...any) {
		t.Helper()
		if _, err := db.Exec(ctx, sql, args...); err != nil {
			t.Fatal(err)
		}
	}
	sendThrough := func(inst *harness) error {
		_, err := inst.client(k.Secret).Pageview(ctx, api.PageviewRequest{SiteID: string(h.siteID), URL: "https://example.com/", UserAgent: chromeUA})
		return err
	}
	// until wants every instance to answer status within 2 s of a change
	until := func(what string, status int, code string) {
		t.Helper()
		for _, inst := range []*harness{h, other} {
			start := time.Now()
			for {
				err := sendThrough(inst)
				if err != nil {
					wantError(t, err, status, code, "")
					t.Logf("%s: refused %v after the change", what, time.Since(start).Round(time.Millisecond))
					break
				}
				if time.Since(start) > 2*time.Second {
					t.Fatalf("%s: still accepted 2 s after the change", what)
				}
				time.Sleep(5 * time.Millisecond)
			}
		}
	}
	for _, inst := range []*harness{h, other} { // both servers now hold the key and the role
		if err := sendThrough(inst); err != nil {
			t.Fatal(err)
		}
	}
	byHand("UPDATE site_members SET role = 'viewer' WHERE user_id = (SELECT id FROM users WHERE email = $1)", email)
	until("demoted by hand", http.StatusForbidden, "forbidden")
	byHand("UPDATE site_members SET role = 'admin' WHERE user_id = (SELECT id FROM users WHERE email = $1)", email)
	for _, inst := range []*harness{h, other} {
		deadline := time.Now().Add(2 * time.Second)
		for sendThrough(inst) != nil {
			if time.Now().After(deadline) {
				t.Fatal("made admin again by hand: still refused after 2 s")
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	byHand("DELETE FROM api_keys WHERE id = $1", string(k.Key.ID))
	until("key deleted by hand", http.StatusUnauthorized, "unauthorized")
}

package pgstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/testenv"
)

// The database announces every change to credentials and access, made by
// hand or not, and nothing else: the keys' last use is written every 30 s
// and must not make every server forget its caches.
func TestAccessChangesAreAnnounced(t *testing.T) {
	url := testenv.Postgres(t)
	s := openWith(t, url, testKey(1))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	changes, listening := make(chan struct{}, 16), make(chan bool, 4)
	done := make(chan struct{})
	go func() {
		s.FollowAccessChanges(ctx, func() { changes <- struct{}{} }, func(l bool) { listening <- l })
		close(done)
	}()
	if !<-listening {
		t.Fatal("not listening")
	}
	<-changes // starting to listen counts as a change: what came before was not heard

	u, err := s.CreateUser(ctx, model.User{Email: "ada@example.com", Name: "Ada", PasswordHash: "h", Plan: model.PlanPro})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateSite(ctx, model.Site{ID: "site1", Domain: "example.com", Timezone: "UTC", BaseCurrency: "EUR"}, u.ID); err != nil {
		t.Fatal(err)
	}
	k, err := s.CreateKey(ctx, model.APIKey{ID: "key1", UserID: u.ID, Name: "k", Prefix: "sk_test_0123", Environment: "test",
		Scopes: model.AllScopes}, []byte("0123456789abcdef0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	drain(changes) // the owner's membership was announced

	db, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(context.Background())
	for _, c := range []struct {
		sql      string
		announce bool
	}{
		{"UPDATE api_keys SET last_used_at = now()", false},
		{"UPDATE users SET name = 'Ada L'", false},
		{"UPDATE api_keys SET scopes = '{stats:read}'", true},
		{"UPDATE api_keys SET revoked_at = now()", true},
		{"UPDATE users SET plan = 'free'", true},
		{"UPDATE site_members SET role = 'owner'", true},
		{"UPDATE sites SET domain = 'example.org'", true},
		{"DELETE FROM api_keys WHERE id = '" + string(k.ID) + "'", true},
		{"DELETE FROM users", true},
	} {
		if _, err := db.Exec(ctx, c.sql); err != nil {
			t.Fatalf("%s: %v", c.sql, err)
		}
		select {
		case <-changes:
			if !c.announce {
				t.Errorf("%s was announced", c.sql)
			}
			drain(changes)
		case <-time.After(300 * time.Millisecond):
			if c.announce {
				t.Errorf("%s was not announced", c.sql)
			}
		}
	}
	cancel()
	<-done
	if l := <-listening; l {
		t.Error("still listening after ctx ended")
	}
}

// drain empties ch after a short wait for what is still on its way.
func drain(ch chan struct{}) {
	for {
		select {
		case <-ch:
		case <-time.After(100 * time.Millisecond):
			return
		}
	}
}

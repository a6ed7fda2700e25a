package app_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/tally-analytics/tally/internal/testenv"
)

// A key revoked while Redis is out of reach stays revoked on every instance.
// Before, the revoking server could not bump the shared counter, so once
// Redis was back the other servers, following the unchanged counter again,
// took their cached copy of the key for current and let it in.
func TestRevocationDuringARedisOutage(t *testing.T) {
	cfg := testenv.Config(t)
	stores := proxyStores(t, cfg)
	h := newHarnessWith(t, cfg)
	other := h.secondInstance()
	ctx := context.Background()
	key := other.client(h.key)
	if _, err := key.Sites(ctx); err != nil { // the second server caches the key
		t.Fatal(err)
	}
	stores.redis.Down()
	if _, err := h.app.Accounts.RevokeKey(ctx, h.keyID); err != nil { // saved; Postgres announces it
		t.Errorf("revoking with Redis down: %v; want the key revoked", err)
	}
	// while Redis is down the second server does not trust its cache
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := key.Sites(ctx)
		if apiError(t, err).Status == http.StatusUnauthorized {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the revoked key still works on the second server with Redis down: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	stores.redis.Up()
	// once it follows the counter again, the key stays refused
	for end := time.Now().Add(3 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		_, err := key.Sites(ctx)
		wantError(t, err, http.StatusUnauthorized, "unauthorized", "")
		if t.Failed() {
			return
		}
	}
}

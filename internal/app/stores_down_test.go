package app_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/tally-analytics/tally/internal/faultproxy"
	"github.com/tally-analytics/tally/internal/testenv"
	"github.com/tally-analytics/tally/pkg/client"
)

// storeProxies puts a proxy in front of each store of cfg, so that a test
// can take one away.
type storeProxies struct{ pg, ch, redis *faultproxy.Proxy }

func proxyStores(t *testing.T, cfg *configT) storeProxies {
	t.Helper()
	pgURL, err := url.Parse(cfg.PostgresURL)
	if err != nil {
		t.Fatal(err)
	}
	rOpts, err := redis.ParseURL(cfg.RedisURL)
	if err != nil {
		t.Fatal(err)
	}
	p := storeProxies{pg: testenv.NewProxy(t, pgURL.Host), ch: testenv.NewProxy(t, cfg.ClickHouseAddr),
		redis: testenv.NewProxy(t, rOpts.Addr)}
	pgURL.Host = p.pg.Addr
	cfg.PostgresURL = pgURL.String()
	cfg.ClickHouseAddr = p.ch.Addr
	rURL, err := url.Parse(cfg.RedisURL)
	if err != nil {
		t.Fatal(err)
	}
	rURL.Host = p.redis.Addr
	cfg.RedisURL = rURL.String()
	return p
}

// A read whose store is down answers 503 service_unavailable with a
// Retry-After in the error envelope — never a 500, never an empty answer —
// and answers normally once the store is back.
func TestStoresDownAnswer503(t *testing.T) {
	cfg := testenv.Config(t)
	stores := proxyStores(t, cfg)
	h := newHarnessWith(t, cfg)
	c, site := h.client(h.key), string(h.siteID)
	ctx := context.Background()
	reads := map[string]func() error{
		"overview": func() error { _, err := c.Overview(ctx, statsParams(h)); return err },
		"realtime": func() error { _, err := c.Realtime(ctx, site); return err },
		"sites":    func() error { _, err := c.Sites(ctx); return err },
		"goals":    func() error { _, err := c.Goals(ctx, site); return err },
	}
	for name, read := range reads { // all well; this also caches the key
		if err := read(); err != nil {
			t.Fatalf("%s with every store up: %v", name, err)
		}
	}
	cases := []struct {
		store  string
		proxy  *faultproxy.Proxy
		broken []string // the reads that need the store
	}{
		{"Postgres", stores.pg, []string{"overview", "realtime", "sites", "goals"}},
		{"ClickHouse", stores.ch, []string{"overview"}},
		{"Redis", stores.redis, []string{"realtime"}},
	}
	for _, tc := range cases {
		tc.proxy.Down()
		for _, name := range tc.broken {
			err := reads[name]()
			var e *client.Error
			if !errors.As(err, &e) || e.Status != http.StatusServiceUnavailable || e.RetryAfter <= 0 || e.Code != "service_unavailable" {
				t.Errorf("%s with %s down: %v; want 503 service_unavailable with a Retry-After", name, tc.store, err)
			}
		}
		tc.proxy.Up()
		for _, name := range tc.broken {
			if err := reads[name](); err != nil {
				t.Errorf("%s once %s is back: %v", name, tc.store, err)
			}
		}
	}
}

package app_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/tally-analytics/tally/internal/testenv"
	"github.com/tally-analytics/tally/pkg/api"
)

// storeProxies puts a proxy in front of each store of cfg, so that a test
// can take one away.
type storeProxies struct{ pg, ch, redis *testenv.Proxy }

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

// get requests path with the key and returns the status, Retry-After and
// the error code of the body (if it is an error).
func (h *harness) get(t *testing.T, key, path string) (status int, retryAfter int, code string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, h.srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	var e api.Error
	_ = json.Unmarshal(body, &e)
	retryAfter, _ = strconv.Atoi(res.Header.Get("Retry-After"))
	return res.StatusCode, retryAfter, e.Error.Code
}

// A read whose store is down answers 503 service_unavailable with a
// Retry-After in the error envelope — never a 500, never an empty answer —
// and answers normally once the store is back.
func TestStoresDownAnswer503(t *testing.T) {
	cfg := testenv.Config(t)
	stores := proxyStores(t, cfg)
	h := newHarnessWith(t, cfg)
	site := string(h.siteID)
	reads := map[string]string{
		"overview": "/api/v1/stats/overview?site_id=" + site + "&date_from=2026-05-01&date_to=2026-05-07",
		"realtime": "/api/v1/stats/realtime?site_id=" + site,
		"sites":    "/api/v1/sites",
		"goals":    "/api/v1/goals?site_id=" + site,
	}
	for name, path := range reads { // all well; this also caches the key
		if status, _, code := h.get(t, h.key, path); status != http.StatusOK {
			t.Fatalf("%s with every store up: %d %s", name, status, code)
		}
	}
	cases := []struct {
		store  string
		proxy  *testenv.Proxy
		broken []string // the reads that need the store
	}{
		{"Postgres", stores.pg, []string{"overview", "realtime", "sites", "goals"}},
		{"ClickHouse", stores.ch, []string{"overview"}},
		{"Redis", stores.redis, []string{"realtime"}},
	}
	for _, c := range cases {
		c.proxy.Down()
		for _, name := range c.broken {
			status, retry, code := h.get(t, h.key, reads[name])
			if status != http.StatusServiceUnavailable || retry <= 0 || code != "service_unavailable" {
				t.Errorf("%s with %s down: %d, Retry-After %d, code %q; want 503, a Retry-After, service_unavailable",
					name, c.store, status, retry, code)
			}
		}
		c.proxy.Up()
		for _, name := range c.broken {
			if status, _, code := h.get(t, h.key, reads[name]); status != http.StatusOK {
				t.Errorf("%s once %s is back: %d %s", name, c.store, status, code)
			}
		}
	}
}

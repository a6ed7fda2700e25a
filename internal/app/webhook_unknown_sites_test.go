package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"testing"

	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/pkg/api"
)

// webhookAnswer is what a webhook delivery was answered.
type webhookAnswer struct {
	status int
	header http.Header
	code   string // the error envelope's, if any
	res    api.WebhookResponse
}

// deliverFrom posts a webhook to site as the client at addr (the harness
// trusts 127.0.0.1 as a proxy).
func deliverFrom(t *testing.T, h *harness, addr, site string, body []byte, header http.Header) webhookAnswer {
	t.Helper()
	header = header.Clone()
	if header == nil {
		header = http.Header{}
	}
	header.Set("X-Forwarded-For", addr)
	resp := sendWebhook(t, h, "provider_a", site, body, header)
	defer resp.Body.Close()
	var raw json.RawMessage
	if err := json.NewDecoder(resp.Body).Decode(&raw); err != nil {
		t.Fatalf("%s from %s: %d, body not JSON: %v", site, addr, resp.StatusCode, err)
	}
	a := webhookAnswer{status: resp.StatusCode, header: resp.Header}
	if resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(raw, &a.res); err != nil {
			t.Fatal(err)
		}
		return a
	}
	var e api.Error
	if err := json.Unmarshal(raw, &e); err != nil {
		t.Fatal(err)
	}
	a.code = e.Error.Code
	return a
}

// siteLookups reads tally_site_lookups_total{result} (0 before the first).
func siteLookups(t *testing.T, h *harness, result string) int {
	t.Helper()
	status, text := scrape(t, h, h.cfg.MetricsToken)
	if status != http.StatusOK {
		t.Fatalf("/metrics: %d", status)
	}
	m := regexp.MustCompile(`(?m)^tally_site_lookups_total\{result="` + result + `"\} ([0-9]+)$`).FindStringSubmatch(text)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// A client that makes up a site_id for every webhook costs Postgres one
// lookup per id up to 60 (the bound per address and instance); the 61st
// is refused with 429 and Retry-After, unlooked-up. Site ids found missing
// are answered from the instance's cache, to every address and past the
// bound too, with the unknown site's answer (401 unauthorized, as a bad
// signature). Another address keeps its own bound, and a real site's
// signed delivery from it passes; once that site is known to the
// instance, its deliveries from the address past the bound pass as well.
func TestWebhookUnknownSitesBounded(t *testing.T) {
	h := newHarnessWith(t, testenvConfigWith(t, func(c *configT) {
		c.TrustedProxies = []string{"127.0.0.1/32"}
		c.MetricsToken = "metrics-unknown-sites-token"
	}))
	ctx := context.Background()
	const secret = "whsec_test_unknown_sites_secret"
	if err := h.app.Accounts.SetProviderSecret(ctx, h.siteID, model.ProviderA, secret); err != nil {
		t.Fatal(err)
	}
	body := []byte(`{"id":"evt_unknown_sites","object":"event","type":"customer.created","livemode":true,"data":{"object":{}}}`)
	signed := webhookSigners["provider_a"](secret, body, h.clock.Now())
	const flooder, provider = "203.0.113.7", "198.51.100.4"
	madeUp := func(i int) string { return fmt.Sprintf("madeup%06d", i) }

	// (a) 60 made-up ids from one address: each looked up once, each the
	// unknown site's answer
	for i := range 60 {
		if a := deliverFrom(t, h, flooder, madeUp(i), body, signed); a.status != 401 || a.code != "unauthorized" {
			t.Fatalf("made-up id %d: %d %q, want 401 unauthorized", i+1, a.status, a.code)
		}
	}
	a := deliverFrom(t, h, flooder, madeUp(60), body, signed)
	// 60 a minute: a burst of 60, then one a second; the clock stands still
	if a.status != 429 || a.code != "rate_limit_exceeded" || a.header.Get("Retry-After") != "1" ||
		a.header.Get("X-RateLimit-Limit") != "60" || a.header.Get("X-RateLimit-Remaining") != "0" ||
		a.header.Get("X-RateLimit-Reset") != "60" {
		t.Errorf("the 61st made-up id: %d %q, Retry-After %q, X-RateLimit-Limit %q, -Remaining %q, -Reset %q; "+
			"want 429 rate_limit_exceeded, 1, 60, 0, 60", a.status, a.code, a.header.Get("Retry-After"),
			a.header.Get("X-RateLimit-Limit"), a.header.Get("X-RateLimit-Remaining"), a.header.Get("X-RateLimit-Reset"))
	}
	if n := siteLookups(t, h, "missing"); n != 60 {
		t.Errorf("Postgres looked up %d missing sites for 61 made-up ids, want 60", n)
	}

	// (b) an id found missing is answered from the cache: from the address
	// past its bound, and from another, without a lookup
	for _, addr := range []string{flooder, provider, provider, provider} {
		if a := deliverFrom(t, h, addr, madeUp(0), body, signed); a.status != 401 || a.code != "unauthorized" {
			t.Errorf("a missing id again from %s: %d %q, want 401 unauthorized", addr, a.status, a.code)
		}
	}
	if n := siteLookups(t, h, "missing"); n != 60 {
		t.Errorf("%d lookups of missing sites after 4 repeats of a cached one, want still 60", n)
	}

	// (c) the address past its bound is refused a site the instance does
	// not know yet, real or not; another address is not
	if a := deliverFrom(t, h, flooder, string(h.siteID), body, signed); a.status != 429 || a.code != "rate_limit_exceeded" {
		t.Errorf("a real site unknown to the instance, from the address past its bound: %d %q, want 429", a.status, a.code)
	}
	if a := deliverFrom(t, h, provider, madeUp(60), body, signed); a.status != 401 || a.code != "unauthorized" {
		t.Errorf("the refused id from another address: %d %q, want 401 unauthorized (looked up)", a.status, a.code)
	}
	if a := deliverFrom(t, h, provider, string(h.siteID), body, signed); a.status != 200 || !a.res.Received || !a.res.Ignored {
		t.Errorf("a real site's signed delivery from another address: %d %q %+v, want 200 received", a.status, a.code, a.res)
	}
	if missing, found := siteLookups(t, h, "missing"), siteLookups(t, h, "found"); missing != 61 || found != 1 {
		t.Errorf("lookups: %d missing, %d found; want 61 (the refused id, from the other address) and 1", missing, found)
	}
	// now the instance knows the site: the address past its bound is
	// answered, from the cache
	if a := deliverFrom(t, h, flooder, string(h.siteID), body, signed); a.status != 200 || !a.res.Received {
		t.Errorf("the real site, cached, from the address past its bound: %d %q %+v, want 200", a.status, a.code, a.res)
	}
	if found := siteLookups(t, h, "found"); found != 1 {
		t.Errorf("%d lookups of found sites, want still 1", found)
	}
}

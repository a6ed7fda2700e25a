package app_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tally-analytics/tally/internal/accounts"
	"github.com/tally-analytics/tally/internal/testenv"
	"github.com/tally-analytics/tally/pkg/api"
	"github.com/tally-analytics/tally/pkg/client"
)

// A load the site's exclusions keep out is answered as a stored one is
// (the image, its headers and the allowance's), so that nobody can probe
// what a site excludes; a load naming a site of another domain is that
// site's host_mismatch, whether the page is the url or the Referer.
//
// example.com excludes /admin/** (pages), *.staging.example.com (hosts)
// and 203.0.113.0/24 (addresses): of its 5 loads, /admin/users,
// pr-7.staging.example.com/pricing, /pricing from 203.0.113.50 and an
// event on /admin/news are excluded, /pricing from 198.51.100.1 stored.
// other.org: a url on example.com and, without a url, a Referer on
// example.com are refused; its own /x is stored.
//
// So: example.com 1 accepted, 4 excluded; other.org 1 accepted, 2 refused
// host_mismatch.
func TestPixelExclusionsAndOtherSites(t *testing.T) {
	cfg := testenv.Config(t)
	cfg.TrustedProxies = []string{"127.0.0.1/32"}
	h := newHarnessWith(t, cfg)
	ctx := context.Background()
	c := h.client(h.key)
	site := string(h.siteID)
	h.clock.Set(time.Date(2026, 11, 10, 12, 0, 0, 0, time.UTC))
	other, err := h.app.Accounts.CreateSite(ctx, accounts.NewSite{OwnerEmail: h.email, Domain: "other.org"})
	if err != nil {
		t.Fatal(err)
	}
	pages, addresses, hosts := []string{"/admin/**"}, []string{"203.0.113.0/24"}, []string{"*.staging.example.com"}
	if _, err := c.UpdateSite(ctx, site, api.SiteRequest{ExcludedPages: &pages, ExcludedAddresses: &addresses, ExcludedHosts: &hosts}); err != nil {
		t.Fatal(err)
	}
	visitor := []string{"X-Forwarded-For", "198.51.100.1"}

	for _, l := range []struct {
		what   string
		q      []string
		header []string
	}{
		{"an excluded page", []string{"site_id", site, "url", "https://example.com/admin/users"}, visitor},
		{"an excluded host", []string{"site_id", site, "url", "https://pr-7.staging.example.com/pricing"}, visitor},
		{"an excluded address", []string{"site_id", site, "url", "https://example.com/pricing"}, []string{"X-Forwarded-For", "203.0.113.50"}},
		{"an event on an excluded page", []string{"site_id", site, "url", "https://example.com/admin/news", "event_name", "Newsletter open"}, visitor},
		{"a stored pageview", []string{"site_id", site, "url", "https://example.com/pricing"}, visitor},
		{"the other site's own page", []string{"site_id", string(other.ID), "url", "https://other.org/x"}, visitor},
	} {
		a := loadPixel(t, h, http.MethodGet, pixelQuery(l.q...), l.header...)
		a.wantImage(t, l.what)
		if a.header.Get("X-RateLimit-Limit") == "" || a.header.Get("Content-Length") != "43" {
			t.Errorf("%s: headers %v, want the allowance's and Content-Length 43", l.what, a.header)
		}
	}
	loadPixel(t, h, http.MethodGet, pixelQuery("site_id", string(other.ID), "url", "https://example.com/a"), visitor...).
		wantError(t, "the other site, a url on example.com", http.StatusBadRequest, "invalid_request", "url")
	loadPixel(t, h, http.MethodGet, pixelQuery("site_id", string(other.ID)), append([]string{"Referer", "https://example.com/b"}, visitor...)...).
		wantError(t, "the other site, a Referer on example.com", http.StatusBadRequest, "invalid_request", "url")

	h.waitCount(2, "SELECT count() FROM events")
	if n := h.count("SELECT count() FROM events WHERE site_id = ? AND pathname = '/pricing' AND name = 'pageview'", site); n != 1 {
		t.Errorf("%d pageviews of example.com/pricing stored, want 1", n)
	}
	if n := h.count("SELECT count() FROM events WHERE site_id = ? AND pathname = '/x'", string(other.ID)); n != 1 {
		t.Errorf("%d pageviews of other.org/x stored, want 1", n)
	}
	if err := h.app.Ingest.FlushRefusals(ctx); err != nil {
		t.Fatal(err)
	}
	for _, s := range []struct {
		id       string
		want     api.IngestionCounts
		byReason map[string]int64
	}{
		{site, api.IngestionCounts{Accepted: 1, Excluded: 4}, map[string]int64{}},
		{string(other.ID), api.IngestionCounts{Accepted: 1, Refused: 2}, map[string]int64{"host_mismatch": 2}},
	} {
		health, err := c.Ingestion(ctx, client.StatsParams{SiteID: s.id, DateFrom: "2026-11-09", DateTo: "2026-11-10", Timezone: "UTC"})
		if err != nil {
			t.Fatal(err)
		}
		if health.Data.Totals != s.want {
			t.Errorf("%s: tracking health %+v, want %+v", s.id, health.Data.Totals, s.want)
		}
		byReason := map[string]int64{}
		for _, r := range health.Data.RefusedByReason {
			if r.Count != 0 {
				byReason[r.Reason] = r.Count
			}
		}
		if diff := cmp.Diff(s.byReason, byReason); diff != "" {
			t.Errorf("%s: refused by reason (-want +got):\n%s", s.id, diff)
		}
	}
}

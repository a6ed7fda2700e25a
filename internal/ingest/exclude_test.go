package ingest

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/exclusions"
	"github.com/tally-analytics/tally/internal/metrics"
	"github.com/tally-analytics/tally/internal/model"
)

// countingWriter counts the records written.
type countingWriter struct{ records int }

func (w *countingWriter) WriteMany(_ context.Context, recs []model.Record) error {
	w.records += len(recs)
	return nil
}

func shieldedSite() model.Site {
	site := model.Site{ID: "s1", Domain: "example.com", BaseCurrency: "USD", Exclusions: model.Exclusions{
		Pages: []string{"/admin/**"}, Addresses: []string{"203.0.113.0/24"}, Hosts: []string{"*.staging.example.com"}}}
	site.Shield = exclusions.Compile(site.Exclusions)
	return site
}

// An event that matches its site's exclusions gets an event id as a stored
// one does, is not written, and counts as excluded for the site; the others
// of the same batch are stored.
func TestExcludedEventsAreCountedNotStored(t *testing.T) {
	w := &countingWriter{}
	m := metrics.New()
	s := NewService(openSite{shieldedSite()}, newTestEnricher(t), w, nil, nil, nil,
		func() time.Time { return time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC) }, slog.New(slog.NewTextHandler(io.Discard, nil)), m)
	p := auth.Principal{UserID: "u1", Scopes: []model.Scope{model.ScopeEventsWrite}}
	ctx := context.Background()
	pv := func(url, ip string) Input {
		return Input{Pageview: true, SiteID: "s1", URL: url, UserAgent: chromeMac, IPAddress: ip, VisitorID: "v1"}
	}
	id, err := s.Track(ctx, p, pv("https://example.com/admin/users", ""))
	if err != nil || id == "" || w.records != 0 {
		t.Fatalf("excluded page: id %q, %v, %d records; want an id and nothing written", id, err, w.records)
	}
	res, err := s.TrackBatch(ctx, p, []Input{
		pv("https://example.com/pricing", "203.0.113.9"),    // excluded address
		pv("https://pr-1.staging.example.com/pricing", ""),  // excluded host
		pv("https://example.com/pricing", "198.51.100.9"),   // stored
		pv("https://EXAMPLE.com/admin", ""),                 // stored: /admin/** needs a segment
		pv("https://example.com/#/admin/x", "198.51.100.9"), // stored: no hash routes
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res {
		if r.Err != nil || r.EventID == "" {
			t.Errorf("batch event %d: %+v, want success", i, r)
		}
	}
	if w.records != 3 {
		t.Errorf("%d records written, want 3", w.records)
	}
	in := pv("https://example.com/pricing", "")
	in.Browser, in.AcceptsLanguage, in.URL = true, true, "https://example.com/admin/settings"
	in.Pageview, in.EventName = false, "Signup"
	if _, err := s.TrackBrowser(ctx, in, func(model.SiteID) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if w.records != 3 {
		t.Errorf("the tracker's /admin/settings was stored")
	}
	pending, _, _ := s.refusals.take()
	var excludedN uint64
	for k, n := range pending {
		if k.reason != model.Excluded || k.site != "s1" || k.caller != checked {
			t.Errorf("counted %+v: %d", k, n)
		}
		excludedN += n
	}
	if excludedN != 4 {
		t.Errorf("%d counted as excluded, want 4", excludedN)
	}
}

// On a site that records hash routes, the route is part of the page that
// is matched, as it is of the page stored: a pattern may name it.
func TestExcludedHashRoutes(t *testing.T) {
	site := model.Site{ID: "s1", Exclusions: model.Exclusions{Pages: []string{"/app#/admin/**", "/docs"}}}
	site.Shield = exclusions.Compile(site.Exclusions)
	for _, tc := range []struct {
		url        string
		hashRoutes bool
		want       bool
	}{
		{"https://example.com/app#/admin/users", true, true},
		{"https://example.com/app#/admin/users?tab=2", true, true},
		{"https://example.com/app#/settings", true, false},
		{"https://example.com/app", true, false},
		{"https://example.com/app#/admin/users", false, false}, // stored as /app
		{"https://example.com/docs#/intro", true, true},        // a path names its routes
		{"https://example.com/docs#/intro", false, true},
	} {
		ev, err := validate(Input{Pageview: true, SiteID: "s1", URL: tc.url, HashRoutes: tc.hashRoutes})
		if err != nil {
			t.Fatal(err)
		}
		if got := excluded(&site, &ev); got != tc.want {
			t.Errorf("%s (hash routes %v, page %s): excluded %v, want %v", tc.url, tc.hashRoutes, pathnameOf(&ev), got, tc.want)
		}
	}
}

// A host is matched as the excluded hosts are kept: in lower case and
// punycode, without the trailing dot of a fully qualified name.
func TestExcludedHostsAsKept(t *testing.T) {
	site := model.Site{ID: "s1", Exclusions: model.Exclusions{Hosts: []string{"bücher.example.com", "*.staging.example.com"}}}
	site.Shield = exclusions.Compile(site.Exclusions)
	for _, tc := range []struct {
		url  string
		want bool
	}{
		{"https://Bücher.Example.com./x", true},
		{"https://xn--bcher-kva.example.com/", true},
		{"https://shop.bücher.example.com/", false},
		{"https://PR-7.Staging.example.com./", true},
		{"https://example.com/", false},
	} {
		ev, err := validate(Input{Pageview: true, SiteID: "s1", URL: tc.url})
		if err != nil {
			t.Fatal(err)
		}
		if got := excluded(&site, &ev); got != tc.want {
			t.Errorf("%s: excluded %v, want %v", tc.url, got, tc.want)
		}
	}
}

// The check costs a site without exclusions nothing, and one with them no
// allocation for an event that does not match.
func TestExclusionCheckAllocatesNothing(t *testing.T) {
	ev, err := validate(Input{Pageview: true, SiteID: "s1", URL: "https://example.com/docs/page?utm_source=x", IPAddress: "81.2.69.1"})
	if err != nil {
		t.Fatal(err)
	}
	plain := model.Site{ID: "s1"}
	shielded := shieldedSite()
	for name, site := range map[string]*model.Site{"without": &plain, "with": &shielded} {
		if n := testing.AllocsPerRun(100, func() {
			if excluded(site, &ev) {
				t.Fatal("excluded")
			}
		}); n != 0 {
			t.Errorf("a site %s exclusions: %v allocations per event", name, n)
		}
	}
}

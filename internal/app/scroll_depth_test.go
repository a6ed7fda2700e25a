package app_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tally-analytics/tally/pkg/api"
	"github.com/tally-analytics/tally/pkg/client"
)

// The tracking script reports how far each page was scrolled (an
// "engagement" with scroll_depth); the pages report gives each page the
// mean, over its visitors who reported one, of the deepest each scrolled.
// Such a report is no event: it adds no pageview, event or session.
func TestScrollDepth(t *testing.T) {
	h := newHarness(t)
	site := string(h.siteID)
	h.clock.Set(time.Date(2026, 10, 5, 10, 0, 0, 0, time.UTC))
	send := func(visitor, event, path, extra string, status int, header ...string) {
		t.Helper()
		body := `{"site_id":"` + site + `","event_name":"` + event + `","url":"https://example.com` + path +
			`","visitor_id":"` + visitor + `"` + extra + `}`
		if resp := postE(t, h, body, header...); resp.StatusCode != status {
			t.Fatalf("%s: status %d, want %d", body, resp.StatusCode, status)
		}
	}
	const google = `,"referrer":"https://www.google.com/"`
	// v1 (from Google) scrolls /a to 40 % then 80 %, and /b to the end
	send("v1", "pageview", "/a", google, 202)
	send("v1", "engagement", "/a", `,"scroll_depth":40`, 202)
	send("v1", "engagement", "/a", `,"scroll_depth":80`, 202)
	send("v1", "pageview", "/b", "", 202)
	send("v1", "engagement", "/b", `,"scroll_depth":100`, 202)
	// v2 comes directly and scrolls /a to 20 %
	send("v2", "pageview", "/a", "", 202)
	send("v2", "engagement", "/a", `,"scroll_depth":20`, 202)
	// v3 (from Google) views /a and reports nothing: not part of the mean
	send("v3", "pageview", "/a", google, 202)
	// a bot's report is neither stored nor counted
	send("v4", "engagement", "/a", `,"scroll_depth":0`, 202, "Accept-Language", "")
	// a custom event may still be named engagement: without a scroll depth it is one
	send("v2", "engagement", "/a", `,"props":{"kind":"chat"}`, 202)

	for _, bad := range []struct{ name, event, extra string }{
		{"over 100 %", "engagement", `,"scroll_depth":101`},
		{"negative", "engagement", `,"scroll_depth":-1`},
		{"not whole", "engagement", `,"scroll_depth":50.5`},
		{"a string", "engagement", `,"scroll_depth":"50"`},
		{"another name", "pageview", `,"scroll_depth":50`},
		{"with props", "engagement", `,"scroll_depth":50,"props":{"a":"b"}`},
	} {
		t.Run(bad.name, func(t *testing.T) { send("v1", bad.event, "/a", bad.extra, http.StatusBadRequest) })
	}

	h.waitCount(4, "SELECT count() FROM engagements WHERE site_id = ?", site)
	h.waitCount(5, "SELECT count() FROM events WHERE site_id = ?", site)
	if n := h.count("SELECT count() FROM events WHERE site_id = ? AND name = 'engagement'", site); n != 1 {
		t.Errorf("%d custom events named engagement, want the one without a scroll depth", n)
	}
	if n := h.count("SELECT toUInt64(sum(sign)) FROM sessions WHERE site_id = ?", site); n != 3 {
		t.Errorf("%d sessions, want 3 (v1, v2, v3): a scroll depth starts none", n)
	}

	c := h.client(h.key)
	depths := func(p client.StatsParams) map[string]*int64 { t.Helper(); return scrollDepths(t, c, p, nil) }
	check := func(name string, got map[string]*int64, want map[string]int64) {
		t.Helper()
		if len(got) != len(want) {
			t.Errorf("%s: pages %v, want %v", name, got, want)
		}
		for path, w := range want {
			if d := got[path]; d == nil {
				t.Errorf("%s: no scroll depth of %s, want %d", name, path, w)
			} else if *d != w {
				t.Errorf("%s: scroll depth of %s = %d, want %d", name, path, *d, w)
			}
		}
	}
	p := client.StatsParams{SiteID: site, DateFrom: "2026-10-04", DateTo: "2026-10-06"}
	// /a: v1's deepest 80 and v2's 20, a mean of 50 (v3 reported none, the
	// bot is not stored); /b: v1's 100
	check("all visitors", depths(p), map[string]int64{"/a": 50, "/b": 100})
	// from Google: /a is v1's 80 alone (v3 reported none); /b, in v1's visit
	// from Google, 100
	p.Source = "Google"
	check("from Google", depths(p), map[string]int64{"/a": 80, "/b": 100})
	// direct: v2's /a only
	p.Source = "Direct / None"
	check("direct", depths(p), map[string]int64{"/a": 20})

	// the query API v2 has them by event:page: /a's 3 visitors (v2's custom
	// event on it too) at 50 %, /b's one at 100 %; from Google, v1 and v3
	// on /a at 80 %
	for _, tc := range []struct {
		name    string
		filters []any
		want    []api.QueryResult
	}{
		{"all", nil, []api.QueryResult{{Metrics: []float64{3, 50}, Dimensions: []string{"/a"}}, {Metrics: []float64{1, 100}, Dimensions: []string{"/b"}}}},
		{"from Google", []any{[]any{"is", "visit:source", []string{"Google"}}},
			[]api.QueryResult{{Metrics: []float64{2, 80}, Dimensions: []string{"/a"}}, {Metrics: []float64{1, 100}, Dimensions: []string{"/b"}}}},
	} {
		res, err := c.Query(context.Background(), api.QueryRequest{SiteID: site, DateRange: []string{"2026-10-04", "2026-10-06"},
			Metrics: []string{"visitors", "scroll_depth"}, Dimensions: []string{"event:page"}, Filters: tc.filters})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tc.want, res.Results); diff != "" {
			t.Errorf("v2 scroll depths, %s (-want +got):\n%s", tc.name, diff)
		}
	}

	// the dashboard's pages card shows them as a column
	w := newWebUser(t, h)
	w.login(h.email)
	_, _, html := w.do(http.MethodGet, "/sites/"+site+"/cards/pages?range=custom&from=2026-10-04&to=2026-10-06", nil)
	for _, cell := range []string{`data-col="scroll_depth" data-value="50">50%`, `data-col="scroll_depth" data-value="100">100%`, `<th`} {
		if !strings.Contains(html, cell) {
			t.Errorf("the pages card lacks %s:\n%s", cell, html)
		}
	}
	if !strings.Contains(html, "Scroll depth") {
		t.Error("the pages card has no Scroll depth column")
	}
}

// scrollDepths is the pages report's scroll depth of each page, each of
// its rows given to row as well when row is not nil.
func scrollDepths(t *testing.T, c *client.Client, p client.StatsParams, row func(api.Page)) map[string]*int64 {
	t.Helper()
	res, err := c.Pages(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]*int64{}
	for _, pg := range res.Data.Pages {
		m[pg.Pathname] = pg.ScrollDepth
		if row != nil {
			row(pg)
		}
	}
	return m
}

// A page's scroll depth is no event in the tracking health either: the
// report of a page on another host is refused (400), as its pageview is,
// but only the pageview counts as a refused event.
func TestScrollDepthRefusalsCountOnce(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	site := string(h.siteID)
	h.clock.Set(time.Date(2026, 10, 6, 10, 0, 0, 0, time.UTC))
	for _, tc := range []struct {
		host, event, extra string
		status             int
	}{
		{"example.com", "pageview", "", http.StatusAccepted},
		{"example.com", "engagement", `,"scroll_depth":70`, http.StatusAccepted},
		{"elsewhere.example", "pageview", "", http.StatusBadRequest},
		{"elsewhere.example", "engagement", `,"scroll_depth":70`, http.StatusBadRequest},
	} {
		body := `{"site_id":"` + site + `","event_name":"` + tc.event + `","url":"https://` + tc.host + `/a","visitor_id":"v1"` + tc.extra + `}`
		if resp := postE(t, h, body); resp.StatusCode != tc.status {
			t.Fatalf("%s: status %d, want %d", body, resp.StatusCode, tc.status)
		}
	}
	h.waitCount(1, "SELECT count() FROM engagements WHERE site_id = ?", site)
	h.waitCount(1, "SELECT count() FROM events WHERE site_id = ?", site)
	if err := h.app.Ingest.FlushRefusals(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := h.client(h.key).Ingestion(ctx, client.StatsParams{SiteID: site, DateFrom: "2026-10-05", DateTo: "2026-10-06", Timezone: "UTC"})
	if err != nil {
		t.Fatal(err)
	}
	if want := (api.IngestionCounts{Accepted: 1, Refused: 1}); got.Data.Totals != want {
		t.Errorf("tracking health %+v, want %+v: one pageview counted, one refused, no scroll depth", got.Data.Totals, want)
	}
}

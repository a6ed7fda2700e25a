package app_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tally-analytics/tally/pkg/api"
	"github.com/tally-analytics/tally/pkg/client"
)

// The overview's changes compare the figures as they are, not as rounded
// for show. June 6–7: 6 sessions, one a bounce (16.67 %, shown 16.7), the
// five others of two pageviews 12, 12, 12, 12 and 13 s apart (61 s / 6 =
// 10.17 s, shown 10.2). June 8–9: 3 sessions, one a bounce (33.33 %, shown
// 33.3), the two others 30 and 31 s (61 s / 3 = 20.33 s, shown 20.3). The
// bounce rate rose by 16.67 points, shown 16.7, not the 33.3 - 16.7 = 16.6
// of the rounded rates; the mean visit doubled: +100 %, not the
// (20.3 - 10.2) / 10.2 = +99.0 % of the rounded durations.
func TestOverviewChangeFromExactFigures(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	c := h.client(h.key)
	site := string(h.siteID)
	sent := 0
	visit := func(day int, visitor string, seconds int) {
		t.Helper()
		start := time.Date(2026, 6, day, 10, 0, 0, 0, time.UTC)
		at := []time.Time{start}
		if seconds > 0 {
			at = append(at, start.Add(time.Duration(seconds)*time.Second))
		}
		for i, ts := range at {
			h.clock.Set(ts)
			url := "https://example.com/"
			if i > 0 {
				url = "https://example.com/pricing"
			}
			if _, err := c.Pageview(ctx, api.PageviewRequest{SiteID: site, URL: url, UserAgent: chromeUA, VisitorID: visitor}); err != nil {
				t.Fatal(err)
			}
			sent++
		}
	}
	for i, seconds := range []int{0, 12, 12, 12, 12, 13} {
		visit(6, string(rune('a'+i))+"-prev", seconds)
	}
	for i, seconds := range []int{0, 30, 31} {
		visit(8, string(rune('a'+i))+"-cur", seconds)
	}
	h.waitCount(int64(sent), "SELECT count() FROM events WHERE site_id = ?", site)
	h.waitCount(9, "SELECT toUInt64(sum(sign)) FROM sessions WHERE site_id = ?", site)

	res, err := c.Overview(ctx, client.StatsParams{SiteID: site, DateFrom: "2026-06-08", DateTo: "2026-06-09", Timezone: "UTC", Compare: true})
	if err != nil {
		t.Fatal(err)
	}
	f := func(x float64) *float64 { return &x }
	// 5 pageviews in 3 visits: 1.67 a visit
	want := api.Metrics{Visitors: 3, Visits: 3, Pageviews: 5, ViewsPerVisit: 1.67, BounceRate: 33.3, VisitDuration: 20.3}
	if diff := cmp.Diff(want, res.Data.Metrics); diff != "" {
		t.Errorf("metrics (-want +got):\n%s", diff)
	}
	cmpr := res.Data.Comparison
	if cmpr == nil {
		t.Fatal("no comparison")
	}
	// 11 pageviews in 6 visits: 1.83 a visit
	wantPrev := api.Metrics{Visitors: 6, Visits: 6, Pageviews: 11, ViewsPerVisit: 1.83, BounceRate: 16.7, VisitDuration: 10.2}
	if diff := cmp.Diff(wantPrev, cmpr.Metrics); diff != "" {
		t.Errorf("previous metrics (-want +got):\n%s", diff)
	}
	// visitors and visits (3-6)/6 = -50 %, pageviews (5-11)/11 = -54.5 %; views
	// per visit (5/3 - 11/6) / (11/6) = -1/11 = -9.1 %, not the
	// (1.67 - 1.83) / 1.83 = -8.7 % of the rounded figures
	wantChange := api.Change{Visitors: f(-50), Visits: f(-50), Pageviews: f(-54.5), ViewsPerVisit: f(-9.1), BounceRate: 16.7,
		VisitDuration: f(100)}
	if diff := cmp.Diff(wantChange, cmpr.Change); diff != "" {
		t.Errorf("change (-want +got):\n%s", diff)
	}
}

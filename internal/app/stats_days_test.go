package app_test

import (
	"context"
	"testing"
	"time"

	"github.com/tally-analytics/tally/internal/accounts"
	"github.com/tally-analytics/tally/pkg/api"
	"github.com/tally-analytics/tally/pkg/client"
)

// A site in America/Santiago, where the clocks jump from Sep 5 24:00 (-04)
// to Sep 6 01:00 (-03) in 2026: Sep 6 has no midnight and begins at 04:00
// UTC. A pageview at 03:30 UTC is Sep 5's, 23:30 there; the reports over
// the change answer (the overview's and the daily series' too), and count it
// on its day.
func TestReportsOverASkippedMidnight(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	site, err := h.app.Accounts.CreateSite(ctx, accounts.NewSite{OwnerEmail: h.email, Domain: "cl.example.com", Timezone: "America/Santiago"})
	if err != nil {
		t.Fatal(err)
	}
	h.clock.Set(time.Date(2026, 9, 6, 3, 30, 0, 0, time.UTC))
	c := h.client(h.key)
	if _, err := c.Pageview(ctx, api.PageviewRequest{SiteID: string(site.ID), URL: "https://cl.example.com/late",
		UserAgent: fixtureUAs[0].ua, VisitorID: "v1"}); err != nil {
		t.Fatal(err)
	}
	h.waitCount(1, "SELECT count() FROM events WHERE site_id = ?", string(site.ID))
	for _, tc := range []struct {
		from, to string
		want     int64
	}{{"2026-09-06", "2026-09-07", 0}, {"2026-09-04", "2026-09-05", 1}} {
		p := client.StatsParams{SiteID: string(site.ID), DateFrom: tc.from, DateTo: tc.to}
		qctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		pages, err := c.Pages(qctx, p)
		if err != nil {
			t.Fatalf("pages of %s to %s: %v", tc.from, tc.to, err)
		}
		var pageviews int64
		for _, row := range pages.Data.Pages {
			pageviews += row.Pageviews
		}
		overview, err := c.Overview(qctx, p)
		cancel()
		if err != nil {
			t.Fatalf("overview of %s to %s: %v", tc.from, tc.to, err)
		}
		if pageviews != tc.want || overview.Data.Metrics.Pageviews != tc.want {
			t.Errorf("%s to %s: pages count %d pageviews, the overview %d; want %d", tc.from, tc.to, pageviews,
				overview.Data.Metrics.Pageviews, tc.want)
		}
	}
}

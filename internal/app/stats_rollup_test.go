package app_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tally-analytics/tally/pkg/client"
)

// The pages reports read the daily per-page rollups when a range has no
// filters. On the scenario they must answer what reading every event answers:
// in UTC (whole days only), in time zones whose days start inside UTC days
// (the partial days come from events), for every page of the list, and over
// ranges that cut erin's session at midnight UTC.
func TestPageRollupsMatchEvents(t *testing.T) {
	h, rolled, site := scenarioSite(t)
	cfg := *h.cfg
	cfg.WALDir = t.TempDir()
	cfg.PageRollups = false
	events := startApp(t, &cfg, h.clock).client(h.key)
	ctx := context.Background()

	var cases []client.StatsParams
	for _, tz := range []string{"UTC", "", "Asia/Tokyo", "Asia/Kolkata", "Pacific/Chatham"} { // "" = the site's (New York)
		for _, r := range [][2]string{{"2026-05-01", "2026-05-07"}, {"2026-04-20", "2026-05-31"}, {"2026-05-04", "2026-05-05"}, {"2026-05-02", "2026-05-03"}} {
			cases = append(cases, client.StatsParams{SiteID: site, DateFrom: r[0], DateTo: r[1], Timezone: tz})
		}
	}
	paged := client.StatsParams{SiteID: site, DateFrom: "2026-05-01", DateTo: "2026-05-07", Timezone: "Asia/Tokyo"}
	for _, page := range []int{1, 2, 3, 4} {
		paged.Limit, paged.Page = 2, page
		cases = append(cases, paged)
	}
	for _, p := range cases {
		name := fmt.Sprintf("%s..%s %q limit %d page %d", p.DateFrom, p.DateTo, p.Timezone, p.Limit, p.Page)
		sameAnswer(t, name+": pages", func(c *client.Client) (any, error) { return c.Pages(ctx, p) }, events, rolled)
		if p.Page <= 1 {
			sameAnswer(t, name+": exit pages", func(c *client.Client) (any, error) { return c.ExitPages(ctx, p) }, events, rolled)
		}
	}
	// the comparison means something only if the scenario's pages are in the
	// rollups: 15 pageviews (13 in the week, ivy's and hank's before it)
	if n := h.count("SELECT sum(pageviews) FROM page_days WHERE site_key = cityHash64(?)", site); n != 15 {
		t.Errorf("page_days holds %d pageviews of the scenario, want 15", n)
	}
}

// sameAnswer asks both clients the same report and reports any difference.
func sameAnswer(t *testing.T, name string, report func(*client.Client) (any, error), events, rolled *client.Client) {
	t.Helper()
	want, err := report(events)
	if err != nil {
		t.Fatalf("%s from events: %v", name, err)
	}
	got, err := report(rolled)
	if err != nil {
		t.Fatalf("%s from rollups: %v", name, err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s (-events +rollups):\n%s", name, diff)
	}
}

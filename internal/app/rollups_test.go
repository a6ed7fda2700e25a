package app_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/tally-analytics/tally/pkg/api"
	"github.com/tally-analytics/tally/pkg/client"
)

// Every report reads the rollups (clickhouse/0008_rollups.sql, 0009, 0010's
// visitor blocks) for the whole UTC days or quarters of a range and raw rows
// for its edges. On the scenario each must answer exactly what raw rows
// answer (TALLY_ROLLUPS=false):
// over ranges that cut erin's session at midnight UTC, in UTC, New York,
// Tokyo, Kolkata (+5:30) and Chatham (+12:45), with the comparison period,
// and with filters a rollup holds (device, country, region) or does not.
func TestRollupsMatchRawRows(t *testing.T) {
	h, rolled, site := scenarioSite(t)
	cfg := *h.cfg
	cfg.WALDir = t.TempDir()
	cfg.Rollups = false
	raw := startApp(t, &cfg, h.clock).client(h.key)
	ctx := context.Background()

	// the comparison means something only if the scenario is in the rollups:
	// 15 pageviews and 4 custom events of 9 visitors; 10 sessions, 5 of them bounces
	for query, want := range map[string]int64{
		"SELECT sum(pageview_count) FROM site_quarters WHERE site_key = cityHash64(?)":                                15,
		"SELECT sum(event_count) FROM site_quarters WHERE site_key = cityHash64(?)":                                   19,
		"SELECT uniqCombinedMerge(17)(visitors) FROM site_quarters WHERE site_key = cityHash64(?)":                    9,
		"SELECT sum(pageview_count) FROM site_days WHERE site_key = cityHash64(?)":                                    15,
		"SELECT uniqCombinedMerge(17)(visitors) FROM site_days WHERE site_key = cityHash64(?)":                        9,
		"SELECT uniqCombinedMerge(17)(visitors) FROM device_days_blocks WHERE site_key = cityHash64(?) AND level = 4": 9,
		"SELECT toUInt64(sum(sessions)) FROM session_quarters WHERE site_key = cityHash64(?)":                         10,
		"SELECT toUInt64(sum(bounces)) FROM source_days WHERE site_key = cityHash64(?)":                               5,
		"SELECT sum(event_count) FROM bot_days WHERE site_key = cityHash64(?)":                                        4,
	} {
		if n := h.count(query, site); n != want {
			t.Errorf("%s: %d, want %d", query, n, want)
		}
	}

	// goals of both kinds, of one page and of patterns, one never reached
	for _, g := range []api.GoalRequest{
		{GoalName: "Pricing", GoalType: "pageview", PagePath: "/pricing"},
		{GoalName: "Signup page", GoalType: "pageview", PagePath: "/sign*"},
		{GoalName: "Any page", GoalType: "pageview", PagePath: "/**"},
		{GoalName: "Nowhere", GoalType: "pageview", PagePath: "/nowhere/**"},
		{GoalName: "Signed up", GoalType: "custom_event", EventName: "signup"},
		{GoalName: "Downloaded", GoalType: "custom_event", EventName: "download"},
		{GoalName: "Bought", GoalType: "custom_event", EventName: "purchase"},
	} {
		g.SiteID = site
		if _, err := rolled.CreateGoal(ctx, g); err != nil {
			t.Fatal(err)
		}
	}

	type report struct {
		name string
		ask  func(c *client.Client, p client.StatsParams) (any, error)
	}
	reports := []report{
		{"overview", func(c *client.Client, p client.StatsParams) (any, error) { p.Compare = true; return c.Overview(ctx, p) }},
		{"sources", func(c *client.Client, p client.StatsParams) (any, error) { return c.Sources(ctx, p) }},
		{"pages", func(c *client.Client, p client.StatsParams) (any, error) { return c.Pages(ctx, p) }},
		{"entry pages", func(c *client.Client, p client.StatsParams) (any, error) { return c.EntryPages(ctx, p) }},
		{"exit pages", func(c *client.Client, p client.StatsParams) (any, error) { return c.ExitPages(ctx, p) }},
		{"devices", func(c *client.Client, p client.StatsParams) (any, error) { return c.Devices(ctx, p) }},
		{"browsers", func(c *client.Client, p client.StatsParams) (any, error) { return c.Browsers(ctx, p) }},
		{"mobile browsers", func(c *client.Client, p client.StatsParams) (any, error) {
			p.Device = "Mobile"
			return c.Browsers(ctx, p)
		}},
		{"operating systems", func(c *client.Client, p client.StatsParams) (any, error) { return c.OperatingSystems(ctx, p) }},
		{"desktop systems", func(c *client.Client, p client.StatsParams) (any, error) {
			p.Device = "Desktop"
			return c.OperatingSystems(ctx, p)
		}},
		{"countries", func(c *client.Client, p client.StatsParams) (any, error) { return c.Countries(ctx, p) }},
		{"regions of GB", func(c *client.Client, p client.StatsParams) (any, error) { p.Country = "GB"; return c.Regions(ctx, p) }},
		{"regions of US", func(c *client.Client, p client.StatsParams) (any, error) { p.Country = "US"; return c.Regions(ctx, p) }},
		{"cities of GB-ENG", func(c *client.Client, p client.StatsParams) (any, error) {
			p.Region = "GB-ENG"
			return c.Cities(ctx, p)
		}},
		{"cities of US-CA", func(c *client.Client, p client.StatsParams) (any, error) { p.Region = "US-CA"; return c.Cities(ctx, p) }},
		{"events", func(c *client.Client, p client.StatsParams) (any, error) { return c.Events(ctx, p) }},
		{"signups", func(c *client.Client, p client.StatsParams) (any, error) {
			p.EventName = "signup"
			return c.Events(ctx, p)
		}},
		{"conversions", func(c *client.Client, p client.StatsParams) (any, error) { return c.Conversions(ctx, p) }},
		{"ingestion", func(c *client.Client, p client.StatsParams) (any, error) { return c.Ingestion(ctx, p) }},
		// filters no rollup holds read raw rows either way
		{"conversions on mobiles", func(c *client.Client, p client.StatsParams) (any, error) {
			p.Device = "Mobile"
			return c.Conversions(ctx, p)
		}},
		{"devices from Google", func(c *client.Client, p client.StatsParams) (any, error) {
			p.Source = "Google"
			return c.Devices(ctx, p)
		}},
		{"overview of mobiles", func(c *client.Client, p client.StatsParams) (any, error) {
			p.Device = "Mobile"
			return c.Overview(ctx, p)
		}},
	}
	for _, by := range []string{"", "utm_source", "utm_medium", "utm_content"} {
		reports = append(reports, report{"campaigns by " + by, func(c *client.Client, p client.StatsParams) (any, error) {
			p.By = by
			return c.Campaigns(ctx, p)
		}})
	}
	for _, tz := range []string{"UTC", "", "Asia/Tokyo", "Asia/Kolkata", "Pacific/Chatham"} { // "" = the site's (New York)
		for _, r := range [][2]string{{"2026-05-01", "2026-05-07"}, {"2026-04-20", "2026-05-31"}, {"2026-05-04", "2026-05-05"}, {"2026-05-02", "2026-05-03"}} {
			p := client.StatsParams{SiteID: site, DateFrom: r[0], DateTo: r[1], Timezone: tz}
			for _, rep := range reports {
				name := fmt.Sprintf("%s..%s %q: %s", r[0], r[1], tz, rep.name)
				sameAnswer(t, name, func(c *client.Client) (any, error) { return rep.ask(c, p) }, raw, rolled)
			}
		}
	}
}

package app_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/tally-analytics/tally/pkg/api"
	"github.com/tally-analytics/tally/pkg/client"
)

// On a site that records hash routes, goals and funnels' page steps name
// pages as excluded pages do (package pagepattern): a path without # is the
// path whatever its route, a route follows one #, and no wildcard reaches
// across it. The tracker sends, on June 10 (UTC), with data-hash:
//
//	v1: /app#/settings at 12:00:00, /app#/checkout/done at 12:00:10
//	v2: /app#/checkout/done       v3: /app       v4: /apps#/x       v5: /blog/a
//
// So the goals count (completions by visitors): /app 4 by 3 (v1 twice, v2,
// v3); /app#/checkout/** 2 by 2 (v1, v2); /app# 1 by 1 (v3: no route);
// /app* 1 by 1 (v4: its path is /apps); /* 5 by 4 (every path of one
// segment: /app and /apps); /blog/** 1 by 1. The funnel /app →
// /app#/checkout/** starts with v1, v2, v3 and goes on with v1 only (v2's
// one event completes one step). The same on the rollups and on the events
// (a filter every event meets: the rollups hold no browsers), and for the
// funnel on events_by_path and on events.
func TestGoalsAndFunnelsOnHashRoutes(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	c := h.client(h.key)
	site := string(h.siteID)
	send := func(second int, visitor, path string) {
		t.Helper()
		h.clock.Set(time.Date(2026, 6, 10, 12, 0, second, 0, time.UTC))
		b, _ := json.Marshal(api.TrackerEvent{SiteID: site, EventName: "pageview", URL: "https://example.com" + path,
			VisitorID: visitor, HashRoutes: true})
		if resp := postE(t, h, string(b)); resp.StatusCode != http.StatusAccepted {
			t.Fatalf("/e %s: %d, want 202", path, resp.StatusCode)
		}
	}
	send(0, "v1", "/app#/settings")
	send(0, "v2", "/app#/checkout/done")
	send(0, "v3", "/app")
	send(0, "v4", "/apps#/x")
	send(0, "v5", "/blog/a")
	send(10, "v1", "/app#/checkout/done")
	h.waitCount(6, "SELECT count() FROM events WHERE site_id = ?", site)
	if n := h.count("SELECT count() FROM events WHERE site_id = ? AND pathname IN ('/app#/settings', '/app#/checkout/done', '/app', '/apps#/x')",
		site); n != 5 {
		t.Fatalf("%d events on the hash routes' pages, want 5", n)
	}

	want := map[string][2]int64{"/app": {4, 3}, "/app#/checkout/**": {2, 2}, "/app#": {1, 1}, "/app*": {1, 1}, "/*": {5, 4}, "/blog/**": {1, 1}}
	for pattern := range want {
		if _, err := c.CreateGoal(ctx, api.GoalRequest{SiteID: site, GoalName: pattern, GoalType: "pageview", PagePath: pattern}); err != nil {
			t.Fatalf("goal %s: %v", pattern, err)
		}
	}
	funnel, err := c.CreateFunnel(ctx, api.FunnelRequest{SiteID: site, Name: "Checkout", Steps: []api.FunnelStep{
		{Type: "pageview", PagePath: "/app"}, {Type: "pageview", PagePath: "/app#/checkout/**"}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, browser := range []string{"", "Chrome"} {
		p := client.StatsParams{SiteID: site, DateFrom: "2026-06-10", DateTo: "2026-06-11", Timezone: "UTC", Browser: browser}
		res, err := c.Conversions(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string][2]int64{}
		for _, g := range res.Data {
			got[g.GoalName] = [2]int64{g.TotalConversions, g.UniqueVisitors}
		}
		for pattern, w := range want {
			if got[pattern] != w {
				t.Errorf("browser %q: goal %s: %d completions by %d visitors, want %d by %d", browser, pattern, got[pattern][0], got[pattern][1], w[0], w[1])
			}
		}
		p.FunnelID = funnel.FunnelID
		report, err := c.FunnelReport(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		if s := report.Data.Steps; len(s) != 2 || s[0].Visitors != 3 || s[1].Visitors != 1 {
			t.Errorf("browser %q: funnel %+v, want 3 visitors, then 1", browser, s)
		}
	}
}

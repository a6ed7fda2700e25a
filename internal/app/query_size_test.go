package app_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tally-analytics/tally/internal/accounts"
	"github.com/tally-analytics/tally/internal/goals"
	"github.com/tally-analytics/tally/pkg/api"
	"github.com/tally-analytics/tally/pkg/client"
)

// No list a client can make long makes a query too long for ClickHouse.
// Before, ~100 distinct long paths sent anonymously made a non-UTC site's
// pages report answer 500 ("Max query size exceeded": the page of paths was
// written into the query as literals), and ~80 long goal paths did the same
// to conversions. Now 1,000 long paths and 100 long goals answer 200 with
// every row, and a site has at most 100 goals.
func TestQuerySizeIsNotTheClients(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	site, err := h.app.Accounts.CreateSite(ctx, accounts.NewSite{OwnerEmail: h.email, Domain: "long.example", Timezone: "Asia/Kolkata"})
	if err != nil {
		t.Fatal(err)
	}
	c := h.client(h.key)
	h.clock.Set(time.Date(2026, 10, 5, 8, 0, 0, 0, time.UTC))                                              // 13:30 in Kolkata
	path := func(i int) string { return fmt.Sprintf("/p/%04d/", i) + strings.Repeat("long-segment-", 75) } // 981 bytes
	const pages = 1000
	for from := 0; from < pages; from += 250 {
		var batch []api.CustomEventRequest
		for i := from; i < from+250; i++ {
			batch = append(batch, api.CustomEventRequest{PageviewRequest: api.PageviewRequest{SiteID: string(site.ID),
				URL: "https://long.example" + path(i), VisitorID: fmt.Sprintf("v%d", i), UserAgent: chromeUA}})
		}
		if _, err := c.Batch(ctx, batch); err != nil {
			t.Fatal(err)
		}
	}
	h.waitCount(pages, "SELECT count() FROM events WHERE site_id = ?", string(site.ID))
	p := client.StatsParams{SiteID: string(site.ID), DateFrom: "2026-10-04", DateTo: "2026-10-06", Limit: pages}
	res, err := c.Pages(ctx, p)
	if err != nil {
		t.Fatalf("pages of %d long paths: %v", pages, err)
	}
	if len(res.Data.Pages) != pages {
		t.Fatalf("%d pages listed, want %d", len(res.Data.Pages), pages)
	}
	for _, pg := range res.Data.Pages {
		if pg.Pageviews != 1 || pg.Visitors != 1 || !strings.HasPrefix(pg.Pathname, "/p/") {
			t.Fatalf("page %.20s…: %d pageviews, %d visitors; want 1 and 1", pg.Pathname, pg.Pageviews, pg.Visitors)
		}
	}

	// 100 goals on long paths: one conversion each
	for i := range goals.MaxPerSite {
		if _, err := c.CreateGoal(ctx, api.GoalRequest{SiteID: string(site.ID), GoalName: fmt.Sprintf("G%d", i),
			GoalType: "pageview", PagePath: path(i)}); err != nil {
			t.Fatalf("goal %d: %v", i, err)
		}
	}
	_, err = c.CreateGoal(ctx, api.GoalRequest{SiteID: string(site.ID), GoalName: "one more", GoalType: "pageview", PagePath: "/more"})
	wantError(t, err, http.StatusConflict, "too_many_goals", "site_id")
	conv, err := c.Conversions(ctx, p)
	if err != nil {
		t.Fatalf("conversions of %d long goals: %v", goals.MaxPerSite, err)
	}
	if len(conv.Data) != goals.MaxPerSite || conv.Meta.TotalUniqueVisitors != pages {
		t.Fatalf("%d goals, %d visitors; want %d and %d", len(conv.Data), conv.Meta.TotalUniqueVisitors, goals.MaxPerSite, pages)
	}
	for _, g := range conv.Data {
		if g.TotalConversions != 1 || g.UniqueVisitors != 1 {
			t.Errorf("goal %s: %d conversions by %d visitors, want 1 by 1", g.GoalName, g.TotalConversions, g.UniqueVisitors)
		}
	}
}

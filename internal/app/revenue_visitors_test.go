package app_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tally-analytics/tally/pkg/api"
	"github.com/tally-analytics/tally/pkg/client"
)

// A payment sent without a visitor is nobody's: its event (it names one)
// counts as an event and a conversion, never as a visitor. June 3: A and B
// view a page; two anonymous payments of 10.00 USD name the event
// Subscription, on June 3 and June 4. Over June 1–7 the site has 2
// visitors (A, B), the event 2 completions by 0 visitors: a conversion
// rate of 2 ÷ 2 = 100 %, 0 % of the visitors; the revenue report 2
// visitors and no paying visitor. Each report asked of the rollups and of
// the raw rows, over whole UTC days and in Kolkata (+5:30), whose days
// read quarters and raw rows at their edges.
func TestAnonymousPaymentIsNoVisitor(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	c := h.client(h.key)
	site := string(h.siteID)
	for i, v := range []string{"A", "B"} {
		h.clock.Set(time.Date(2026, 6, 3, 9, i, 0, 0, time.UTC))
		if _, err := c.Pageview(ctx, api.PageviewRequest{SiteID: site, URL: "https://example.com/", UserAgent: chromeUA, VisitorID: v}); err != nil {
			t.Fatal(err)
		}
	}
	for i, day := range []int{3, 4} {
		h.clock.Set(time.Date(2026, 6, day, 12, 0, 0, 0, time.UTC))
		pay := payment(site, "1000", "USD")
		pay.EventName, pay.TransactionID = "Subscription", fmt.Sprintf("anon-%d", i)
		if _, err := c.Payment(ctx, pay); err != nil {
			t.Fatal(err)
		}
	}
	h.waitCount(2, "SELECT count() FROM events WHERE site_id = ? AND name = 'Subscription' AND visitor_id = 0", site)
	if _, err := c.CreateGoal(ctx, api.GoalRequest{SiteID: site, GoalName: "Subscribed", GoalType: "custom_event", EventName: "Subscription"}); err != nil {
		t.Fatal(err)
	}
	p := client.StatsParams{SiteID: site, DateFrom: "2026-06-01", DateTo: "2026-06-07", Timezone: "UTC"}
	waitRevenue(t, h, p, 2000)

	cfg := *h.cfg
	cfg.WALDir = t.TempDir()
	cfg.Rollups, cfg.PageRollups = false, false
	raw := startApp(t, &cfg, h.clock).client(h.key)
	for _, reader := range []struct {
		name string
		c    *client.Client
	}{{"rollups", c}, {"raw rows", raw}} {
		for _, tz := range []string{"UTC", "Asia/Kolkata"} {
			p.Timezone = tz
			name := reader.name + " " + tz
			ov, err := reader.c.Overview(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			if ov.Data.Metrics.Visitors != 2 {
				t.Errorf("%s: overview visitors %d, want 2", name, ov.Data.Metrics.Visitors)
			}
			ev, err := reader.c.Events(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			wantEvents := []api.EventRow{{EventName: "Subscription", TotalCount: 2, UniqueVisitors: 0, ConversionRate: 100}}
			if diff := cmp.Diff(wantEvents, ev.Data.Events); diff != "" {
				t.Errorf("%s: events (-want +got):\n%s", name, diff)
			}
			conv, err := reader.c.Conversions(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			if len(conv.Data) != 1 || conv.Data[0].TotalConversions != 2 || conv.Data[0].UniqueVisitors != 0 ||
				conv.Data[0].ConversionRate != 100 || conv.Data[0].VisitorConversionRate != 0 || conv.Meta.TotalUniqueVisitors != 2 {
				t.Errorf("%s: conversions %+v, visitors %d; want 2 completions by 0 visitors of 2 (100 %%, 0 %%)",
					name, conv.Data, conv.Meta.TotalUniqueVisitors)
			}
			rev, err := reader.c.Revenue(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			if tot := rev.Data.Totals; tot.Visitors != 2 || tot.PayingVisitors != 0 || tot.RevenuePerVisitor != 1000 || tot.PayingVisitorRate != 0 {
				t.Errorf("%s: revenue totals %+v; want 2 visitors, none paying, 1000 per visitor", name, tot)
			}
		}
	}
	// nor does anybody enter a funnel that starts at the event
	funnel, err := c.CreateFunnel(ctx, api.FunnelRequest{SiteID: site, Name: "Subscribed, then home", Steps: []api.FunnelStep{
		{Type: "custom_event", EventName: "Subscription"}, {Type: "pageview", PagePath: "/"}}})
	if err != nil {
		t.Fatal(err)
	}
	p.Timezone, p.FunnelID = "UTC", funnel.FunnelID
	fr, err := c.FunnelReport(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if steps := fr.Data.Steps; len(steps) != 2 || steps[0].Visitors != 0 || steps[1].Visitors != 0 {
		t.Errorf("funnel: steps %+v; want nobody in either", steps)
	}
}

// The (none) row of a breakdown gathers the payments without a value and
// those whose value is "(none)" itself, and counts each of their payers
// once. June 10: V comes from Google with utm_campaign=(none) and pays
// 30.00; June 11: V comes from Twitter without a campaign and pays 20.00,
// W from Google without one and pays 10.00. By campaign: one row, (none),
// of 60.00 in 3 payments by 2 paying visitors (V, W).
func TestNoneRowCountsEachPayerOnce(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	c := h.client(h.key)
	site := string(h.siteID)
	for i, v := range []struct {
		day            int
		visitor, query string
		referrer       string
		amount         string
	}{
		{10, "V", "?utm_campaign=(none)", "https://www.google.com/", "3000"},
		{11, "V", "", "https://t.co/x", "2000"},
		{11, "W", "", "https://www.google.com/", "1000"},
	} {
		h.clock.Set(time.Date(2026, 6, v.day, 9, i, 0, 0, time.UTC))
		if _, err := c.Pageview(ctx, api.PageviewRequest{SiteID: site, URL: "https://example.com/" + v.query, Referrer: v.referrer,
			UserAgent: chromeUA, VisitorID: v.visitor}); err != nil {
			t.Fatal(err)
		}
		h.waitCount(int64(i+1), "SELECT toUInt64(sum(sign)) FROM sessions WHERE site_id = ?", site)
		h.clock.Set(time.Date(2026, 6, v.day, 9, i, 30, 0, time.UTC))
		pay := payment(site, v.amount, "USD")
		pay.VisitorID, pay.TransactionID = v.visitor, fmt.Sprintf("ord-%d", i)
		if _, err := c.Payment(ctx, pay); err != nil {
			t.Fatal(err)
		}
	}
	p := client.StatsParams{SiteID: site, DateFrom: "2026-06-10", DateTo: "2026-06-11", Timezone: "UTC"}
	waitRevenue(t, h, p, 6000)
	got, err := c.RevenueBy(ctx, p, "campaign", "")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]revenueCells{{"(none)", 6000, 0, 6000, 3, 0, 2}}, cells(got.Data.Breakdown)); diff != "" {
		t.Errorf("revenue by campaign (-want +got):\n%s", diff)
	}
	if got.Data.Totals.PayingVisitors != 2 {
		t.Errorf("paying visitors %d, want 2", got.Data.Totals.PayingVisitors)
	}
}

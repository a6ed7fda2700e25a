package app_test

import (
	"context"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tally-analytics/tally/pkg/api"
	"github.com/tally-analytics/tally/pkg/client"
)

// funnelEvent is one event of the hand-built funnel dataset, at a local time
// of the site's zone (America/New_York: UTC−4 in June).
type funnelEvent struct {
	at      string // "2006-01-02 15:04" local
	visitor string
	path    string // a pageview of path, or the page of a custom event
	event   string // a custom event's name
	props   map[string]any
}

// The 4-step funnel of TestFunnelReport, with a window of one hour:
//
//	1 pageview /pricing   2 pageview /signup/*   3 Signup with plan=pro   4 Checkout
//
// The site's zone is America/New_York, the range 2026-06-10 to 06-11: UTC
// [06-10 04:00, 06-12 04:00). Times below are local.
//
//	A  10:00 /pricing, 10:01 /signup/form, 10:03 Signup (plan=pro, seats=3), 10:10 Checkout   → step 4
//	   (came from utm_source=news); pays 50.00 at 10:15
//	B  10:00 /pricing, 10:05 Signup pro, 10:06 Checkout: skips /signup/*                     → step 1
//	C  09:00 /signup/x, 09:10 /pricing, 09:20 Signup pro: signup page before pricing          → step 1
//	D  11:00 /pricing, 11:30 /pricing again, 11:45 /signup/a, 11:50 /signup/a again,
//	   12:20 Signup pro: 80 min after the first /pricing, 50 after the second                 → step 3
//	   pays 20.00 at 12:30, refunded 5.00 at 13:00
//	E  13:00 /pricing, 13:20 /signup/b, 14:10 Signup pro: 70 min, past the window             → step 2
//	   pays 7.00 at 14:30
//	F  06-11 23:40 /pricing, 23:50 /signup/z, 06-12 00:05 Signup pro, 00:20 Checkout:
//	   starts in the range (03:40 UTC on 06-12!) and finishes after midnight, past its end   → step 4
//	   pays 30.00 at 06-12 00:30: after the range, not counted
//	G  06-09 23:50 /pricing, 23:55 /signup/g, 06-10 00:05 Signup pro, 00:10 Checkout:
//	   step 1 the evening before the range (but 03:50 UTC on 06-10)                          → nothing
//	H  10:00 /pricing, 10:02 /signup/q, 10:04 Signup with plan=free, 10:05 Checkout           → step 2
//	I  10:00 /pricing, 10:01 /signup/a/b (* is one segment)                                   → step 1
//	J  10:00 /pricing; the tracking script reports a 49.99 purchase at 10:30 (client revenue) → step 1
//	K  pays 100.00 at 12:00 without any step                                                  → nothing
var funnelDataset = []funnelEvent{
	{"2026-06-09 23:50", "G", "/pricing", "", nil}, {"2026-06-09 23:55", "G", "/signup/g", "", nil},
	{"2026-06-10 00:05", "G", "/signup/g", "Signup", map[string]any{"plan": "pro"}}, {"2026-06-10 00:10", "G", "/pay", "Checkout", nil},
	{"2026-06-10 09:00", "C", "/signup/x", "", nil}, {"2026-06-10 09:10", "C", "/pricing", "", nil},
	{"2026-06-10 09:20", "C", "/signup/x", "Signup", map[string]any{"plan": "pro"}},
	{"2026-06-10 10:00", "A", "/pricing?utm_source=news", "", nil}, {"2026-06-10 10:00", "B", "/pricing", "", nil},
	{"2026-06-10 10:00", "H", "/pricing", "", nil}, {"2026-06-10 10:00", "I", "/pricing", "", nil}, {"2026-06-10 10:00", "J", "/pricing", "", nil},
	{"2026-06-10 10:01", "A", "/signup/form", "", nil}, {"2026-06-10 10:01", "I", "/signup/a/b", "", nil},
	{"2026-06-10 10:02", "H", "/signup/q", "", nil},
	{"2026-06-10 10:03", "A", "/signup/form", "Signup", map[string]any{"plan": "pro", "seats": 3}},
	{"2026-06-10 10:04", "H", "/signup/q", "Signup", map[string]any{"plan": "free"}},
	{"2026-06-10 10:05", "B", "/pricing", "Signup", map[string]any{"plan": "pro"}}, {"2026-06-10 10:05", "H", "/pay", "Checkout", nil},
	{"2026-06-10 10:06", "B", "/pay", "Checkout", nil}, {"2026-06-10 10:10", "A", "/pay", "Checkout", nil},
	{"2026-06-10 11:00", "D", "/pricing", "", nil}, {"2026-06-10 11:30", "D", "/pricing", "", nil},
	{"2026-06-10 11:45", "D", "/signup/a", "", nil}, {"2026-06-10 11:50", "D", "/signup/a", "", nil},
	{"2026-06-10 12:20", "D", "/signup/a", "Signup", map[string]any{"plan": "pro"}},
	{"2026-06-10 13:00", "E", "/pricing", "", nil}, {"2026-06-10 13:20", "E", "/signup/b", "", nil},
	{"2026-06-10 14:10", "E", "/signup/b", "Signup", map[string]any{"plan": "pro"}},
	{"2026-06-11 23:40", "F", "/pricing", "", nil}, {"2026-06-11 23:50", "F", "/signup/z", "", nil},
	{"2026-06-12 00:05", "F", "/signup/z", "Signup", map[string]any{"plan": "pro"}}, {"2026-06-12 00:20", "F", "/pay", "Checkout", nil},
}

// funnelPayments are the payments of the dataset (minor units of USD, the
// site's currency; negative: a refund).
var funnelPayments = []struct {
	at, visitor string
	amount      string
}{
	{"2026-06-10 10:15", "A", "5000"}, {"2026-06-10 12:00", "K", "10000"}, {"2026-06-10 12:30", "D", "2000"},
	{"2026-06-10 13:00", "D", "-500"}, {"2026-06-10 14:30", "E", "700"}, {"2026-06-12 00:30", "F", "3000"},
}

// loadFunnelDataset sends the dataset through the Events API, the payments
// API and the tracker, in time order, each at its time.
func loadFunnelDataset(t *testing.T, h *harness) {
	t.Helper()
	ctx := context.Background()
	c := h.client(h.key)
	site := string(h.siteID)
	if _, err := c.UpdateSite(ctx, site, api.SiteRequest{Timezone: "America/New_York"}); err != nil {
		t.Fatal(err)
	}
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	at := func(s string) time.Time {
		tm, err := time.ParseInLocation("2006-01-02 15:04", s, ny)
		if err != nil {
			t.Fatal(err)
		}
		return tm.UTC()
	}
	type action struct {
		at   time.Time
		do   func() error
		what string
	}
	var actions []action
	for _, e := range funnelDataset {
		req := api.PageviewRequest{SiteID: site, URL: "https://example.com" + e.path, VisitorID: e.visitor}
		do := func() error { _, err := c.Pageview(ctx, req); return err }
		if e.event != "" {
			do = func() error {
				_, err := c.CustomEvent(ctx, api.CustomEventRequest{PageviewRequest: req, EventName: e.event, Props: e.props})
				return err
			}
		}
		actions = append(actions, action{at(e.at), do, e.visitor + " " + e.path + " " + e.event})
	}
	for _, p := range funnelPayments {
		req := payment(site, p.amount, "USD")
		req.VisitorID = p.visitor
		actions = append(actions, action{at(p.at), func() error { _, err := c.Payment(ctx, req); return err }, p.visitor + " pays"})
	}
	actions = append(actions, action{at("2026-06-10 10:30"), func() error {
		if status, e := trackRevenue(t, h, "J", "49.99", "USD"); status != http.StatusAccepted {
			t.Fatalf("tracker revenue: %d %+v", status, e)
		}
		return nil
	}, "J reports revenue"})
	sort.SliceStable(actions, func(i, j int) bool { return actions[i].at.Before(actions[j].at) })
	for _, a := range actions {
		h.clock.Set(a.at)
		if err := a.do(); err != nil {
			t.Fatalf("%s: %v", a.what, err)
		}
	}
	h.waitCount(int64(len(funnelDataset)), "SELECT count() FROM events WHERE name IN ('pageview', 'Signup', 'Checkout')")
	// six payments and the tracker's one
	h.waitCount(int64(len(funnelPayments))+1, "SELECT count() FROM payments WHERE site_id = ?", site)
}

func f64(x float64) *float64 { return &x }

func TestFunnelReport(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	c := h.client(h.key)
	site := string(h.siteID)
	loadFunnelDataset(t, h)
	window := int64(3600)
	funnel, err := c.CreateFunnel(ctx, api.FunnelRequest{SiteID: site, Name: "Pricing to checkout", WindowSeconds: &window, Steps: []api.FunnelStep{
		{Type: "pageview", PagePath: "/pricing"},
		{Type: "pageview", PagePath: "/signup/*"},
		{Type: "custom_event", EventName: "Signup", Props: map[string]string{"plan": "pro"}},
		{Type: "custom_event", EventName: "Checkout"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	p := client.StatsParams{SiteID: site, FunnelID: funnel.FunnelID, DateFrom: "2026-06-10", DateTo: "2026-06-11"}
	labels := []string{"/pricing", "/signup/*", "Signup (plan=pro)", "Checkout"}
	step := func(i int, visitors int64, rate float64, dropoff int64, dropoffRate float64, median *float64, revenue int64) api.FunnelReportStep {
		return api.FunnelReportStep{Step: i, Label: labels[i-1], Visitors: visitors, ConversionRate: rate, Dropoff: dropoff,
			DropoffRate: dropoffRate, MedianSecondsFromPrevious: median, Revenue: revenue}
	}
	report := func(rate float64, steps ...api.FunnelReportStep) api.FunnelReport {
		return api.FunnelReport{FunnelID: funnel.FunnelID, Name: "Pricing to checkout", WindowSeconds: 3600, ConversionRate: rate,
			Currency: "USD", Steps: steps}
	}
	check := func(name string, p client.StatsParams, want api.FunnelReport, tz string) {
		t.Helper()
		res, err := c.FunnelReport(ctx, p)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if diff := cmp.Diff(want, res.Data); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
		if wantMeta := (api.StatsMeta{SiteID: site, DateFrom: p.DateFrom, DateTo: p.DateTo, Timezone: tz}); res.Meta != wantMeta {
			t.Errorf("%s: meta %+v, want %+v", name, res.Meta, wantMeta)
		}
	}

	// Step 1: A B C D E F H I J = 9 (G began the evening before).
	// Step 2: A (10:01), D (11:45), E (13:20), F (23:50), H (10:02) = 5; B has no
	//   /signup/*, C's came before /pricing, I's /signup/a/b is two segments.
	// Step 3: A (10:03), D (12:20, 50 min after its second /pricing), F (00:05) = 3;
	//   E's is 70 min after /pricing, H's plan is free.
	// Step 4: A (10:10), F (00:20) = 2.
	// Rates of step 1: 100, 5/9 = 55.6, 3/9 = 33.3, 2/9 = 22.2; drop-offs 4 of 9
	// (44.4), 2 of 5 (40), 1 of 3 (33.3).
	// Medians from the previous step: step 2 of A 60, D 900 (11:30 → 11:45: its
	//   latest start that went deepest), E 1200, F 600, H 120 → 600; step 3 of A 120,
	//   D 2100 (11:45 → 12:20), F 900 → 900; step 4 of A 420, F 900 → (420+900)/2 = 660.
	// Net revenue in the range: A 5000, D 2000 − 500 = 1500, E 700; F paid after the
	//   range, K did no step, J's 49.99 is client-reported (not counted by default):
	//   step 1 A+D+E = 7200, step 2 the same (F, H paid nothing), step 3 A+D = 6500,
	//   step 4 A = 5000.
	check("New York days", p, report(22.2,
		step(1, 9, 100, 0, 0, nil, 7200),
		step(2, 5, 55.6, 4, 44.4, f64(600), 7200),
		step(3, 3, 33.3, 2, 40, f64(900), 6500),
		step(4, 2, 22.2, 1, 33.3, f64(660), 5000)), "America/New_York")

	// The same dates as UTC days, [06-10 00:00Z, 06-12 00:00Z): F's /pricing
	// (03:40Z on 06-12) is out, G's (03:50Z on 06-10) is in and G goes all the
	// way in 20 minutes: visitors 9, 5, 3, 2 again, but the medians change:
	// step 2 A 60, D 900, E 1200, G 300, H 120 → 300; step 3 A 120, D 2100,
	// G 600 → 600; step 4 A 420, G 300 → 360. Revenue: G paid nothing, and every
	// payment counted above falls in the UTC days too.
	utc := p
	utc.Timezone = "UTC"
	check("UTC days", utc, report(22.2,
		step(1, 9, 100, 0, 0, nil, 7200),
		step(2, 5, 55.6, 4, 44.4, f64(300), 7200),
		step(3, 3, 33.3, 2, 40, f64(600), 6500),
		step(4, 2, 22.2, 1, 33.3, f64(360), 5000)), "UTC")

	// Filtered by utm_source=news: A's visit alone, all four steps.
	news := p
	news.UTMSource = "news"
	check("utm_source=news", news, report(100,
		step(1, 1, 100, 0, 0, nil, 5000),
		step(2, 1, 100, 0, 0, f64(60), 5000),
		step(3, 1, 100, 0, 0, f64(120), 5000),
		step(4, 1, 100, 0, 0, f64(420), 5000)), "America/New_York")

	// A funnel whose only page has no wildcard, which reads its page's rows
	// alone: /pricing, Signup (plan=pro), Checkout.
	// Step 1: the same 9. Step 2: A (10:03), B (10:05), C (09:20, ten minutes
	//   after its /pricing), D (12:20, 50 min after its second /pricing),
	//   F (00:05) = 5; E's is 70 min after /pricing, H's plan is free.
	// Step 3: A (10:10), B (10:06), F (00:20) = 3.
	// Medians: step 2 A 180, B 300, C 600, D 3000, F 1500 → 600; step 3 A 420,
	//   B 60, F 900 → 420. Revenue: step 1 A+D+E = 7200, step 2 A+D = 6500,
	//   step 3 A = 5000.
	plain, err := c.CreateFunnel(ctx, api.FunnelRequest{SiteID: site, Name: "Pricing to checkout, no signup page", WindowSeconds: &window,
		Steps: []api.FunnelStep{{Type: "pageview", PagePath: "/pricing"},
			{Type: "custom_event", EventName: "Signup", Props: map[string]string{"plan": "pro"}}, {Type: "custom_event", EventName: "Checkout"}}})
	if err != nil {
		t.Fatal(err)
	}
	pp := p
	pp.FunnelID = plain.FunnelID
	res, err := c.FunnelReport(ctx, pp)
	if err != nil {
		t.Fatal(err)
	}
	wantPlain := api.FunnelReport{FunnelID: plain.FunnelID, Name: plain.Name, WindowSeconds: 3600, ConversionRate: 33.3, Currency: "USD",
		Steps: []api.FunnelReportStep{
			{Step: 1, Label: "/pricing", Visitors: 9, ConversionRate: 100, Revenue: 7200},
			{Step: 2, Label: "Signup (plan=pro)", Visitors: 5, ConversionRate: 55.6, Dropoff: 4, DropoffRate: 44.4, MedianSecondsFromPrevious: f64(600), Revenue: 6500},
			{Step: 3, Label: "Checkout", Visitors: 3, ConversionRate: 33.3, Dropoff: 2, DropoffRate: 40, MedianSecondsFromPrevious: f64(420), Revenue: 5000},
		}}
	if diff := cmp.Diff(wantPlain, res.Data); diff != "" {
		t.Errorf("plain pages (-want +got):\n%s", diff)
	}

	// The site counts the tracking script's revenue in: J's 49.99 joins step 1.
	included := true
	if _, err := c.UpdateSite(ctx, site, api.SiteRequest{ClientRevenue: &api.ClientRevenueRequest{Included: &included}}); err != nil {
		t.Fatal(err)
	}
	check("client revenue included", p, report(22.2,
		step(1, 9, 100, 0, 0, nil, 7200+4999),
		step(2, 5, 55.6, 4, 44.4, f64(600), 7200),
		step(3, 3, 33.3, 2, 40, f64(900), 6500),
		step(4, 2, 22.2, 1, 33.3, f64(660), 5000)), "America/New_York")

	// CSV: a row per step, the median empty for step 1.
	var csv strings.Builder
	name, err := c.CSV(ctx, "funnel", p, &csv)
	if err != nil {
		t.Fatal(err)
	}
	wantCSV := "step,label,visitors,conversion_rate,dropoff,dropoff_rate,median_seconds_from_previous,revenue\r\n" +
		"1,/pricing,9,100,0,0,,12199\r\n2,/signup/*,5,55.6,4,44.4,600,7200\r\n" +
		"3,Signup (plan=pro),3,33.3,2,40,900,6500\r\n4,Checkout,2,22.2,1,33.3,660,5000\r\n"
	if name != "funnel-"+site+"-2026-06-10-2026-06-11.csv" || csv.String() != wantCSV {
		t.Errorf("CSV %q:\n%s\nwant:\n%s", name, csv.String(), wantCSV)
	}

	// A range with nothing in it: zeros, no medians.
	empty := p
	empty.DateFrom, empty.DateTo = "2026-01-01", "2026-01-02"
	check("empty range", empty, report(0,
		step(1, 0, 0, 0, 0, nil, 0), step(2, 0, 0, 0, 0, nil, 0), step(3, 0, 0, 0, 0, nil, 0), step(4, 0, 0, 0, 0, nil, 0)),
		"America/New_York")

	// The stats rules: a page filter, a reversed range, no funnel, unknown
	// funnels and sites.
	q := url.Values{"site_id": {site}, "funnel_id": {funnel.FunnelID}, "date_from": {"2026-06-10"}, "date_to": {"2026-06-11"}}
	for name, tc := range map[string]struct {
		set         url.Values
		status      int
		code, field string
	}{
		"pathname filter": {url.Values{"pathname": {"/pricing"}}, 400, "invalid_request", "pathname"},
		"reversed range":  {url.Values{"date_from": {"2026-06-12"}}, 400, "invalid_date_range", "date_from"},
		"no funnel":       {url.Values{"funnel_id": {""}}, 400, "invalid_request", "funnel_id"},
		"bad timezone":    {url.Values{"timezone": {"Mars/Base"}}, 400, "invalid_request", "timezone"},
		"unknown funnel":  {url.Values{"funnel_id": {"6f1c1a52-0000-4000-8000-000000000000"}}, 404, "funnel_not_found", ""},
		"not a uuid":      {url.Values{"funnel_id": {"nope"}}, 404, "funnel_not_found", ""},
		"unknown site":    {url.Values{"site_id": {"nosuchsite"}}, 404, "site_not_found", "site_id"},
		"bad format":      {url.Values{"format": {"xml"}}, 400, "invalid_request", "format"},
	} {
		t.Run(name, func(t *testing.T) {
			v := url.Values{}
			for k, vs := range q {
				v[k] = vs
			}
			for k, vs := range tc.set {
				v[k] = vs
			}
			status, e := get(t, h, h.key, "/api/v1/stats/funnel", v)
			if status != tc.status || e.Error.Code != tc.code || e.Error.Field != tc.field {
				t.Errorf("%d %+v, want %d %s %s", status, e.Error, tc.status, tc.code, tc.field)
			}
		})
	}
}

package app_test

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tally-analytics/tally/internal/accounts"
	"github.com/tally-analytics/tally/internal/ingest"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/pkg/api"
	"github.com/tally-analytics/tally/pkg/client"
)

func payment(site string, amount string, currency string) api.PaymentRequest {
	return api.PaymentRequest{SiteID: site, Amount: api.Number(amount), Currency: currency}
}

func TestPaymentsAPI(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	c := h.client(h.key)
	site := string(h.siteID)

	req := payment(site, "4999", "USD")
	req.TransactionID = "order-1"
	first, err := c.Payment(ctx, req)
	if err != nil || !first.Success || first.Duplicate || first.PaymentID == "" {
		t.Fatalf("first payment: %+v, %v", first, err)
	}
	again, err := c.Payment(ctx, req)
	if err != nil || !again.Duplicate || again.PaymentID != first.PaymentID {
		t.Errorf("repeated transaction id: %+v, %v; want duplicate with the first id", again, err)
	}
	// concurrent retries of one transaction record it once
	req.TransactionID = "order-2"
	ids := make(chan string, 20)
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			res, err := c.Payment(ctx, req)
			if err != nil {
				t.Error(err)
				return
			}
			ids <- res.PaymentID
		})
	}
	wg.Wait()
	close(ids)
	distinct := map[string]bool{}
	for id := range ids {
		distinct[id] = true
	}
	if len(distinct) != 1 {
		t.Errorf("20 concurrent copies gave %d payment ids, want 1", len(distinct))
	}
	// a refund with the payment's transaction id is a refund, not a duplicate
	refund := payment(site, "-1000", "USD")
	refund.TransactionID = "order-1"
	res, err := c.Payment(ctx, refund)
	if err != nil || res.Duplicate || res.PaymentID == first.PaymentID {
		t.Errorf("refund of order-1: %+v, %v", res, err)
	}
	typed := payment(site, "500", "USD")
	typed.Type = "refund"
	if _, err := c.Payment(ctx, typed); err != nil {
		t.Errorf("type refund: %v", err)
	}

	var n int64
	if err := h.app.PG.QueryRow(ctx, "SELECT count(*) FROM payments WHERE site_id = $1", site).Scan(&n); err != nil || n != 4 {
		t.Errorf("ledger holds %d rows (%v), want 4: order-1, order-2, and two refunds", n, err)
	}

	// a refund sent through the API is checked against its payment
	// (order-2: 49.99 USD)
	over := payment(site, "-5000", "USD")
	over.TransactionID = "order-2"
	_, err = c.Payment(ctx, over)
	wantError(t, err, http.StatusBadRequest, "invalid_request", "amount")
	euros := payment(site, "-100", "EUR")
	euros.TransactionID = "order-2"
	_, err = c.Payment(ctx, euros)
	wantError(t, err, http.StatusBadRequest, "invalid_request", "currency")
	whole := payment(site, "-4999", "USD")
	whole.TransactionID = "order-2"
	if res, err := c.Payment(ctx, whole); err != nil || res.Duplicate {
		t.Errorf("a refund of all of order-2: %+v, %v", res, err)
	}
	if res, err := c.Payment(ctx, whole); err != nil || !res.Duplicate {
		t.Errorf("that refund again: %+v, %v; want a duplicate", res, err)
	}

	for name, tc := range map[string]struct {
		req   api.PaymentRequest
		code  string
		field string
	}{
		"no amount":        {payment(site, "", "USD"), "invalid_request", "amount"},
		"zero amount":      {payment(site, "0", "USD"), "invalid_request", "amount"},
		"decimal amount":   {payment(site, "49.99", "USD"), "invalid_request", "amount"},
		"no currency":      {payment(site, "100", ""), "invalid_request", "currency"},
		"unknown currency": {payment(site, "100", "XYZ"), "invalid_request", "currency"},
		"no site":          {payment("", "100", "USD"), "invalid_request", "site_id"},
		"unknown site":     {payment("nope", "100", "USD"), "invalid_site_id", "site_id"},
		"bad type":         {func() api.PaymentRequest { r := payment(site, "100", "USD"); r.Type = "gift"; return r }(), "invalid_request", "type"},
		"negative payment": {func() api.PaymentRequest { r := payment(site, "-100", "USD"); r.Type = "payment"; return r }(), "invalid_request", "type"},
		"bad timestamp":    {func() api.PaymentRequest { r := payment(site, "100", "USD"); r.Timestamp = "yesterday"; return r }(), "invalid_request", "timestamp"},
		"metadata not a map": {func() api.PaymentRequest {
			r := payment(site, "100", "USD")
			r.Metadata = json.RawMessage(`[1]`)
			return r
		}(), "invalid_request", "metadata"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := c.Payment(ctx, tc.req)
			wantError(t, err, http.StatusBadRequest, tc.code, tc.field)
		})
	}
	statsOnly, _ := h.app.Accounts.CreateKey(ctx, accounts.NewKey{OwnerEmail: h.email, Name: "s", Scopes: []model.Scope{model.ScopeStatsRead}})
	_, err = h.client(statsOnly.Secret).Payment(ctx, payment(site, "100", "USD"))
	wantError(t, err, http.StatusForbidden, "forbidden", "")
}

// Conversion at the ECB rate of the payment's day: a known rate table
// (USD 1.10 and JPY 160 per EUR on Friday May 8, USD 1.20 on Monday May 11),
// a weekend payment on Friday's rate, a zero-decimal currency, and a payment
// whose day has no rate yet, converted when the rate is imported.
func TestCurrencyConversion(t *testing.T) {
	h := newHarness(t) // the site's base currency is USD by default: use a EUR site
	ctx := context.Background()
	site, err := h.app.Accounts.CreateSite(ctx, accounts.NewSite{OwnerEmail: h.email, Domain: "shop.example", BaseCurrency: "EUR"})
	if err != nil {
		t.Fatal(err)
	}
	day := func(s string) time.Time { d, _ := time.Parse(time.DateOnly, s); return d }
	if err := h.app.PG.UpsertRates(ctx, []model.Rate{
		{Currency: "USD", Day: day("2026-05-08"), Rate: "1.10"}, {Currency: "JPY", Day: day("2026-05-08"), Rate: "160"},
		{Currency: "USD", Day: day("2026-05-11"), Rate: "1.20"}, {Currency: "JPY", Day: day("2026-05-11"), Rate: "170"},
	}); err != nil {
		t.Fatal(err)
	}
	h.clock.Set(time.Date(2026, 5, 20, 12, 0, 0, 0, time.UTC))
	c := h.client(h.key)
	pay := func(id, amount, cur, at string) {
		t.Helper()
		req := payment(string(site.ID), amount, cur)
		req.TransactionID, req.Timestamp = id, at
		if _, err := c.Payment(ctx, req); err != nil {
			t.Fatal(err)
		}
	}
	pay("friday-usd", "1100", "USD", "2026-05-08T15:00:00Z")   // 11.00 USD / 1.10 = 10.00 EUR
	pay("saturday-usd", "2200", "USD", "2026-05-09T10:00:00Z") // weekend: Friday's 1.10 → 20.00 EUR
	pay("friday-jpy", "1000", "JPY", "2026-05-08T16:00:00Z")   // ¥1,000 / 160 = 6.25 EUR
	pay("euro", "500", "EUR", "2026-05-11T09:00:00Z")          // no conversion
	pay("tuesday-usd", "1200", "USD", "2026-05-12T10:00:00Z")  // no rate for May 12 yet: waits

	base := func(id string) *int64 {
		var v *int64
		if err := h.app.PG.QueryRow(ctx, "SELECT base_amount FROM payments WHERE transaction_id = $1", id).Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	for id, want := range map[string]int64{"friday-usd": 1000, "saturday-usd": 2000, "friday-jpy": 625, "euro": 500} {
		if got := base(id); got == nil || *got != want {
			t.Errorf("%s: base amount %v, want %d euro cents", id, got, want)
		}
	}
	if got := base("tuesday-usd"); got != nil {
		t.Errorf("tuesday-usd converted to %d before its rate existed", *got)
	}
	p := client.StatsParams{SiteID: string(site.ID), DateFrom: "2026-05-01", DateTo: "2026-05-31", Timezone: "UTC"}
	waitRevenue(t, h, p, 4125)
	rep, err := c.Revenue(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Data.Currency != "EUR" || rep.Data.Totals.Payments != 4 || rep.Meta.PendingConversion != 1 {
		t.Errorf("before the late rate: %+v, pending %d", rep.Data.Totals, rep.Meta.PendingConversion)
	}

	// More than a page of older payments in a currency no rate covers hold
	// nothing back.
	var stuck int64
	if err := h.app.PG.QueryRow(ctx, `WITH ins AS (INSERT INTO payments (site_id, provider, transaction_id, kind,
		amount, currency, occurred_at, event_name, base_currency)
		SELECT $1, 'api', 'ars-' || i, 'payment', 100, 'ARS', '2026-05-01T00:00:00Z', 'payment', 'EUR'
		FROM generate_series(1, 1001) i RETURNING 1) SELECT count(*) FROM ins`, string(site.ID)).Scan(&stuck); err != nil || stuck != 1001 {
		t.Fatalf("%d ARS payments inserted, %v", stuck, err)
	}

	// The rate of May 12 arrives: 1.25 USD per EUR → 12.00 USD = 9.60 EUR.
	if err := h.app.PG.UpsertRates(ctx, []model.Rate{{Currency: "USD", Day: day("2026-05-12"), Rate: "1.25"}}); err != nil {
		t.Fatal(err)
	}
	if n, err := h.app.Revenue.ConvertPending(ctx); err != nil || n != 1 {
		t.Fatalf("ConvertPending = %d, %v; want 1", n, err)
	}
	if got := base("tuesday-usd"); got == nil || *got != 960 {
		t.Errorf("tuesday-usd after the import: %v, want 960", got)
	}
	waitRevenue(t, h, p, 4125+960)
	rep, _ = c.Revenue(ctx, p)
	if rep.Meta.PendingConversion != 1001 || rep.Data.Totals.Payments != 5 {
		t.Errorf("after the import: %+v, pending %d", rep.Data.Totals, rep.Meta.PendingConversion)
	}
}

// waitRevenue polls the revenue report until its revenue total is want.
func waitRevenue(t *testing.T, h *harness, p client.StatsParams, want int64) {
	t.Helper()
	waitTotals(t, h, p, "revenue", func(tot api.RevenueTotals) int64 { return tot.Revenue }, want)
}

// waitTotals polls the revenue report until the figure of its totals is want.
func waitTotals(t *testing.T, h *harness, p client.StatsParams, name string, figure func(api.RevenueTotals) int64, want int64) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		rep, err := h.client(h.key).Revenue(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		got := figure(rep.Data.Totals.RevenueTotals)
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s total %d, want %d", name, got, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A refund of a payment tally holds is the payment's, attribution and
// all, even when the payment has none: a visit the buyer made after paying
// does not take the refund. Payment of 30.00 at 09:00 by a visitor never
// seen before (unattributed), a visit from Google at 10:00, a refund of
// 10.00 the next day: one row, Unattributed, 30.00 - 10.00.
func TestRefundOfAnUnattributedPayment(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	c := h.client(h.key)
	site := string(h.siteID)
	h.clock.Set(time.Date(2026, 7, 1, 9, 0, 0, 0, time.UTC))
	pay := payment(site, "3000", "USD")
	pay.VisitorID, pay.TransactionID = "vid-r", "ord-r"
	if _, err := c.Payment(ctx, pay); err != nil {
		t.Fatal(err)
	}
	h.clock.Set(time.Date(2026, 7, 1, 10, 0, 0, 0, time.UTC))
	if _, err := c.Pageview(ctx, api.PageviewRequest{SiteID: site, URL: "https://example.com/", Referrer: "https://www.google.com/",
		UserAgent: chromeUA, VisitorID: "vid-r"}); err != nil {
		t.Fatal(err)
	}
	h.waitCount(1, "SELECT toUInt64(sum(sign)) FROM sessions WHERE site_id = ?", site)
	h.clock.Set(time.Date(2026, 7, 2, 12, 0, 0, 0, time.UTC))
	refund := payment(site, "1000", "USD")
	refund.VisitorID, refund.TransactionID, refund.Type = "vid-r", "ord-r", "refund"
	if _, err := c.Payment(ctx, refund); err != nil {
		t.Fatal(err)
	}
	p := client.StatsParams{SiteID: site, DateFrom: "2026-07-01", DateTo: "2026-07-02", Timezone: "UTC"}
	waitTotals(t, h, p, "refund count", func(tot api.RevenueTotals) int64 { return tot.RefundCount }, 1)
	got, err := c.RevenueBy(ctx, p, "source", "")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]revenueCells{{"Unattributed", 3000, 1000, 2000, 1, 1, 1}}, cells(got.Data.Breakdown)); diff != "" {
		t.Errorf("revenue by source (-want +got):\n%s", diff)
	}
}

// Revenue from the tracker and from payments with an event name appears in
// the Events report and in the revenue report, attributed to the visit.
func TestRevenueEventsAndReport(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	c := h.client(h.key)
	site := string(h.siteID)
	h.clock.Set(time.Date(2026, 6, 3, 9, 0, 0, 0, time.UTC))
	// visitor A arrives from Google (campaign spring) and buys in the same visit
	pv := api.PageviewRequest{SiteID: site, URL: "https://example.com/pricing?utm_campaign=spring", Referrer: "https://www.google.com/", VisitorID: "A"}
	if _, err := c.Pageview(ctx, pv); err != nil {
		t.Fatal(err)
	}
	h.clock.Set(time.Date(2026, 6, 3, 9, 5, 0, 0, time.UTC))
	if _, err := c.CustomEvent(ctx, api.CustomEventRequest{PageviewRequest: api.PageviewRequest{SiteID: site,
		URL: "https://example.com/checkout", VisitorID: "A"}, EventName: "Purchase",
		Revenue: &api.Revenue{Amount: "49.00", Currency: "USD"}}); err != nil {
		t.Fatal(err)
	}
	// visitor B comes from Twitter; a server-side payment names an event
	h.clock.Set(time.Date(2026, 6, 4, 10, 0, 0, 0, time.UTC))
	if _, err := c.Pageview(ctx, api.PageviewRequest{SiteID: site, URL: "https://example.com/", Referrer: "https://t.co/x", VisitorID: "B"}); err != nil {
		t.Fatal(err)
	}
	h.waitCount(1, "SELECT toUInt64(sum(sign)) FROM sessions WHERE visitor_id = ?", ingestVisitor(h.siteID, "B"))
	h.clock.Set(time.Date(2026, 6, 4, 10, 30, 0, 0, time.UTC))
	sub := payment(site, "2500", "USD")
	sub.VisitorID, sub.EventName, sub.TransactionID = "B", "Subscription", "sub-b-1"
	if _, err := c.Payment(ctx, sub); err != nil {
		t.Fatal(err)
	}
	refund := payment(site, "-2500", "USD")
	refund.TransactionID = "sub-b-1"
	if _, err := c.Payment(ctx, refund); err != nil {
		t.Fatal(err)
	}
	// an anonymous payment (no visitor): unattributed
	if _, err := c.Payment(ctx, payment(site, "1000", "USD")); err != nil {
		t.Fatal(err)
	}

	p := client.StatsParams{SiteID: site, DateFrom: "2026-06-01", DateTo: "2026-06-07", Timezone: "UTC"}
	waitRevenue(t, h, p, 4900+2500+1000)
	bySource, err := c.RevenueBy(ctx, p, "source", "")
	if err != nil {
		t.Fatal(err)
	}
	// visitors of the range: A and B (the anonymous payment has no visitor
	// nor event); net 8400 − 2500 = 5900 over 2 visitors = 2950 each; both paid: 2/2 = 100 %
	want := api.RevenueReport{Currency: "USD",
		Totals: api.RevenueSummary{RevenueTotals: api.RevenueTotals{Revenue: 8400, Refunds: 2500, Net: 5900, Payments: 3, RefundCount: 1,
			PayingVisitors: 2}, Visitors: 2, RevenuePerVisitor: 2950, PayingVisitorRate: 100},
		Breakdown: []api.RevenueRow{
			{Value: "Google", RevenueTotals: api.RevenueTotals{Revenue: 4900, Net: 4900, Payments: 1, PayingVisitors: 1}},
			{Value: "Twitter", RevenueTotals: api.RevenueTotals{Revenue: 2500, Refunds: 2500, Net: 0, Payments: 1, RefundCount: 1, PayingVisitors: 1}},
			{Value: "Unattributed", RevenueTotals: api.RevenueTotals{Revenue: 1000, Net: 1000, Payments: 1}},
		}}
	got := bySource.Data
	got.Timeseries = nil
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("revenue by source (-want +got):\n%s", diff)
	}
	byCampaign, err := c.RevenueBy(ctx, p, "campaign", "first_touch")
	if err != nil {
		t.Fatal(err)
	}
	if len(byCampaign.Data.Breakdown) != 3 || byCampaign.Data.Breakdown[0].Value != "spring" || byCampaign.Data.Breakdown[0].Revenue != 4900 {
		t.Errorf("revenue by first-touch campaign: %+v", byCampaign.Data.Breakdown)
	}
	if ts := bySource.Data.Timeseries; len(ts) != 7 || ts[2] != (api.RevenuePoint{Date: "2026-06-03", Revenue: 4900, Net: 4900}) ||
		ts[3] != (api.RevenuePoint{Date: "2026-06-04", Revenue: 3500, Refunds: 2500, Net: 1000}) {
		t.Errorf("revenue series: %+v", ts)
	}

	h.waitCount(1, "SELECT count() FROM events WHERE name = 'Subscription' AND revenue_amount = 2500")
	events, err := c.Events(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]int64{}
	for _, e := range events.Data.Events {
		names[e.EventName] = e.TotalCount
	}
	if names["Purchase"] != 1 || names["Subscription"] != 1 {
		t.Errorf("events report %v: want the tracked Purchase and the Subscription payment", names)
	}
	_, err = c.RevenueBy(ctx, p, "planet", "")
	wantError(t, err, http.StatusBadRequest, "invalid_request", "breakdown")
	_, err = c.RevenueBy(ctx, p, "source", "linear")
	wantError(t, err, http.StatusBadRequest, "invalid_request", "attribution")
}

func ingestVisitor(site model.SiteID, id string) uint64 { return ingest.FromClientID(site, id) }

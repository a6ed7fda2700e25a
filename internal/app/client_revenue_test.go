package app_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tally-analytics/tally/internal/accounts"
	"github.com/tally-analytics/tally/internal/config"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/pkg/api"
	"github.com/tally-analytics/tally/pkg/client"
)

// trackRevenue posts a custom event with revenue to /e as the tracking
// script does, and returns the status and the error body.
func trackRevenue(t *testing.T, h *harness, visitor, amount, currency string) (int, api.Error) {
	t.Helper()
	body := `{"site_id":"` + string(h.siteID) + `","event_name":"Purchase","url":"https://example.com/thanks","visitor_id":"` +
		visitor + `","revenue":{"amount":` + amount + `,"currency":"` + currency + `"}}`
	req, _ := http.NewRequest(http.MethodPost, h.srv.URL+"/e", strings.NewReader(body))
	req.Header.Set("Content-Type", "text/plain;charset=UTF-8")
	req.Header.Set("User-Agent", chromeUA)
	req.Header.Set("Accept-Language", "en-GB,en;q=0.9")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var e api.Error
	if resp.StatusCode != http.StatusAccepted {
		if err := json.NewDecoder(resp.Body).Decode(&e); err != nil {
			t.Fatalf("%d without an error body: %v", resp.StatusCode, err)
		}
	}
	return resp.StatusCode, e
}

// Revenue the tracking script reports is unsigned: before, one anonymous
// POST /e with "revenue": {"amount": 1000000000, "currency": "USD"} added a
// billion dollars to the site's revenue, and nothing could turn it off or
// take it out. Now it is capped per event, limited per site (see
// TestClientRevenueAllowanceSpentByValidEvents), kept apart from verified
// revenue unless the site counts it in, and can be purged.
func TestClientRevenueKeptApart(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	c := h.client(h.key)
	site := string(h.siteID)
	h.clock.Set(time.Date(2026, 8, 3, 9, 0, 0, 0, time.UTC))

	// the attack of the security review: refused by the default cap (10,000.00 USD)
	status, e := trackRevenue(t, h, "attacker", "1000000000", "USD")
	if status != http.StatusBadRequest || e.Error.Code != "invalid_request" || e.Error.Field != "revenue.amount" {
		t.Errorf("a billion dollars through /e: %d %+v, want 400 invalid_request on revenue.amount", status, e.Error)
	}
	// under the cap: accepted, and apart from the verified 10.00 the Events API sends
	if status, e := trackRevenue(t, h, "buyer", "49.99", "USD"); status != http.StatusAccepted {
		t.Fatalf("49.99 USD through /e: %d %+v", status, e.Error)
	}
	if _, err := c.CustomEvent(ctx, api.CustomEventRequest{PageviewRequest: api.PageviewRequest{SiteID: site,
		URL: "https://example.com/thanks", VisitorID: "server"}, EventName: "Purchase",
		Revenue: &api.Revenue{Amount: "10.00", Currency: "USD"}}); err != nil {
		t.Fatal(err)
	}
	p := client.StatsParams{SiteID: site, DateFrom: "2026-08-01", DateTo: "2026-08-07", Timezone: "UTC"}
	h.waitCount(2, "SELECT count() FROM payments WHERE site_id = ?", site)
	rep, err := c.RevenueBy(ctx, p, "source", "")
	if err != nil {
		t.Fatal(err)
	}
	// verified: 1,000 cents from the Events API; client-reported: 4,999
	want := api.RevenueTotals{Revenue: 1000, Net: 1000, Payments: 1, PayingVisitors: 1, ClientReported: 4999}
	if rep.Data.Totals.RevenueTotals != want || rep.Meta.ClientRevenueIncluded {
		t.Errorf("totals %+v (included %v), want %+v apart", rep.Data.Totals, rep.Meta.ClientRevenueIncluded, want)
	}
	wantRow := api.RevenueRow{Value: "Direct / None", RevenueTotals: want}
	if len(rep.Data.Breakdown) != 1 || rep.Data.Breakdown[0] != wantRow {
		t.Errorf("by source %+v, want one row %+v", rep.Data.Breakdown, wantRow)
	}
	if ts := rep.Data.Timeseries; len(ts) != 7 || ts[2] != (api.RevenuePoint{Date: "2026-08-03", Revenue: 1000, Net: 1000, ClientReported: 4999}) {
		t.Errorf("series %+v", ts)
	}

	// the owner counts it in: 1,000 + 4,999 in the figures, still shown apart
	included := true
	updated, err := c.UpdateSite(ctx, site, api.SiteRequest{ClientRevenue: &api.ClientRevenueRequest{Included: &included}})
	if err != nil {
		t.Fatal(err)
	}
	if updated.ClientRevenue != (api.ClientRevenue{Included: true, Cap: model.DefaultClientRevenueCap}) {
		t.Errorf("site after the change: %+v", updated.ClientRevenue)
	}
	rep, err = c.Revenue(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	want = api.RevenueTotals{Revenue: 5999, Net: 5999, Payments: 2, PayingVisitors: 2, ClientReported: 4999}
	if rep.Data.Totals.RevenueTotals != want || !rep.Meta.ClientRevenueIncluded {
		t.Errorf("included: totals %+v (included %v), want %+v", rep.Data.Totals, rep.Meta.ClientRevenueIncluded, want)
	}

	// a cap of 0 refuses all of it (the ingest path sees the change once its
	// 30 s cache of the site expires)
	zero := int64(0)
	if _, err := c.UpdateSite(ctx, site, api.SiteRequest{ClientRevenue: &api.ClientRevenueRequest{Cap: &zero}}); err != nil {
		t.Fatal(err)
	}
	h.clock.Advance(31 * time.Second)
	if status, e := trackRevenue(t, h, "buyer", "1.00", "USD"); status != http.StatusBadRequest || e.Error.Field != "revenue" {
		t.Errorf("with a cap of 0: %d %+v, want 400 on revenue", status, e.Error)
	}
	negative := int64(-1)
	_, err = c.UpdateSite(ctx, site, api.SiteRequest{ClientRevenue: &api.ClientRevenueRequest{Cap: &negative}})
	wantError(t, err, http.StatusBadRequest, "invalid_request", "client_revenue.cap")

	// purge: the client-reported payment goes, the verified one stays
	n, err := c.PurgeClientRevenue(ctx, site)
	if err != nil || n != 1 {
		t.Fatalf("purge: %d, %v; want 1 payment", n, err)
	}
	h.waitCount(1, "SELECT count() FROM payments WHERE site_id = ?", site)
	rep, err = c.Revenue(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	want = api.RevenueTotals{Revenue: 1000, Net: 1000, Payments: 1, PayingVisitors: 1}
	if rep.Data.Totals.RevenueTotals != want {
		t.Errorf("after the purge: %+v, want %+v", rep.Data.Totals, want)
	}
	if n := h.count("SELECT count() FROM events WHERE name = 'Purchase' AND site_id = ?", site); n != 2 {
		t.Errorf("%d Purchase events after the purge, want both still in the Events report", n)
	}
	// a viewer cannot purge
	_, err = h.client(viewerKey(t, h)).PurgeClientRevenue(ctx, site)
	wantError(t, err, http.StatusForbidden, "forbidden", "")
}

// The cap is in the site's base currency: revenue in another currency is
// converted at the latest known rate first, however old, and refused when no
// rate is known.
func TestClientRevenueCapConverts(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	h.clock.Set(time.Date(2026, 8, 5, 9, 0, 0, 0, time.UTC))
	// a EUR buys 1.25 USD (two days ago: the latest rate)
	if err := h.app.PG.UpsertRates(ctx, []model.Rate{{Currency: "USD", Day: time.Date(2026, 8, 3, 0, 0, 0, 0, time.UTC), Rate: "1.25"}}); err != nil {
		t.Fatal(err)
	}
	limit := int64(10_000) // 100.00 USD
	if _, err := h.client(h.key).UpdateSite(ctx, string(h.siteID), api.SiteRequest{ClientRevenue: &api.ClientRevenueRequest{Cap: &limit}}); err != nil {
		t.Fatal(err)
	}
	// 80.00 EUR = 100.00 USD: at the cap; 80.01 EUR = 100.01 USD: above
	if status, e := trackRevenue(t, h, "a", "80.00", "EUR"); status != http.StatusAccepted {
		t.Errorf("80.00 EUR: %d %+v, want 202", status, e.Error)
	}
	if status, e := trackRevenue(t, h, "a", "80.01", "EUR"); status != http.StatusBadRequest || e.Error.Field != "revenue.amount" {
		t.Errorf("80.01 EUR: %d %+v, want 400 on revenue.amount", status, e.Error)
	}
	if status, e := trackRevenue(t, h, "a", "10", "GBP"); status != http.StatusBadRequest || e.Error.Field != "revenue.currency" {
		t.Errorf("GBP without a rate: %d %+v, want 400 on revenue.currency", status, e.Error)
	}
	// the latest known rate however old: two weeks without an import
	h.clock.Set(time.Date(2026, 8, 17, 9, 0, 0, 0, time.UTC))
	if status, e := trackRevenue(t, h, "a", "80.00", "EUR"); status != http.StatusAccepted {
		t.Errorf("80.00 EUR at the rate of two weeks ago: %d %+v, want 202", status, e.Error)
	}
}

// A checkout session id in a page URL is a claim anyone can make. The buyer
// is the first claimant who had viewed a page of the site before claiming
// it; a claim without an earlier page view, or older than seven days, does
// not take the payment's attribution.
func TestCheckoutClaims(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	site := string(h.siteID)
	const secret = "whsec_test_claims_secret"
	if err := h.app.Accounts.SetProviderSecret(ctx, h.siteID, model.ProviderA, secret); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 9, 1, 9, 0, 0, 0, time.UTC)
	track := func(at time.Time, visitor, url, referrer string) {
		t.Helper()
		h.clock.Set(at)
		body, _ := json.Marshal(api.TrackerEvent{SiteID: site, EventName: "pageview", URL: url, Referrer: referrer,
			VisitorID: visitor, CheckoutSessionID: checkoutParam(url)})
		if resp := postE(t, h, string(body)); resp.StatusCode != http.StatusAccepted {
			t.Fatalf("%s: %d", url, resp.StatusCode)
		}
	}
	// the attacker claims first, straight onto the success page
	track(t0, "attacker", "https://example.com/thanks?session_id=cs_test_claimed", "https://t.co/x")
	// the buyer came from Google, then returns from the checkout
	track(t0.Add(time.Minute), "buyer", "https://example.com/pricing", "https://www.google.com/")
	track(t0.Add(3*time.Minute), "buyer", "https://example.com/thanks?session_id=cs_test_claimed", "https://checkout.stripe.com/")
	h.waitCount(2, "SELECT toUInt64(sum(sign)) FROM sessions WHERE site_id = ?", site)

	h.clock.Set(t0.Add(4 * time.Minute))
	if status, res := stripeWebhook(t, h, site, secret, checkoutCompleted(h, "evt_claim", "cs_test_claimed", "pi_claim", 4900)); status != 200 || !res.Received {
		t.Fatalf("checkout webhook: %d %+v", status, res)
	}
	// a claim after the payment changes nothing
	track(t0.Add(5*time.Minute), "late", "https://example.com/thanks?session_id=cs_test_claimed", "https://news.ycombinator.com/")

	// a claim older than seven days is forgotten: this payment is unattributed
	track(t0.Add(6*time.Minute), "buyer", "https://example.com/thanks?session_id=cs_test_old", "")
	h.clock.Set(t0.Add(8 * 24 * time.Hour))
	if status, res := stripeWebhook(t, h, site, secret, checkoutCompleted(h, "evt_old", "cs_test_old", "pi_old", 1000)); status != 200 || !res.Received {
		t.Fatalf("late checkout webhook: %d %+v", status, res)
	}

	p := client.StatsParams{SiteID: site, DateFrom: "2026-09-01", DateTo: "2026-09-10", Timezone: "UTC"}
	waitRevenue(t, h, p, 5900)
	rep, err := h.client(h.key).RevenueBy(ctx, p, "source", "")
	if err != nil {
		t.Fatal(err)
	}
	want := []api.RevenueRow{
		{Value: "Google", RevenueTotals: api.RevenueTotals{Revenue: 4900, Net: 4900, Payments: 1, PayingVisitors: 1}},
		{Value: "Unattributed", RevenueTotals: api.RevenueTotals{Revenue: 1000, Net: 1000, Payments: 1}},
	}
	if len(rep.Data.Breakdown) != 2 || rep.Data.Breakdown[0] != want[0] || rep.Data.Breakdown[1] != want[1] {
		t.Errorf("by source %+v, want %+v", rep.Data.Breakdown, want)
	}
}

// viewerKey makes a viewer of h's site and returns an API key of theirs.
func viewerKey(t *testing.T, h *harness) string {
	t.Helper()
	ctx := context.Background()
	const email = "viewer@example.com"
	if _, err := h.app.Accounts.CreateUser(ctx, accounts.NewUser{Email: email, Password: password, Name: "Viewer"}); err != nil {
		t.Fatal(err)
	}
	if err := h.app.Accounts.AddMember(ctx, h.siteID, email, model.RoleViewer); err != nil {
		t.Fatal(err)
	}
	k, err := h.app.Accounts.CreateKey(ctx, accounts.NewKey{OwnerEmail: email, Name: "viewer"})
	if err != nil {
		t.Fatal(err)
	}
	return k.Secret
}

// Only a tracker event with revenue that passes every check spends the
// site's hourly allowance (2 here): one refused afterwards with a 400 would
// otherwise use it up for the events that follow. Three refused events (an
// amount above the default cap, a currency with no known rate, a page on
// another domain), then two accepted (49.99 and 5.00 USD) and a third
// refused with 429, while a pageview still passes: the accepted two are
// stored, 4,999 + 500 = 5,499 cents, and the refusals counted once each by
// reason.
func TestClientRevenueAllowanceSpentByValidEvents(t *testing.T) {
	h := newHarnessWith(t, testenvConfigWith(t, func(c *config.Config) { c.ClientRevenuePerHour = 2 }))
	ctx := context.Background()
	c := h.client(h.key)
	site := string(h.siteID)
	h.clock.Set(time.Date(2026, 8, 3, 9, 0, 0, 0, time.UTC))

	var got []int
	for _, ev := range []struct{ amount, currency string }{{"1000000000", "USD"}, {"10", "GBP"}} {
		status, _ := trackRevenue(t, h, "buyer", ev.amount, ev.currency)
		got = append(got, status)
	}
	elsewhere := `{"site_id":"` + site + `","event_name":"Purchase","url":"https://elsewhere.net/thanks","visitor_id":"buyer",` +
		`"revenue":{"amount":1,"currency":"USD"}}`
	got = append(got, postE(t, h, elsewhere).StatusCode)
	for _, amount := range []string{"49.99", "5.00", "1.00"} {
		status, _ := trackRevenue(t, h, "buyer", amount, "USD")
		got = append(got, status)
	}
	want := []int{400, 400, 400, 202, 202, 429}
	if !slices.Equal(got, want) {
		t.Fatalf("statuses %v, want %v", got, want)
	}
	if resp := postE(t, h, `{"site_id":"`+site+`","event_name":"pageview","url":"https://example.com/"}`); resp.StatusCode != http.StatusAccepted {
		t.Errorf("a pageview after the site's revenue limit: %d, want 202", resp.StatusCode)
	}

	h.waitCount(2, "SELECT count() FROM payments WHERE site_id = ?", site)
	h.waitCount(3, "SELECT count() FROM events WHERE site_id = ?", site)
	p := client.StatsParams{SiteID: site, DateFrom: "2026-08-03", DateTo: "2026-08-04", Timezone: "UTC"}
	rep, err := c.Revenue(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Data.Totals.ClientReported != 5499 {
		t.Errorf("client-reported %d, want 5499", rep.Data.Totals.ClientReported)
	}
	if err := h.app.Ingest.FlushRefusals(ctx); err != nil {
		t.Fatal(err)
	}
	health, err := c.Ingestion(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	wantHealth := api.IngestionReport{
		Totals: api.IngestionCounts{Accepted: 3, Refused: 4},
		RefusedByReason: []api.RefusalCount{{Reason: "invalid_payload", Count: 2}, {Reason: "host_mismatch", Count: 1},
			{Reason: "rate_limited", Count: 1}, {Reason: "invalid_props"}, {Reason: "body_too_large"},
			{Reason: "over_wal_budget"}, {Reason: "unavailable"}},
		Timeseries: []api.IngestionPoint{{Date: "2026-08-03", Accepted: 3, Refused: 4}, {Date: "2026-08-04"}},
	}
	assertJSONEqual(t, "tracking health", health.Data, wantHealth)
}

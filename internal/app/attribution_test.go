package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/pkg/api"
	"github.com/tally-analytics/tally/pkg/client"
)

// stripeWebhook posts a Stripe-signed event to the site's provider_a webhook.
func stripeWebhook(t *testing.T, h *harness, site, secret string, event map[string]any) (int, api.WebhookResponse) {
	t.Helper()
	body, err := json.Marshal(event)
	if err != nil {
		t.Fatal(err)
	}
	return postWebhook(t, h, "provider_a", site, body, webhookSigners["provider_a"](secret, body, h.clock.Now()))
}

// checkoutCompleted is Stripe's event of a paid one-time checkout of amount
// US cents, now, in live mode.
func checkoutCompleted(h *harness, event, session, intent string, amount int) map[string]any {
	return map[string]any{
		"id": event, "object": "event", "type": "checkout.session.completed", "created": h.clock.Now().Unix(), "livemode": true,
		"data": map[string]any{"object": map[string]any{
			"id": session, "object": "checkout.session", "mode": "payment", "payment_status": "paid",
			"status": "complete", "amount_total": amount, "currency": "usd", "payment_intent": intent,
			"metadata": map[string]any{}, "created": h.clock.Now().Unix(),
		}},
	}
}

// A visitor arrives from google.com with utm_campaign=spring, comes back
// later directly, reaches the success page with the checkout session id, and
// the Stripe webhook of that checkout arrives: the revenue is Google's and
// spring's. The refund that follows shows under refunds.
func TestAttributionEndToEnd(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	site := string(h.siteID)
	const secret = "whsec_test_attribution_secret"
	if err := h.app.Accounts.SetProviderSecret(ctx, h.siteID, model.ProviderA, secret); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 7, 1, 9, 0, 0, 0, time.UTC)
	tracker := func(at time.Time, url, referrer string) {
		t.Helper()
		h.clock.Set(at)
		body, _ := json.Marshal(api.TrackerEvent{SiteID: site, EventName: "pageview", URL: url, Referrer: referrer,
			VisitorID: "vid-spring", CheckoutSessionID: checkoutParam(url)})
		if resp := postE(t, h, string(body)); resp.StatusCode != 202 {
			t.Fatalf("%s: %d", url, resp.StatusCode)
		}
	}
	tracker(t0, "https://example.com/?utm_source=google&utm_campaign=spring", "https://www.google.com/")
	tracker(t0.Add(time.Minute), "https://example.com/pricing", "https://example.com/")
	// two hours later, a direct visit that ends in the checkout
	tracker(t0.Add(2*time.Hour), "https://example.com/pricing", "")
	tracker(t0.Add(2*time.Hour+5*time.Minute), "https://example.com/thanks?session_id=cs_test_spring", "https://checkout.stripe.com/")
	h.waitCount(2, "SELECT toUInt64(sum(sign)) FROM sessions WHERE site_id = ?", site)

	h.clock.Set(t0.Add(2*time.Hour + 6*time.Minute))
	status, res := stripeWebhook(t, h, site, secret, checkoutCompleted(h, "evt_1", "cs_test_spring", "pi_spring", 4900))
	if status != 200 || !res.Received || res.PaymentID == "" {
		t.Fatalf("checkout webhook: %d %+v", status, res)
	}
	h.clock.Set(t0.Add(26 * time.Hour))
	status, res = stripeWebhook(t, h, site, secret, map[string]any{
		"id": "evt_2", "object": "event", "type": "charge.refunded", "created": h.clock.Now().Unix(),
		"data": map[string]any{"object": map[string]any{
			"id": "ch_spring", "object": "charge", "amount": 4900, "amount_captured": 4900, "amount_refunded": 4900,
			"currency": "usd", "payment_intent": "pi_spring", "refunded": true, "created": t0.Add(2 * time.Hour).Unix(),
		}},
	})
	if status != 200 || res.PaymentID == "" {
		t.Fatalf("refund webhook: %d %+v", status, res)
	}

	p := client.StatsParams{SiteID: site, DateFrom: "2026-07-01", DateTo: "2026-07-03", Timezone: "UTC"}
	waitRevenue(t, h, p, 4900)
	c := h.client(h.key)
	deadline := time.Now().Add(20 * time.Second)
	var bySource api.RevenueResponse
	for {
		var err error
		if bySource, err = c.RevenueBy(ctx, p, "source", ""); err != nil {
			t.Fatal(err)
		}
		// the totals and the breakdown are two queries: the refund may reach
		// ClickHouse between them
		b := bySource.Data.Breakdown
		if bySource.Data.Totals.RefundCount == 1 && len(b) == 1 && b[0].Refunds == 4900 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	want := api.RevenueTotals{Revenue: 4900, Refunds: 4900, Net: 0, Payments: 1, RefundCount: 1, PayingVisitors: 1}
	if bySource.Data.Totals.RevenueTotals != want {
		t.Errorf("totals %+v, want %+v (the refund is not negative revenue)", bySource.Data.Totals, want)
	}
	if len(bySource.Data.Breakdown) != 1 || bySource.Data.Breakdown[0].Value != "Google" || bySource.Data.Breakdown[0].Revenue != 4900 ||
		bySource.Data.Breakdown[0].Refunds != 4900 {
		t.Errorf("by source: %+v, want Google with the payment and its refund", bySource.Data.Breakdown)
	}
	byCampaign, err := c.RevenueBy(ctx, p, "campaign", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(byCampaign.Data.Breakdown) != 1 || byCampaign.Data.Breakdown[0].Value != "spring" {
		t.Errorf("by campaign: %+v, want spring", byCampaign.Data.Breakdown)
	}
	byPage, err := c.RevenueBy(ctx, p, "page", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(byPage.Data.Breakdown) != 1 || byPage.Data.Breakdown[0].Value != "/" {
		t.Errorf("by entry page: %+v, want / (the entry of the Google visit)", byPage.Data.Breakdown)
	}
}

// checkoutParam is what the tracker reads from a page URL.
func checkoutParam(url string) string {
	const key = "session_id="
	if i := bytes.Index([]byte(url), []byte(key)); i >= 0 {
		return url[i+len(key):]
	}
	return ""
}

// A server-side sender forwards the pages it serves through the Events API:
// the success page's ?session_id= is the checkout session, as the tracking
// script reads it, so the Stripe checkout that follows is attributed to the
// visit (Google, campaign summer).
func TestServerSideCheckoutAttribution(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	site := string(h.siteID)
	const secret = "whsec_test_server_side_secret"
	if err := h.app.Accounts.SetProviderSecret(ctx, h.siteID, model.ProviderA, secret); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 7, 1, 9, 0, 0, 0, time.UTC)
	c := h.client(h.key)
	for i, pv := range []struct{ url, referrer string }{
		{"https://example.com/?utm_source=google&utm_campaign=summer", "https://www.google.com/"},
		{"https://example.com/pricing", "https://example.com/"},
		{"https://example.com/thanks?session_id=cs_test_server", "https://checkout.stripe.com/"},
	} {
		h.clock.Set(t0.Add(time.Duration(i) * time.Minute))
		if _, err := c.Pageview(ctx, api.PageviewRequest{SiteID: site, URL: pv.url, Referrer: pv.referrer,
			UserAgent: "Mozilla/5.0 (X11; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0", IPAddress: "81.2.69.142"}); err != nil {
			t.Fatalf("%s: %v", pv.url, err)
		}
	}
	h.waitCount(3, "SELECT count() FROM events WHERE site_id = ?", site)

	h.clock.Set(t0.Add(5 * time.Minute))
	status, res := stripeWebhook(t, h, site, secret, checkoutCompleted(h, "evt_s1", "cs_test_server", "pi_server", 2500))
	if status != 200 || !res.Received || res.PaymentID == "" {
		t.Fatalf("checkout webhook: %d %+v", status, res)
	}
	p := client.StatsParams{SiteID: site, DateFrom: "2026-07-01", DateTo: "2026-07-02", Timezone: "UTC"}
	waitRevenue(t, h, p, 2500)
	for dim, want := range map[string]string{"source": "Google", "campaign": "summer"} {
		got, err := c.RevenueBy(ctx, p, dim, "")
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Data.Breakdown) != 1 || got.Data.Breakdown[0].Value != want || got.Data.Breakdown[0].Revenue != 2500 {
			t.Errorf("by %s: %+v, want the 25.00 USD under %s", dim, got.Data.Breakdown, want)
		}
	}
}

package app_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/pkg/api"
	"github.com/tally-analytics/tally/pkg/client"
)

// testModeOf is a live fixture as the provider's test mode sends it:
// Stripe's livemode false, Lemon Squeezy's test_mode true.
func testModeOf(t *testing.T, provider, file string) []byte {
	t.Helper()
	live := map[string][2]string{
		"provider_a": {`"livemode": true`, `"livemode": false`},
		"provider_b": {`"test_mode": false`, `"test_mode": true`},
	}[provider]
	body := fixture(t, provider, file)
	test := bytes.ReplaceAll(body, []byte(live[0]), []byte(live[1]))
	if bytes.Equal(test, body) {
		t.Fatalf("%s/%s holds no %s", provider, file, live[0])
	}
	return test
}

// A merchant who tries their checkout with a test card gets the provider's
// test-mode notifications on their live site (a test-mode endpoint signed
// with its secret). Each is answered 200, so the provider does not retry
// it, with the reason, and records nothing: no payment, no refund, no
// checkout linked to its subscription. The revenue report holds the live
// payments alone.
func TestWebhookTestMode(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	site := string(h.siteID)
	for _, p := range []string{"provider_a", "provider_b"} {
		if err := h.app.Accounts.SetProviderSecret(ctx, h.siteID, model.Provider(p), webhookSecrets[p]); err != nil {
			t.Fatal(err)
		}
	}
	post := func(provider string, body []byte) (int, api.WebhookResponse) {
		t.Helper()
		return postWebhook(t, h, provider, site, body, webhookSigners[provider](webhookSecrets[provider], body, h.clock.Now()))
	}
	checkouts := func() int64 {
		t.Helper()
		var n int64
		if err := h.app.PG.QueryRow(ctx, "SELECT count(*) FROM checkout_sessions WHERE site_id = $1", site).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}

	for _, d := range []struct{ provider, file string }{
		{"provider_a", "checkout.session.completed.json"},
		{"provider_a", "checkout.session.completed.subscription.json"},
		{"provider_a", "invoice.paid.json"},
		{"provider_a", "charge.refunded.json"},
		{"provider_b", "order_created.json"},
		{"provider_b", "order_refunded.json"},
	} {
		status, res := post(d.provider, testModeOf(t, d.provider, d.file))
		if status != 200 || !res.Received || !res.Ignored || res.Reason != "test mode: not counted as revenue" || res.PaymentID != "" {
			t.Errorf("%s %s in test mode: %d %+v, want 200 ignored as test mode", d.provider, d.file, status, res)
		}
	}
	if n := ledgerCount(t, h, site, "true"); n != 0 {
		t.Errorf("test-mode deliveries recorded %d rows in the ledger", n)
	}
	if n := checkouts(); n != 0 {
		t.Errorf("a test-mode subscription checkout linked %d visitors", n)
	}

	// the same deliveries live count, and link
	for _, d := range []struct{ provider, file string }{
		{"provider_a", "checkout.session.completed.json"},
		{"provider_a", "checkout.session.completed.subscription.json"},
		{"provider_b", "order_created.json"},
	} {
		if status, res := post(d.provider, fixture(t, d.provider, d.file)); status != 200 || !res.Received {
			t.Fatalf("%s %s live: %d %+v", d.provider, d.file, status, res)
		}
	}
	if n := ledgerCount(t, h, site, "kind = 'payment'"); n != 2 {
		t.Errorf("live deliveries recorded %d payments, want 2", n)
	}
	if n := checkouts(); n != 1 {
		t.Errorf("the live subscription checkout linked %d visitors, want 1", n)
	}
	// 21.98 USD of the Stripe checkout (2025-11-21) and 11.99 USD of the
	// Lemon Squeezy order (2026-11-20); the live payments were sent last,
	// so a test-mode one copied to the report would be there by now
	p := client.StatsParams{SiteID: site, DateFrom: "2025-11-01", DateTo: "2026-11-30", Timezone: "UTC"}
	waitRevenue(t, h, p, 2198+1199)
	rep, err := h.client(h.key).Revenue(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if tot := rep.Data.Totals; tot.Revenue != 2198+1199 || tot.Payments != 2 || tot.Refunds != 0 || tot.RefundCount != 0 {
		t.Errorf("revenue report: %+v, want the two live payments alone", tot.RevenueTotals)
	}
}

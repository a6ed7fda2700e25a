package app_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/pkg/api"
	"github.com/tally-analytics/tally/pkg/client"
)

// Lemon Squeezy's first payment of a subscription is an order and the
// subscription's first invoice at once, and a refund of it is a refund of
// both: order_refunded, and subscription_payment_refunded of the invoice
// whose billing_reason is initial, each with the running total. The order
// of 11.99 is paid at 14:03 on 20 October (order_created.json, dated as the
// first invoice of subscription_payment_refunded.initial.json is), and 5.00
// of it refunded at 09:12 the next day. The refund counts once, as the
// order's: revenue 11.99, refunds 5.00, net 6.99; 1 payment, 1 refund, 1
// paying visitor (the analytics_vid of the order). Counted from the invoice
// too, a second 5.00 would wait an hour for a payment none holds and then
// count unattributed: refunds 10.00, net 1.99, 2 refunds.
func TestLemonSqueezyFirstPaymentRefundedOnce(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	site := string(h.siteID)
	const provider = "provider_b"
	if err := h.app.Accounts.SetProviderSecret(ctx, h.siteID, model.Provider(provider), webhookSecrets[provider]); err != nil {
		t.Fatal(err)
	}
	october := func(b []byte) []byte {
		b = bytes.ReplaceAll(b, []byte(`"2026-11-20T14:03:2`), []byte(`"2026-10-20T14:03:2`))
		return bytes.ReplaceAll(b, []byte(`"2026-11-21T09:12:4`), []byte(`"2026-10-21T09:12:4`))
	}
	post := func(body []byte) api.WebhookResponse {
		t.Helper()
		status, res := postWebhook(t, h, provider, site, body, webhookSigners[provider](webhookSecrets[provider], body, h.clock.Now()))
		if status != 200 {
			t.Fatalf("%d %+v", status, res)
		}
		return res
	}
	h.clock.Set(time.Date(2026, 10, 21, 9, 30, 0, 0, time.UTC))
	paid := post(october(fixture(t, provider, "order_created.json")))
	invoiceRefund := fixture(t, provider, "subscription_payment_refunded.initial.json")
	const reason = "a refund of the subscription's first payment, counted from order_refunded"
	if res := post(invoiceRefund); !res.Ignored || res.Reason != reason || res.PaymentID != "" {
		t.Errorf("the first invoice's refund, before the order's: %+v, want ignored (%s)", res, reason)
	}
	refund := post(october(fixture(t, provider, "order_refunded.json")))
	if res := post(invoiceRefund); !res.Ignored || res.Reason != reason || res.PaymentID != "" {
		t.Errorf("the first invoice's refund, after the order's: %+v, want ignored (%s)", res, reason)
	}
	if n := ledgerCount(t, h, site, "kind = 'refund'"); n != 1 {
		t.Errorf("%d refunds in the ledger, want 1", n)
	}
	if r := refundRow(t, h, refund.PaymentID); r.RefundOf != paid.PaymentID || r.HeldUntil != nil {
		t.Errorf("the order's refund: %+v, want linked to the order %s, not held", r, paid.PaymentID)
	}

	// past any hold, everything recorded is exported
	h.clock.Set(time.Date(2026, 10, 21, 11, 0, 0, 0, time.UTC))
	waitExported(t, h, paid.PaymentID)
	waitExported(t, h, refund.PaymentID)
	if _, err := h.app.Revenue.Export(ctx); err != nil {
		t.Fatal(err)
	}
	p := client.StatsParams{SiteID: site, DateFrom: "2026-10-01", DateTo: "2026-10-31", Timezone: "UTC"}
	rep, err := h.client(h.key).Revenue(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	want := api.RevenueTotals{Revenue: 1199, Refunds: 500, Net: 699, Payments: 1, RefundCount: 1, PayingVisitors: 1}
	if got := rep.Data.Totals.RevenueTotals; got != want {
		t.Errorf("October's totals %+v, want %+v", got, want)
	}
}

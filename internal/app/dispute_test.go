package app_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tally-analytics/tally/pkg/api"
	"github.com/tally-analytics/tally/pkg/client"
)

// disputeEvent is Stripe's event of a dispute of intent's charge for amount
// US cents, now, in live mode: kind is charge.dispute.funds_withdrawn or
// charge.dispute.funds_reinstated.
func disputeEvent(h *harness, event, kind, dispute, intent string, amount int, status string) map[string]any {
	return map[string]any{
		"id": event, "object": "event", "type": kind, "created": h.clock.Now().Unix(), "livemode": true,
		"data": map[string]any{"object": map[string]any{
			"id": dispute, "object": "dispute", "amount": amount, "currency": "usd", "charge": "ch_" + intent,
			"payment_intent": intent, "status": status, "reason": "fraudulent", "livemode": true, "metadata": map[string]any{},
			"created": h.clock.Now().Unix(), "is_charge_refundable": false, "balance_transactions": []any{},
		}},
	}
}

// A visitor from Google pays 49.00 at 09:40 on 1 July. On 10 July the
// customer's bank takes the money back (funds withdrawn): a refund of the
// payment with its visitor and source, so by source Google has 49.00 paid,
// 49.00 refunded, 0.00 net; one payment, one refund, one paying visitor.
// On 25 July the merchant wins the dispute and the money returns (funds
// reinstated): a payment of the same visitor and source, so Google has
// 98.00 paid, 49.00 refunded, 49.00 net; two payments (the sale and its
// money back), one refund, still one paying visitor. Redelivered, neither
// counts twice.
func TestStripeDisputeLostThenWon(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	t0 := time.Date(2026, 7, 1, 9, 0, 0, 0, time.UTC)
	site := refundFirstSite(t, h, t0, "vid-disputed")
	vid := ingestVisitor(h.siteID, "vid-disputed")

	h.clock.Set(t0.Add(40 * time.Minute))
	paymentID := h.postStripe(t, site, checkoutBy(h, "evt_pay", "cs_disputed", "pi_disputed", 4900, "vid-disputed"))

	h.clock.Set(time.Date(2026, 7, 10, 14, 0, 0, 0, time.UTC))
	withdrawn := disputeEvent(h, "evt_dp_w", "charge.dispute.funds_withdrawn", "dp_disputed", "pi_disputed", 4900, "needs_response")
	chargebackID := h.postStripe(t, site, withdrawn)
	if got, want := refundRow(t, h, chargebackID), (ledgerRefund{RefundOf: paymentID, Visitor: int64(vid)}); !cmp.Equal(got, want) {
		t.Errorf("chargeback in the ledger: %+v, want a refund linked to its payment, not held", got)
	}
	waitExported(t, h, chargebackID)
	if got, want := chRefund(t, h, chargebackID), (exportedRefund{Copies: 1, Visitor: vid, Source: "Google"}); got != want {
		t.Errorf("chargeback in ClickHouse: %+v, want %+v", got, want)
	}
	p := client.StatsParams{SiteID: site, DateFrom: "2026-07-01", DateTo: "2026-07-31", Timezone: "UTC"}
	bySource := func(want []revenueCells) {
		t.Helper()
		got, err := h.client(h.key).RevenueBy(ctx, p, "source", "")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, cells(got.Data.Breakdown)); diff != "" {
			t.Errorf("revenue by source (-want +got):\n%s", diff)
		}
	}
	waitTotals(t, h, p, "net", func(tot api.RevenueTotals) int64 { return tot.Net }, 0)
	bySource([]revenueCells{{"Google", 4900, 4900, 0, 1, 1, 1}})

	h.clock.Set(time.Date(2026, 7, 25, 11, 0, 0, 0, time.UTC))
	reinstated := disputeEvent(h, "evt_dp_r", "charge.dispute.funds_reinstated", "dp_disputed", "pi_disputed", 4900, "won")
	backID := h.postStripe(t, site, reinstated)
	var kind, ref string
	var visitor int64
	if err := h.app.PG.QueryRow(ctx, `SELECT kind, payment_ref, coalesce(visitor_id, 0) FROM payments WHERE id = $1`, backID).
		Scan(&kind, &ref, &visitor); err != nil {
		t.Fatal(err)
	}
	if kind != "payment" || ref != "pi_disputed" || visitor != int64(vid) {
		t.Errorf("money back in the ledger: kind %s, ref %s, visitor %d; want a payment of pi_disputed's visitor", kind, ref, visitor)
	}
	waitExported(t, h, backID)
	if got, want := chRefund(t, h, backID), (exportedRefund{Copies: 1, Visitor: vid, Source: "Google"}); got != want {
		t.Errorf("money back in ClickHouse: %+v, want %+v", got, want)
	}
	waitTotals(t, h, p, "net", func(tot api.RevenueTotals) int64 { return tot.Net }, 4900)
	bySource([]revenueCells{{"Google", 9800, 4900, 4900, 2, 1, 1}})

	for _, ev := range []map[string]any{withdrawn, reinstated} {
		status, res := stripeWebhook(t, h, site, refundFirstSecret, ev)
		if status != 200 || !res.Duplicate {
			t.Errorf("%s redelivered: %d %+v, want a duplicate", ev["type"], status, res)
		}
	}
	if n := ledgerCount(t, h, site, "payment_ref = 'pi_disputed'"); n != 3 {
		t.Errorf("%d ledger rows for the payment, its chargeback and its money back, want 3", n)
	}
}

// A chargeback that arrives before its payment is held as any refund is,
// and linked to the payment when it comes.
func TestStripeChargebackBeforeItsPayment(t *testing.T) {
	h := newHarness(t)
	t0 := time.Date(2026, 7, 1, 9, 0, 0, 0, time.UTC)
	site := refundFirstSite(t, h, t0, "vid-early-dispute")
	h.clock.Set(t0.Add(10 * time.Minute))
	chargebackID := h.postStripe(t, site, disputeEvent(h, "evt_dp_w", "charge.dispute.funds_withdrawn", "dp_early", "pi_early_dispute", 4900, "lost"))
	if r := refundRow(t, h, chargebackID); r.HeldUntil == nil || r.RefundOf != "" {
		t.Fatalf("chargeback before its payment: %+v, want held and unlinked", r)
	}
	h.clock.Set(t0.Add(20 * time.Minute))
	paymentID := h.postStripe(t, site, checkoutBy(h, "evt_pay", "cs_early_dispute", "pi_early_dispute", 4900, "vid-early-dispute"))
	waitExported(t, h, chargebackID)
	vid := ingestVisitor(h.siteID, "vid-early-dispute")
	if got, want := refundRow(t, h, chargebackID), (ledgerRefund{RefundOf: paymentID, Visitor: int64(vid), Exported: true}); !cmp.Equal(got, want) {
		t.Errorf("chargeback once its payment came: %+v, want %+v", got, want)
	}
}

// Paddle's chargeback and its reversal, as Stripe's: the chargeback is a
// refund of the transaction, the reversal the transaction's money again,
// with its visitor, keyed by the reversing adjustment's id.
func TestPaddleChargebackReversed(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	if err := h.app.Accounts.SetProviderSecret(ctx, h.siteID, "provider_c", webhookSecrets["provider_c"]); err != nil {
		t.Fatal(err)
	}
	site := string(h.siteID)
	h.clock.Set(time.Now().UTC().Truncate(time.Second))
	post := func(body []byte) {
		t.Helper()
		if status, res := postWebhook(t, h, "provider_c", site, body, webhookSigners["provider_c"](webhookSecrets["provider_c"], body, h.clock.Now())); status != 200 || res.PaymentID == "" {
			t.Fatalf("%d %+v, want recorded", status, res)
		}
	}
	post(fixture(t, "provider_c", "transaction.completed.json"))
	adj := string(fixture(t, "provider_c", "adjustment.created.json"))
	chargeback := strings.NewReplacer(`"action": "refund"`, `"action": "chargeback"`, `"pending_approval"`, `"approved"`).Replace(adj)
	post([]byte(chargeback))
	post([]byte(strings.NewReplacer(`"action": "chargeback"`, `"action": "chargeback_reverse"`,
		"adj_01hvgf2s84dr6reszzg29zbvcm", "adj_01hvgf9reversed0000000000").Replace(chargeback)))
	const txn = "txn_01hv8wptq8987qeep44cyrewp9"
	var ledger string
	var visitors, visitor int64
	if err := h.app.PG.QueryRow(ctx, `SELECT string_agg(transaction_id || ' ' || kind || ' ' || amount, ', ' ORDER BY created_at),
		count(DISTINCT coalesce(visitor_id, 0)), min(coalesce(visitor_id, 0))
		FROM payments WHERE site_id = $1 AND payment_ref = $2`, site, txn).Scan(&ledger, &visitors, &visitor); err != nil {
		t.Fatal(err)
	}
	want := txn + " payment 65215, adj_01hvgf2s84dr6reszzg29zbvcm refund 100, adj_01hvgf9reversed0000000000 payment 100"
	if ledger != want || visitors != 1 || visitor == 0 {
		t.Errorf("ledger rows of the transaction: %q, %d visitors (%d); want %q, all of the payment's visitor", ledger, visitors, visitor, want)
	}
}

// disputedStep is one Stripe event of a dispute scenario, at a time of July
// 2026, and the amount of the ledger row it must record.
type disputedStep struct {
	at     time.Time
	event  func(h *harness) map[string]any
	amount int64
}

// runDisputed posts steps in order on a site with a visitor (vid) from
// Google, checks what each records, then posts them all again: each
// redelivery is a duplicate. It returns July's revenue totals once every
// row is exported, and checks that the breakdown by source is the same
// figures, all Google's.
func runDisputed(t *testing.T, h *harness, vid string, steps []disputedStep) api.RevenueTotals {
	t.Helper()
	ctx := context.Background()
	t0 := time.Date(2026, 7, 1, 9, 0, 0, 0, time.UTC)
	site := refundFirstSite(t, h, t0, vid)
	var ids []string
	var events []map[string]any
	for i, s := range steps {
		h.clock.Set(s.at)
		ev := s.event(h)
		events = append(events, ev)
		id := h.postStripe(t, site, ev)
		var amount int64
		var linked bool
		if err := h.app.PG.QueryRow(ctx, `SELECT amount, refund_of IS NOT NULL OR kind = 'payment' FROM payments WHERE id = $1`, id).
			Scan(&amount, &linked); err != nil {
			t.Fatalf("step %d (%s): %v", i, ev["type"], err)
		}
		if amount != s.amount || !linked {
			t.Errorf("step %d (%s): recorded %d (linked %t), want %d linked to its payment", i, ev["type"], amount, linked, s.amount)
		}
		ids = append(ids, id)
	}
	for i, ev := range events {
		if status, res := stripeWebhook(t, h, site, refundFirstSecret, ev); status != 200 || !res.Duplicate || res.PaymentID != ids[i] {
			t.Errorf("step %d (%s) redelivered: %d %+v, want a duplicate of %s", i, ev["type"], status, res, ids[i])
		}
	}
	for _, id := range ids {
		waitExported(t, h, id)
	}
	p := client.StatsParams{SiteID: site, DateFrom: "2026-07-01", DateTo: "2026-07-31", Timezone: "UTC"}
	rep, err := h.client(h.key).Revenue(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	by, err := h.client(h.key).RevenueBy(ctx, p, "source", "")
	if err != nil {
		t.Fatal(err)
	}
	tot := rep.Data.Totals.RevenueTotals
	want := []revenueCells{{"Google", tot.Revenue, tot.Refunds, tot.Net, tot.Payments, tot.RefundCount, tot.PayingVisitors}}
	if diff := cmp.Diff(want, cells(by.Data.Breakdown)); diff != "" {
		t.Errorf("revenue by source, all of it Google's (-want +got):\n%s", diff)
	}
	return tot
}

// Stripe's amount_refunded, the running total a charge.refunded without a
// list of refunds carries, counts refunds and never disputes. After a won
// dispute tally's chargeback and its money back cancel out, so a later
// refund is what the total says beyond the refunds alone.
func TestRefundAfterAWonDispute(t *testing.T) {
	day := func(d, hour int) time.Time { return time.Date(2026, 7, d, hour, 0, 0, 0, time.UTC) }
	t.Run("refund after the dispute", func(t *testing.T) {
		// 100.00 paid, 100.00 taken by the bank and given back, then a
		// refund of 30.00 (amount_refunded 3000): refunds so far are 100.00
		// of chargeback less 100.00 back, 0, so the refund is 30.00.
		// Revenue 100.00 + 100.00 back = 200.00; refunds 100.00 + 30.00 =
		// 130.00; net 70.00, what the merchant kept of the 100.00 after
		// refunding 30.00; 2 payments, 2 refunds, 1 paying visitor.
		h := newHarness(t)
		tot := runDisputed(t, h, "vid-won-then-refunded", []disputedStep{
			{day(1, 10), func(h *harness) map[string]any {
				return checkoutBy(h, "evt_pay", "cs_won", "pi_won", 10000, "vid-won-then-refunded")
			}, 10000},
			{day(10, 14), func(h *harness) map[string]any {
				return disputeEvent(h, "evt_dp_w", "charge.dispute.funds_withdrawn", "dp_won", "pi_won", 10000, "needs_response")
			}, 10000},
			{day(25, 11), func(h *harness) map[string]any {
				return disputeEvent(h, "evt_dp_r", "charge.dispute.funds_reinstated", "dp_won", "pi_won", 10000, "won")
			}, 10000},
			{day(28, 9), func(h *harness) map[string]any { return chargeRefunded(h, "evt_r1", "pi_won", 10000, 3000) }, 3000},
		})
		want := api.RevenueTotals{Revenue: 20000, Refunds: 13000, Net: 7000, Payments: 2, RefundCount: 2, PayingVisitors: 1}
		if tot != want {
			t.Errorf("July's totals %+v, want %+v", tot, want)
		}
	})
	t.Run("refund before and after the dispute", func(t *testing.T) {
		// 100.00 paid; 30.00 refunded (amount_refunded 3000: nothing
		// recorded yet, so 30.00); the 70.00 left disputed, taken and given
		// back; then amount_refunded 5000: refunds so far are 30.00 + 70.00
		// of chargeback − 70.00 back = 30.00, so the new refund is 20.00.
		// Revenue 100.00 + 70.00 back = 170.00; refunds 30.00 + 70.00 +
		// 20.00 = 120.00; net 50.00, the 100.00 less the 50.00 refunded in
		// all; 2 payments, 3 refunds, 1 paying visitor.
		h := newHarness(t)
		tot := runDisputed(t, h, "vid-refunded-won", []disputedStep{
			{day(1, 10), func(h *harness) map[string]any {
				return checkoutBy(h, "evt_pay", "cs_part", "pi_part", 10000, "vid-refunded-won")
			}, 10000},
			{day(3, 9), func(h *harness) map[string]any { return chargeRefunded(h, "evt_r1", "pi_part", 10000, 3000) }, 3000},
			{day(10, 14), func(h *harness) map[string]any {
				return disputeEvent(h, "evt_dp_w", "charge.dispute.funds_withdrawn", "dp_part", "pi_part", 7000, "needs_response")
			}, 7000},
			{day(25, 11), func(h *harness) map[string]any {
				return disputeEvent(h, "evt_dp_r", "charge.dispute.funds_reinstated", "dp_part", "pi_part", 7000, "won")
			}, 7000},
			{day(28, 9), func(h *harness) map[string]any { return chargeRefunded(h, "evt_r2", "pi_part", 10000, 5000) }, 2000},
		})
		want := api.RevenueTotals{Revenue: 17000, Refunds: 12000, Net: 5000, Payments: 2, RefundCount: 3, PayingVisitors: 1}
		if tot != want {
			t.Errorf("July's totals %+v, want %+v", tot, want)
		}
	})
}

package app_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/revenue"
	"github.com/tally-analytics/tally/pkg/api"
	"github.com/tally-analytics/tally/pkg/client"
)

// Providers deliver out of order: a refund may be recorded before the
// payment it refunds. These tests post Stripe's charge.refunded before the
// checkout.session.completed of its payment intent.

const refundFirstSecret = "whsec_test_refund_first_secret"

// refundFirstSite is the harness's site taking Stripe's notifications, with
// a visitor (vid) who arrived from Google at t0.
func refundFirstSite(t *testing.T, h *harness, t0 time.Time, vid string) string {
	t.Helper()
	ctx := context.Background()
	if err := h.app.Accounts.SetProviderSecret(ctx, h.siteID, model.ProviderA, refundFirstSecret); err != nil {
		t.Fatal(err)
	}
	site := string(h.siteID)
	h.clock.Set(t0)
	if _, err := h.client(h.key).Pageview(ctx, api.PageviewRequest{SiteID: site, URL: "https://example.com/pricing",
		Referrer: "https://www.google.com/", UserAgent: chromeUA, VisitorID: vid}); err != nil {
		t.Fatal(err)
	}
	h.waitCount(1, "SELECT toUInt64(sum(sign)) FROM sessions WHERE visitor_id = ?", ingestVisitor(h.siteID, vid))
	return site
}

// chargeRefunded is Stripe's event of a charge of intent with refunded of
// its amount refunded in all (US cents), now.
func chargeRefunded(h *harness, event, intent string, amount, refunded int) map[string]any {
	return map[string]any{
		"id": event, "object": "event", "type": "charge.refunded", "created": h.clock.Now().Unix(),
		"data": map[string]any{"object": map[string]any{
			"id": "ch_" + intent, "object": "charge", "amount": amount, "amount_captured": amount, "amount_refunded": refunded,
			"currency": "usd", "payment_intent": intent, "refunded": refunded == amount, "created": h.clock.Now().Unix(),
		}},
	}
}

// checkoutBy is checkoutCompleted with the visitor's id in its metadata.
func checkoutBy(h *harness, event, session, intent string, amount int, vid string) map[string]any {
	ev := checkoutCompleted(h, event, session, intent, amount)
	ev["data"].(map[string]any)["object"].(map[string]any)["metadata"] = map[string]any{"analytics_vid": vid}
	return ev
}

// post posts a Stripe event and fails the test unless it is recorded.
func (h *harness) postStripe(t *testing.T, site string, event map[string]any) string {
	t.Helper()
	status, res := stripeWebhook(t, h, site, refundFirstSecret, event)
	if status != 200 || res.PaymentID == "" {
		t.Errorf("%s: %d %+v", event["type"], status, res)
	}
	return res.PaymentID
}

// ledgerRefund is a refund as the ledger holds it.
type ledgerRefund struct {
	RefundOf  string
	Visitor   int64
	HeldUntil *time.Time
	Exported  bool
}

func refundRow(t *testing.T, h *harness, id string) ledgerRefund {
	t.Helper()
	var r ledgerRefund
	if err := h.app.PG.QueryRow(context.Background(), `SELECT coalesce(refund_of::text, ''), coalesce(visitor_id, 0),
		held_until, exported_at IS NOT NULL FROM payments WHERE id = $1`, id).Scan(&r.RefundOf, &r.Visitor, &r.HeldUntil, &r.Exported); err != nil {
		t.Fatal(err)
	}
	if r.HeldUntil != nil {
		held := r.HeldUntil.UTC()
		r.HeldUntil = &held
	}
	return r
}

// waitExported waits until the exporter (it runs every two seconds) has
// written the ledger row id to ClickHouse.
func waitExported(t *testing.T, h *harness, id string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !refundRow(t, h, id).Exported {
		if time.Now().After(deadline) {
			t.Fatalf("payment %s not exported", id)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// exportedRefund is a refund as ClickHouse holds it.
type exportedRefund struct {
	Copies  uint64
	Visitor uint64
	Source  string
}

func chRefund(t *testing.T, h *harness, id string) exportedRefund {
	t.Helper()
	var r exportedRefund
	if err := h.ch.QueryRow(context.Background(), `SELECT count(), any(visitor_id), any(source) FROM payments
		WHERE payment_id = ?`, id).Scan(&r.Copies, &r.Visitor, &r.Source); err != nil {
		t.Fatal(err)
	}
	return r
}

// The refund of 15.00 comes at 09:30, ten minutes before its payment of 49.00
// (09:40), by a visitor who came from Google at 09:00. The exporter leaves
// the refund in the ledger until the payment arrives, which gives it its
// visitor and source. By source: Google 49.00 − 15.00 = 34.00 net, one
// payment, one refund, one paying visitor; no other row (before, the refund
// stayed unattributed: Google 49.00 net and an Unattributed row of −15.00).
func TestRefundBeforeItsPayment(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	t0 := time.Date(2026, 7, 1, 9, 0, 0, 0, time.UTC)
	site := refundFirstSite(t, h, t0, "vid-early")

	h.clock.Set(t0.Add(30 * time.Minute))
	refundID := h.postStripe(t, site, chargeRefunded(h, "evt_r1", "pi_early", 4900, 1500))
	held := t0.Add(30*time.Minute + revenue.RefundHold)
	if got, want := refundRow(t, h, refundID), (ledgerRefund{HeldUntil: &held}); !cmp.Equal(got, want) {
		t.Fatalf("refund before its payment: %+v, want unlinked and held until %s", got, held)
	}
	if _, err := h.app.Revenue.Export(ctx); err != nil {
		t.Fatal(err)
	}
	if r := refundRow(t, h, refundID); r.Exported {
		t.Fatalf("a held refund was exported: %+v", r)
	}

	h.clock.Set(t0.Add(40 * time.Minute))
	paymentID := h.postStripe(t, site, checkoutBy(h, "evt_p1", "cs_early", "pi_early", 4900, "vid-early"))
	vid := ingestVisitor(h.siteID, "vid-early")
	waitExported(t, h, refundID)
	if got, want := refundRow(t, h, refundID), (ledgerRefund{RefundOf: paymentID, Visitor: int64(vid), Exported: true}); !cmp.Equal(got, want) {
		t.Errorf("refund once its payment came: %+v, want %+v", got, want)
	}
	if got, want := chRefund(t, h, refundID), (exportedRefund{Copies: 1, Visitor: vid, Source: "Google"}); got != want {
		t.Errorf("refund in ClickHouse: %+v, want %+v", got, want)
	}

	p := client.StatsParams{SiteID: site, DateFrom: "2026-07-01", DateTo: "2026-07-02", Timezone: "UTC"}
	waitTotals(t, h, p, "net", func(tot api.RevenueTotals) int64 { return tot.Net }, 4900-1500)
	got, err := h.client(h.key).RevenueBy(ctx, p, "source", "")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]revenueCells{{"Google", 4900, 1500, 3400, 1, 1, 1}}, cells(got.Data.Breakdown)); diff != "" {
		t.Errorf("revenue by source (-want +got):\n%s", diff)
	}
}

// A refund whose payment tally never receives (one made before the site
// used tally) waits RefundHold and no longer: at 09:00 + 59 minutes it is
// still held, at 10:00 it is exported as it is, unattributed. When its
// payment arrives after all (10:30), the exported refund is not changed nor
// written again: ClickHouse keeps one copy, unattributed. By source:
// Google 49.00 paid, nothing refunded; Unattributed 15.00 refunded, −15.00.
func TestHeldRefundWithoutItsPayment(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	t0 := time.Date(2026, 7, 1, 9, 0, 0, 0, time.UTC)
	site := refundFirstSite(t, h, t0, "vid-late")

	refundID := h.postStripe(t, site, chargeRefunded(h, "evt_r1", "pi_late", 4900, 1500))
	h.clock.Set(t0.Add(revenue.RefundHold - time.Minute))
	if _, err := h.app.Revenue.Export(ctx); err != nil {
		t.Fatal(err)
	}
	if r := refundRow(t, h, refundID); r.Exported {
		t.Fatalf("exported before its hold ended: %+v", r)
	}
	h.clock.Set(t0.Add(revenue.RefundHold))
	waitExported(t, h, refundID)
	if got, want := chRefund(t, h, refundID), (exportedRefund{Copies: 1}); got != want {
		t.Errorf("refund in ClickHouse after its hold: %+v, want %+v (unattributed)", got, want)
	}

	h.clock.Set(t0.Add(90 * time.Minute))
	paymentID := h.postStripe(t, site, checkoutBy(h, "evt_p1", "cs_late", "pi_late", 4900, "vid-late"))
	waitExported(t, h, paymentID)
	if _, err := h.app.Revenue.Export(ctx); err != nil {
		t.Fatal(err)
	}
	held := t0.Add(revenue.RefundHold)
	if got, want := refundRow(t, h, refundID), (ledgerRefund{HeldUntil: &held, Exported: true}); !cmp.Equal(got, want) {
		t.Errorf("exported refund once its payment came: %+v, want it unchanged, %+v", got, want)
	}
	if got, want := chRefund(t, h, refundID), (exportedRefund{Copies: 1}); got != want {
		t.Errorf("refund in ClickHouse once its payment came: %+v, want %+v (one copy, unchanged)", got, want)
	}

	p := client.StatsParams{SiteID: site, DateFrom: "2026-07-01", DateTo: "2026-07-02", Timezone: "UTC"}
	waitRevenue(t, h, p, 4900)
	got, err := h.client(h.key).RevenueBy(ctx, p, "source", "")
	if err != nil {
		t.Fatal(err)
	}
	want := []revenueCells{{"Google", 4900, 0, 4900, 1, 0, 1}, {"Unattributed", 0, 1500, -1500, 0, 1, 0}}
	if diff := cmp.Diff(want, cells(got.Data.Breakdown)); diff != "" {
		t.Errorf("revenue by source (-want +got):\n%s", diff)
	}
}

// A payment and its refund posted at the same time, 50 times over: each
// refund ends linked to its payment, with its visitor and source, and is in
// ClickHouse once.
func TestRefundAndPaymentAtOnce(t *testing.T) {
	h := newHarness(t)
	t0 := time.Date(2026, 7, 1, 9, 0, 0, 0, time.UTC)
	site := refundFirstSite(t, h, t0, "vid-race")
	h.clock.Set(t0.Add(10 * time.Minute))
	vid := ingestVisitor(h.siteID, "vid-race")
	const rounds = 50
	type pair struct{ payment, refund string }
	pairs := make([]pair, rounds)
	for i := range rounds {
		intent := fmt.Sprintf("pi_race_%d", i)
		var wg sync.WaitGroup
		wg.Go(func() {
			pairs[i].refund = h.postStripe(t, site, chargeRefunded(h, "evt_r_"+intent, intent, 4900, 1500))
		})
		wg.Go(func() {
			pairs[i].payment = h.postStripe(t, site, checkoutBy(h, "evt_p_"+intent, "cs_"+intent, intent, 4900, "vid-race"))
		})
		wg.Wait()
	}
	if t.Failed() {
		t.FailNow()
	}
	for i, p := range pairs {
		waitExported(t, h, p.refund)
		if got, want := refundRow(t, h, p.refund), (ledgerRefund{RefundOf: p.payment, Visitor: int64(vid), Exported: true}); !cmp.Equal(got, want) {
			t.Errorf("round %d: refund %+v, want %+v", i, got, want)
		}
		if got, want := chRefund(t, h, p.refund), (exportedRefund{Copies: 1, Visitor: vid, Source: "Google"}); got != want {
			t.Errorf("round %d: refund in ClickHouse %+v, want %+v", i, got, want)
		}
	}
}

// A refund sent to the payments API without a transaction id names no
// payment: it waits for none and is exported at once.
func TestAPIRefundWithoutPaymentWaitsForNone(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	res, err := h.client(h.key).Payment(ctx, api.PaymentRequest{SiteID: string(h.siteID), Amount: "-500", Currency: "USD"})
	if err != nil {
		t.Fatal(err)
	}
	if n := ledgerCount(t, h, string(h.siteID), "id = $2 AND held_until IS NULL", res.PaymentID); n != 1 {
		t.Errorf("the refund is held for a payment")
	}
	// exported by the exporter the refund woke, or by this call
	if _, err := h.app.Revenue.Export(ctx); err != nil {
		t.Fatal(err)
	}
	waitExported(t, h, res.PaymentID)
	if n := h.count("SELECT count() FROM payments WHERE payment_id = ? AND kind = 'refund'", res.PaymentID); n != 1 {
		t.Errorf("%d copies of the refund in ClickHouse, want 1", n)
	}
}

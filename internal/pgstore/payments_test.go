package pgstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/migrations"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/pgstore"
	"github.com/tally-analytics/tally/internal/testenv"
	"github.com/tally-analytics/tally/postgres"
)

// refundsSite is a store with a site s1 (base currency USD).
func refundsSite(t *testing.T) *pgstore.Store {
	t.Helper()
	s := open(t)
	ctx := context.Background()
	u, err := s.CreateUser(ctx, model.User{Email: "refunds@example.com", Name: "R", PasswordHash: "h", Plan: model.PlanPro})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateSite(ctx, model.Site{ID: "s1", Domain: "example.com", Timezone: "UTC", BaseCurrency: "USD"}, u.ID); err != nil {
		t.Fatal(err)
	}
	return s
}

// insert stores a converted payment or refund of 10.00 USD of the payment
// known as pi_1 to provider_a.
func insert(t *testing.T, s *pgstore.Store, kind model.PaymentKind, visitor uint64, heldUntil *time.Time) model.Payment {
	t.Helper()
	base := int64(1000)
	day := time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC)
	p, inserted, err := s.InsertPayment(context.Background(), model.Payment{SiteID: "s1", Provider: "provider_a",
		TransactionID: "tx-" + string(kind), Kind: kind, Amount: 1000, Currency: "USD", OccurredAt: day.Add(9 * time.Hour),
		PaymentRef: "pi_1", VisitorID: visitor, EventName: string(kind), BaseCurrency: "USD", BaseAmount: &base,
		FXRate: "1", FXDay: &day, HeldUntil: heldUntil})
	if err != nil || !inserted {
		t.Fatalf("insert %s: %v, inserted %t", kind, err, inserted)
	}
	return p
}

// exportable lists what the exporter would take at now, without exporting it.
func exportable(t *testing.T, s *pgstore.Store, now time.Time) map[model.PaymentKind]model.Payment {
	t.Helper()
	out := map[model.PaymentKind]model.Payment{}
	_, err := s.UnexportedPayments(context.Background(), now, 10, func(rows []model.Payment) error {
		for _, p := range rows {
			out[p.Kind] = p
		}
		return errRollback
	})
	if err != nil && !errors.Is(err, errRollback) {
		t.Fatal(err)
	}
	return out
}

// errRollback ends an export without marking anything exported.
var errRollback = errors.New("rolled back")

// A held refund is not exported before its hold ends; linked to its payment,
// it takes the payment's id and visitor and is exported at once.
func TestHeldRefundLinked(t *testing.T) {
	s := refundsSite(t)
	now := time.Date(2026, 7, 1, 9, 30, 0, 0, time.UTC)
	held := now.Add(time.Hour)
	refund := insert(t, s, model.KindRefund, 0, &held)
	if got := exportable(t, s, now); len(got) != 0 {
		t.Fatalf("exportable while held: %+v", got)
	}
	if got := exportable(t, s, held); got[model.KindRefund].ID != refund.ID {
		t.Fatalf("exportable once the hold ends: %+v, want the refund", got)
	}
	paid := insert(t, s, model.KindPayment, 42, nil)
	n, err := s.LinkRefunds(context.Background(), paid)
	if err != nil || n != 1 {
		t.Fatalf("link: %d, %v; want 1 refund linked", n, err)
	}
	got := exportable(t, s, now)[model.KindRefund]
	if got.ID != refund.ID || got.RefundOf != paid.ID || got.VisitorID != 42 || got.HeldUntil != nil {
		t.Errorf("linked refund %+v, want refund of %s by visitor 42, not held", got, paid.ID)
	}
	if n, err := s.LinkRefunds(context.Background(), paid); err != nil || n != 0 {
		t.Errorf("linking again: %d, %v; want none", n, err)
	}
}

// A refund the exporter is writing to ClickHouse (its row locked) is not
// linked meanwhile: LinkRefunds waits for the export to commit, then finds
// the refund exported and leaves it as ClickHouse has it.
func TestLinkRefundsWaitsForTheExport(t *testing.T) {
	s := refundsSite(t)
	ctx := context.Background()
	now := time.Date(2026, 7, 1, 10, 30, 0, 0, time.UTC)
	held := now.Add(-time.Minute) // the hold is over: the exporter takes it
	refund := insert(t, s, model.KindRefund, 0, &held)
	linked := make(chan int64, 1)
	early := int64(-1)
	n, err := s.UnexportedPayments(ctx, now, 10, func(rows []model.Payment) error {
		if len(rows) != 1 || rows[0].ID != refund.ID {
			t.Errorf("exporting %+v, want the refund alone", rows)
		}
		// the payment arrives while the refund is being written
		paid := insert(t, s, model.KindPayment, 42, nil)
		go func() {
			n, err := s.LinkRefunds(ctx, paid)
			if err != nil {
				t.Error(err)
			}
			linked <- n
		}()
		select {
		case early = <-linked:
			t.Errorf("LinkRefunds returned (%d linked) while the refund was being exported", early)
		case <-time.After(300 * time.Millisecond):
		}
		return nil
	})
	if err != nil || n != 1 {
		t.Fatalf("export: %d, %v", n, err)
	}
	if early < 0 {
		early = <-linked
	}
	if n := early; n != 0 {
		t.Errorf("LinkRefunds linked %d exported refunds, want none", n)
	}
	got, err := s.PaymentByKey(ctx, "s1", "provider_a", refund.TransactionID, model.KindRefund)
	if err != nil {
		t.Fatal(err)
	}
	if got.RefundOf != "" || got.VisitorID != 0 {
		t.Errorf("exported refund changed: %+v", got)
	}
}

// record stores a converted payment or refund of amount US cents of the
// payment its provider knows as ref, keyed tx.
func record(t *testing.T, s *pgstore.Store, provider string, kind model.PaymentKind, tx, ref string, amount int64, reinstatement bool) {
	t.Helper()
	day := time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC)
	if _, inserted, err := s.InsertPayment(context.Background(), model.Payment{SiteID: "s1", Provider: provider,
		TransactionID: tx, Kind: kind, Amount: amount, Currency: "USD", OccurredAt: day.Add(9 * time.Hour), PaymentRef: ref,
		EventName: string(kind), BaseCurrency: "USD", BaseAmount: &amount, FXRate: "1", FXDay: &day,
		Reinstatement: reinstatement}); err != nil || !inserted {
		t.Fatalf("record %s %s: %v, inserted %t", kind, tx, err, inserted)
	}
}

// refundedOf is what InsertRefund gives settle for a refund keyed tx of
// the Stripe payment ref; the refund is inserted with amount (0: none).
func refundedOf(t *testing.T, s *pgstore.Store, tx, ref string, amount int64) int64 {
	t.Helper()
	got := int64(-1)
	errNone := errors.New("nothing to insert")
	day := time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC)
	p := model.Payment{SiteID: "s1", Provider: "provider_a", TransactionID: tx, Kind: model.KindRefund, Amount: amount,
		Currency: "USD", OccurredAt: day.Add(10 * time.Hour), PaymentRef: ref, EventName: "refund", BaseCurrency: "USD",
		BaseAmount: &amount, FXRate: "1", FXDay: &day}
	_, _, err := s.InsertRefund(context.Background(), p, func(refunded int64) (model.Payment, error) {
		got = refunded
		if amount == 0 {
			return p, errNone
		}
		return p, nil
	})
	if err != nil && !errors.Is(err, errNone) {
		t.Fatal(err)
	}
	return got
}

// What is refunded of a payment, as a running refund total counts it, is
// its refunds (a chargeback is one) less what won disputes brought back.
func TestInsertRefundNetsReinstatements(t *testing.T) {
	s := refundsSite(t)
	record(t, s, "provider_a", model.KindPayment, "pi_1", "pi_1", 10000, false)
	record(t, s, "provider_a", model.KindRefund, "re_1", "pi_1", 3000, false)
	// 30.00 refunded
	if got := refundedOf(t, s, "ch_1:9999", "pi_1", 0); got != 3000 {
		t.Errorf("after a refund of 30.00: %d refunded, want 3000", got)
	}
	// the 70.00 left is taken back by the bank: 30.00 + 70.00
	record(t, s, "provider_a", model.KindRefund, "dp_1", "pi_1", 7000, false)
	if got := refundedOf(t, s, "ch_1:9999", "pi_1", 0); got != 10000 {
		t.Errorf("after a chargeback of 70.00: %d refunded, want 10000", got)
	}
	// and given back, the dispute won: 30.00 + 70.00 − 70.00
	record(t, s, "provider_a", model.KindPayment, "dp_1:reinstated", "pi_1", 7000, true)
	if got := refundedOf(t, s, "ch_1:9999", "pi_1", 0); got != 3000 {
		t.Errorf("after the dispute is won: %d refunded, want 3000", got)
	}
	// a refund of 20.00 more: 30.00 + 70.00 − 70.00 + 20.00; the refund's
	// own repeat does not count itself: 30.00
	if got := refundedOf(t, s, "ch_1:5000", "pi_1", 2000); got != 3000 {
		t.Errorf("recording a refund of 20.00: %d refunded before it, want 3000", got)
	}
	if got := refundedOf(t, s, "ch_1:9999", "pi_1", 0); got != 5000 {
		t.Errorf("after a refund of 20.00: %d refunded, want 5000", got)
	}
	if got := refundedOf(t, s, "ch_1:5000", "pi_1", 0); got != 3000 {
		t.Errorf("the refund of 20.00 again: %d refunded besides it, want 3000", got)
	}
	// a payment of the same ref that is no reinstatement takes nothing off
	record(t, s, "provider_a", model.KindPayment, "in_1", "pi_1", 1000, false)
	if got := refundedOf(t, s, "ch_1:9999", "pi_1", 0); got != 5000 {
		t.Errorf("after a payment that is no reinstatement: %d refunded, want 5000", got)
	}
	// money back recorded before its chargeback (deliveries out of order)
	// brings back nothing yet: 0, not −40.00
	record(t, s, "provider_a", model.KindPayment, "pi_2", "pi_2", 4000, false)
	record(t, s, "provider_a", model.KindPayment, "dp_2:reinstated", "pi_2", 4000, true)
	if got := refundedOf(t, s, "ch_2:9999", "pi_2", 0); got != 0 {
		t.Errorf("money back before its chargeback: %d refunded, want 0", got)
	}
	// another provider's rows with the same ref are not this payment's
	record(t, s, "provider_c", model.KindRefund, "adj_1", "pi_2", 500, false)
	if got := refundedOf(t, s, "ch_2:9999", "pi_2", 0); got != 0 {
		t.Errorf("with another provider's refund of the same ref: %d refunded, want 0", got)
	}
}

// Migration 0019 marks the money back recorded before it by the keys tally
// gave it: Stripe's "<dispute id>:reinstated", Paddle's adjustment ids; no
// other row.
func TestReinstatementsMarkedByMigration(t *testing.T) {
	url := testenv.Postgres(t)
	s := openWith(t, url, testKey(1))
	ctx := context.Background()
	u, err := s.CreateUser(ctx, model.User{Email: "reinstated@example.com", Name: "R", PasswordHash: "h", Plan: model.PlanPro})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateSite(ctx, model.Site{ID: "s1", Domain: "example.com", Timezone: "UTC", BaseCurrency: "USD"}, u.ID); err != nil {
		t.Fatal(err)
	}
	rows := []struct {
		provider string
		kind     model.PaymentKind
		tx, ref  string
		want     bool
	}{
		{"provider_a", model.KindPayment, "pi_1", "pi_1", false},
		{"provider_a", model.KindRefund, "dp_1", "pi_1", false},
		{"provider_a", model.KindPayment, "dp_1:reinstated", "pi_1", true},
		{"provider_a", model.KindRefund, "ch_1:500", "pi_1", false},
		{"provider_c", model.KindPayment, "txn_1", "txn_1", false},
		{"provider_c", model.KindRefund, "adj_1", "txn_1", false},
		{"provider_c", model.KindPayment, "adj_2", "txn_1", true},
		{"provider_b", model.KindPayment, "adj_3", "adj_3", false}, // another provider's id that looks like one
	}
	for _, r := range rows {
		record(t, s, r.provider, r.kind, r.tx, r.ref, 1000, false) // as recorded before the column
	}
	ms, err := migrations.Load(postgres.Migrations)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close(ctx)
	ran := false
	for _, m := range ms {
		if m.Version != 19 {
			continue
		}
		for _, stmt := range m.Statements {
			if _, err := raw.Exec(ctx, stmt); err != nil {
				t.Fatal(err)
			}
		}
		ran = true
	}
	if !ran {
		t.Fatal("no migration 0019")
	}
	for _, r := range rows {
		p, err := s.PaymentByKey(ctx, "s1", r.provider, r.tx, r.kind)
		if err != nil {
			t.Fatal(err)
		}
		if p.Reinstatement != r.want {
			t.Errorf("%s %s %s: reinstatement %t, want %t", r.provider, r.kind, r.tx, p.Reinstatement, r.want)
		}
	}
}

// PaymentByRef never takes the money a won dispute brought back for the
// payment refunds refer to: it shares the payment's ref, and when tally
// never had the payment itself (made before the site used tally) it is all
// there is of that ref.
func TestPaymentByRefIsNoReinstatement(t *testing.T) {
	s := refundsSite(t)
	ctx := context.Background()
	record(t, s, "provider_a", model.KindPayment, "dp_1:reinstated", "pi_1", 7000, true)
	if _, err := s.PaymentByRef(ctx, "s1", "provider_a", "pi_1"); !errors.Is(err, errs.ErrNotFound) {
		t.Errorf("only the money back of pi_1 recorded: %v, want not found", err)
	}
	record(t, s, "provider_a", model.KindPayment, "ch_1", "pi_1", 10000, false)
	p, err := s.PaymentByRef(ctx, "s1", "provider_a", "pi_1")
	if err != nil || p.TransactionID != "ch_1" {
		t.Errorf("with the payment recorded after its money back: %q, %v; want ch_1", p.TransactionID, err)
	}
}

package pgstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/pgstore"
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

package revenue

import (
	"context"
	"time"

	"github.com/tally-analytics/tally/internal/model"
)

const exportBatch = 1000

// RunExporter moves converted ledger rows to ClickHouse (on every new
// payment, and every few seconds), converts payments that waited for a rate
// and forgets expired checkout claims (every minute), until ctx ends.
func (s *Service) RunExporter(ctx context.Context) {
	export := time.NewTicker(2 * time.Second)
	convert := time.NewTicker(time.Minute)
	defer export.Stop()
	defer convert.Stop()
	for {
		select {
		case <-ctx.Done():
			final, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			if _, err := s.Export(final); err != nil {
				s.log.Warn("revenue: final export", "err", err)
			}
			cancel()
			return
		case <-convert.C:
			if _, err := s.ConvertPending(ctx); err != nil {
				s.log.Warn("revenue: converting pending payments", "err", err)
			}
			if _, err := s.ledger.ForgetClaims(ctx, s.now().Add(-ClaimTTL), model.SubscriptionKeyPrefix); err != nil {
				s.log.Warn("revenue: forgetting expired checkout claims", "err", err)
			}
		case <-s.exported:
		case <-export.C:
		}
		if _, err := s.Export(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("revenue: export to ClickHouse; retrying", "err", err)
		}
	}
}

// Export writes every converted, unexported ledger row to ClickHouse, but
// for refunds held waiting for their payment (RefundHold), and returns how
// many. Rows ClickHouse already has (an export that stopped between its
// insert and its mark) are not written again; several instances export
// disjoint rows (SKIP LOCKED).
func (s *Service) Export(ctx context.Context) (int, error) {
	total := 0
	for {
		n, err := s.ledger.UnexportedPayments(ctx, s.now(), exportBatch, func(rows []model.Payment) error {
			ids := make([]string, len(rows))
			for i, p := range rows {
				ids[i] = p.ID
			}
			have, err := s.warehouse.ExistingPaymentIDs(ctx, ids)
			if err != nil {
				return err
			}
			fresh := rows[:0:0]
			for _, p := range rows {
				if !have[p.ID] {
					fresh = append(fresh, p)
				}
			}
			if len(fresh) == 0 {
				return nil
			}
			return s.warehouse.InsertPayments(ctx, fresh, s.now())
		})
		total += n
		if err != nil || n < exportBatch {
			return total, err
		}
	}
}

// ConvertPending converts the payments whose rates have arrived since they
// were recorded, and returns how many it converted. It reads every pending
// payment, page by page: payments that still have no rate (a currency the
// rates do not cover) never hold back the ones after them.
func (s *Service) ConvertPending(ctx context.Context) (int, error) {
	n := 0
	defer func() {
		if n > 0 {
			s.wake()
		}
	}()
	var after model.Payment
	for {
		pending, err := s.ledger.PendingPayments(ctx, after, exportBatch)
		if err != nil {
			return n, err
		}
		for _, p := range pending {
			f, err := s.ratesFor(ctx, p.Currency, p.BaseCurrency, p.OccurredAt)
			if err != nil {
				return n, err
			}
			base, rate, ok, err := f.amount(p.Amount)
			if err != nil {
				return n, err
			}
			if !ok {
				continue
			}
			if err := s.ledger.SetConversion(ctx, p.ID, base, rate, f.day); err != nil {
				return n, err
			}
			n++
		}
		if len(pending) < exportBatch {
			return n, nil
		}
		after = pending[len(pending)-1]
	}
}

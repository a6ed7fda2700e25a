package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/model"
)

const paymentColumns = `id::text, site_id, provider, transaction_id, kind, amount, currency, occurred_at,
	coalesce(payment_ref, ''), coalesce(refund_of::text, ''), coalesce(visitor_id, 0), event_name, metadata,
	base_currency, base_amount, coalesce(fx_rate::text, ''), fx_day, attribution, held_until, reinstatement, created_at`

func scanPayment(row interface{ Scan(...any) error }) (model.Payment, error) {
	var p model.Payment
	var site, kind string
	var visitor int64
	var attribution []byte
	err := row.Scan(&p.ID, &site, &p.Provider, &p.TransactionID, &kind, &p.Amount, &p.Currency, &p.OccurredAt,
		&p.PaymentRef, &p.RefundOf, &visitor, &p.EventName, &p.Metadata, &p.BaseCurrency, &p.BaseAmount, &p.FXRate,
		&p.FXDay, &attribution, &p.HeldUntil, &p.Reinstatement, &p.CreatedAt)
	if err != nil {
		return p, err
	}
	p.SiteID, p.Kind, p.VisitorID = model.SiteID(site), model.PaymentKind(kind), uint64(visitor)
	p.OccurredAt, p.CreatedAt = p.OccurredAt.UTC(), p.CreatedAt.UTC() // pgx reads them in the process's zone
	if p.HeldUntil != nil {
		held := p.HeldUntil.UTC()
		p.HeldUntil = &held
	}
	if len(attribution) > 0 {
		var a model.PaymentAttribution
		if err := json.Unmarshal(attribution, &a); err != nil {
			return p, fmt.Errorf("attribution: %w", err)
		}
		p.Attribution = &a
	}
	return p, nil
}

func nullIfZero(v uint64) *int64 {
	if v == 0 {
		return nil
	}
	i := int64(v)
	return &i
}

// InsertPayment adds a payment to the ledger unless one with the same site,
// provider, transaction id and kind exists; inserted reports which, and the
// returned payment is the stored one in both cases. Concurrent identical
// inserts store one row.
func (s *Store) InsertPayment(ctx context.Context, p model.Payment) (stored model.Payment, inserted bool, err error) {
	return insertPayment(ctx, s.pool, p)
}

// querier is a pool or a transaction.
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

func insertPayment(ctx context.Context, q querier, p model.Payment) (stored model.Payment, inserted bool, err error) {
	var attribution []byte
	if p.Attribution != nil {
		if attribution, err = json.Marshal(p.Attribution); err != nil {
			return p, false, fmt.Errorf("pgstore: insert payment: %w", err)
		}
	}
	var metadata any
	if len(p.Metadata) > 0 {
		metadata = p.Metadata
	}
	var refundOf any
	if p.RefundOf != "" {
		refundOf = p.RefundOf
	}
	var fxRate any
	if p.FXRate != "" {
		fxRate = p.FXRate
	}
	stored, err = scanPayment(q.QueryRow(ctx, `INSERT INTO payments (site_id, provider, transaction_id, kind, amount,
			currency, occurred_at, payment_ref, refund_of, visitor_id, event_name, metadata, base_currency, base_amount,
			fx_rate, fx_day, attribution, held_until, reinstatement)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)
		ON CONFLICT (site_id, provider, transaction_id, kind) DO NOTHING RETURNING `+paymentColumns,
		string(p.SiteID), p.Provider, p.TransactionID, string(p.Kind), p.Amount, p.Currency, p.OccurredAt,
		nullable(p.PaymentRef), refundOf, nullIfZero(p.VisitorID), p.EventName, metadata, p.BaseCurrency, p.BaseAmount,
		fxRate, p.FXDay, attribution, p.HeldUntil, p.Reinstatement))
	if err == nil {
		return stored, true, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return p, false, translate("pgstore: insert payment", err)
	}
	stored, err = paymentByKey(ctx, q, p.SiteID, p.Provider, p.TransactionID, p.Kind)
	return stored, false, err
}

// InsertRefund records a refund of the payment its provider knows as
// p.PaymentRef, given what is refunded of that payment already: settle gets
// the sum of the refunds recorded of it (but for p's own transaction id, whose
// repeat is a duplicate) less the money won disputes brought back of it (its
// reinstatements), never below zero, and returns the refund to insert, or an
// error that InsertRefund returns as it is. The refunds of one payment are
// recorded one at a time (a lock on the payment, held until the insert
// commits), so two at once never both count the same part. settle must not
// use the store.
func (s *Store) InsertRefund(ctx context.Context, p model.Payment, settle func(refunded int64) (model.Payment, error)) (stored model.Payment, inserted bool, err error) {
	var settleErr error
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))",
			string(p.SiteID)+"\n"+p.Provider+"\n"+p.PaymentRef); err != nil {
			return err
		}
		// A chargeback is a refund here, but a provider's running total
		// counts refunds only: a won dispute's money back cancels its
		// chargeback. Money back recorded before its chargeback (deliveries
		// out of order) brings back nothing yet, hence the floor at zero.
		var refunded int64
		if err := tx.QueryRow(ctx, `SELECT greatest(coalesce(sum(CASE kind WHEN 'refund' THEN amount ELSE -amount END), 0), 0)
			FROM payments WHERE site_id = $1 AND provider = $2 AND payment_ref = $3
				AND (kind = 'refund' AND transaction_id <> $4 OR kind = 'payment' AND reinstatement)`,
			string(p.SiteID), p.Provider, p.PaymentRef, p.TransactionID).Scan(&refunded); err != nil {
			return err
		}
		settled, err := settle(refunded)
		if err != nil {
			settleErr = err
			return err
		}
		stored, inserted, err = insertPayment(ctx, tx, settled)
		return err
	})
	if settleErr != nil {
		return p, false, settleErr
	}
	if err != nil {
		return p, false, translate("pgstore: insert refund", err)
	}
	return stored, inserted, nil
}

// PaymentByKey finds a payment by its deduplication key.
func (s *Store) PaymentByKey(ctx context.Context, site model.SiteID, provider, transactionID string, kind model.PaymentKind) (model.Payment, error) {
	return paymentByKey(ctx, s.pool, site, provider, transactionID, kind)
}

func paymentByKey(ctx context.Context, q querier, site model.SiteID, provider, transactionID string, kind model.PaymentKind) (model.Payment, error) {
	p, err := scanPayment(q.QueryRow(ctx, "SELECT "+paymentColumns+` FROM payments
		WHERE site_id = $1 AND provider = $2 AND transaction_id = $3 AND kind = $4`,
		string(site), provider, transactionID, string(kind)))
	return p, translate("pgstore: payment by key", err)
}

// PaymentByRef finds the payment of a site and provider that refunds refer
// to by ref: never the money a won dispute brought back, which shares the
// ref and may be all tally has of it.
func (s *Store) PaymentByRef(ctx context.Context, site model.SiteID, provider, ref string) (model.Payment, error) {
	p, err := scanPayment(s.pool.QueryRow(ctx, "SELECT "+paymentColumns+` FROM payments
		WHERE site_id = $1 AND provider = $2 AND payment_ref = $3 AND kind = 'payment' AND NOT reinstatement
		ORDER BY created_at LIMIT 1`,
		string(site), provider, ref))
	return p, translate("pgstore: payment by ref", err)
}

// UnexportedPayments locks up to limit converted payments and refunds that
// are not in ClickHouse yet, nor held at now (a refund waiting for its
// payment until held_until), and calls export with them inside the
// transaction; when export succeeds they are marked exported. Rows locked by
// another instance, or by LinkRefunds, are skipped. The lock is what keeps
// LinkRefunds from changing a row while it is written to ClickHouse.
func (s *Store) UnexportedPayments(ctx context.Context, now time.Time, limit int, export func([]model.Payment) error) (int, error) {
	var n int
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, "SELECT "+paymentColumns+` FROM payments
			WHERE exported_at IS NULL AND kind <> 'failed' AND base_amount IS NOT NULL
				AND (held_until IS NULL OR held_until <= $1)
			ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED`, now, limit)
		if err != nil {
			return err
		}
		payments, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (model.Payment, error) { return scanPayment(r) })
		if err != nil || len(payments) == 0 {
			return err
		}
		if err := export(payments); err != nil {
			return err
		}
		ids := make([]string, len(payments))
		for i, p := range payments {
			ids[i] = p.ID
		}
		n = len(payments)
		_, err = tx.Exec(ctx, "UPDATE payments SET exported_at = now() WHERE id = ANY($1::uuid[])", ids)
		return err
	})
	return n, translate("pgstore: export payments", err)
}

// LinkRefunds links to paid the refunds of it (same site and provider,
// payment_ref its ref) recorded before it and not exported yet: each takes
// paid's id, visitor and attribution, as a refund recorded after its payment
// does, and is no longer held. It returns how many it linked. A refund the
// exporter is writing to ClickHouse is locked: the update waits for the
// export to commit, then finds it exported and leaves it as it is.
func (s *Store) LinkRefunds(ctx context.Context, paid model.Payment) (int64, error) {
	var attribution []byte
	if paid.Attribution != nil {
		var err error
		if attribution, err = json.Marshal(paid.Attribution); err != nil {
			return 0, fmt.Errorf("pgstore: link refunds: %w", err)
		}
	}
	tag, err := s.pool.Exec(ctx, `UPDATE payments SET refund_of = $4, visitor_id = $5, attribution = $6, held_until = NULL
		WHERE site_id = $1 AND provider = $2 AND payment_ref = $3 AND kind = 'refund'
			AND refund_of IS NULL AND exported_at IS NULL`,
		string(paid.SiteID), paid.Provider, paid.PaymentRef, paid.ID, nullIfZero(paid.VisitorID), attribution)
	return tag.RowsAffected(), translate("pgstore: link refunds", err)
}

// PendingPayments lists payments still waiting for an exchange rate, in the
// order of (occurred_at, id), from the one after after (zero: the first).
func (s *Store) PendingPayments(ctx context.Context, after model.Payment, limit int) ([]model.Payment, error) {
	id := after.ID
	if id == "" {
		id = "00000000-0000-0000-0000-000000000000"
	}
	rows, err := s.pool.Query(ctx, "SELECT "+paymentColumns+` FROM payments
		WHERE base_amount IS NULL AND kind <> 'failed' AND (occurred_at, id) > ($1, $2::uuid)
		ORDER BY occurred_at, id LIMIT $3`, after.OccurredAt, id, limit)
	if err != nil {
		return nil, translate("pgstore: pending payments", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (model.Payment, error) { return scanPayment(r) })
	return out, translate("pgstore: pending payments", err)
}

// CountPending counts a site's payments of a period that wait for a rate.
func (s *Store) CountPending(ctx context.Context, site model.SiteID, from, to time.Time) (int64, error) {
	var n int64
	err := s.pool.QueryRow(ctx, `SELECT count(*) FROM payments WHERE site_id = $1 AND base_amount IS NULL
		AND kind <> 'failed' AND occurred_at >= $2 AND occurred_at < $3`, string(site), from, to).Scan(&n)
	return n, translate("pgstore: count pending", err)
}

// DeletePayments deletes a site's payments from one provider (or source)
// and says how many went.
func (s *Store) DeletePayments(ctx context.Context, site model.SiteID, provider string) (int64, error) {
	tag, err := s.pool.Exec(ctx, "DELETE FROM payments WHERE site_id = $1 AND provider = $2", string(site), provider)
	return tag.RowsAffected(), translate("pgstore: delete payments", err)
}

// SetConversion records the converted amount of a pending payment.
func (s *Store) SetConversion(ctx context.Context, id string, baseAmount int64, rate string, day time.Time) error {
	tag, err := s.pool.Exec(ctx, `UPDATE payments SET base_amount = $2, fx_rate = $3, fx_day = $4
		WHERE id = $1 AND base_amount IS NULL`, id, baseAmount, rate, day)
	if err == nil && tag.RowsAffected() == 0 {
		return fmt.Errorf("pgstore: set conversion: %w", errs.ErrNotFound)
	}
	return translate("pgstore: set conversion", err)
}

// PaymentCounts counts the payments of site recorded by provider, by
// transaction id (the fault soak checks that each tracked revenue event is
// recorded once).
func (s *Store) PaymentCounts(ctx context.Context, site model.SiteID, provider string) (map[string]int64, error) {
	rows, err := s.pool.Query(ctx, `SELECT transaction_id, count(*) FROM payments WHERE site_id = $1 AND provider = $2
		GROUP BY transaction_id`, string(site), provider)
	if err != nil {
		return nil, translate("pgstore: payment counts", err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var id string
		var n int64
		if err := rows.Scan(&id, &n); err != nil {
			return nil, translate("pgstore: payment counts", err)
		}
		out[id] = n
	}
	return out, translate("pgstore: payment counts", rows.Err())
}

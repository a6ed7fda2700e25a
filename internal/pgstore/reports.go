package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/model"
)

const recipientColumns = "id, site_id, email, weekly, monthly, created_at"

func scanRecipient(row interface{ Scan(...any) error }) (model.ReportRecipient, error) {
	var r model.ReportRecipient
	var id, site string
	err := row.Scan(&id, &site, &r.Email, &r.Weekly, &r.Monthly, &r.CreatedAt)
	r.ID, r.SiteID = model.ReportRecipientID(id), model.SiteID(site)
	return r, err
}

// SetReportRecipient adds a recipient to a site, or changes the
// frequencies of the site's recipient of that email. A site that has limit
// recipients and not this one is errs.ErrConflict; a site that does not
// exist, errs.ErrNotFound. Changes to one site wait for each other (its
// row is locked, its other writes not blocked), so none passes the limit.
func (s *Store) SetReportRecipient(ctx context.Context, r model.ReportRecipient, limit int) (model.ReportRecipient, error) {
	var saved model.ReportRecipient
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var n int
		if err := tx.QueryRow(ctx, "SELECT 1 FROM sites WHERE id = $1 FOR NO KEY UPDATE", string(r.SiteID)).Scan(&n); err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, "SELECT count(*) FROM report_recipients WHERE site_id = $1 AND email <> $2",
			string(r.SiteID), r.Email).Scan(&n); err != nil {
			return err
		}
		if n >= limit {
			return errFull
		}
		var err error
		saved, err = scanRecipient(tx.QueryRow(ctx, `INSERT INTO report_recipients (site_id, email, weekly, monthly, created_at)
			VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (site_id, email) DO UPDATE SET weekly = excluded.weekly, monthly = excluded.monthly
			RETURNING `+recipientColumns, string(r.SiteID), r.Email, r.Weekly, r.Monthly, r.CreatedAt))
		return err
	})
	if errors.Is(err, errFull) {
		return model.ReportRecipient{}, fmt.Errorf("pgstore: set report recipient: %w", errs.ErrConflict)
	}
	return saved, translate("pgstore: set report recipient", err)
}

// ReportRecipients lists a site's recipients by email.
func (s *Store) ReportRecipients(ctx context.Context, site model.SiteID) ([]model.ReportRecipient, error) {
	rows, err := s.pool.Query(ctx, "SELECT "+recipientColumns+" FROM report_recipients WHERE site_id = $1 ORDER BY email", string(site))
	if err != nil {
		return nil, translate("pgstore: report recipients", err)
	}
	list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (model.ReportRecipient, error) { return scanRecipient(r) })
	return list, translate("pgstore: report recipients", err)
}

// DeleteReportRecipient removes a recipient of site, and with it the
// record of its deliveries; another site's, or an unknown id, is
// errs.ErrNotFound.
func (s *Store) DeleteReportRecipient(ctx context.Context, site model.SiteID, id model.ReportRecipientID) error {
	tag, err := s.pool.Exec(ctx, "DELETE FROM report_recipients WHERE id = $1 AND site_id = $2", string(id), string(site))
	if err == nil && tag.RowsAffected() == 0 {
		err = pgx.ErrNoRows
	}
	return translate("pgstore: delete report recipient", err)
}

// ReportSubscriptions lists every recipient of every site, with the site's
// time zone.
func (s *Store) ReportSubscriptions(ctx context.Context) ([]model.ReportSubscription, error) {
	rows, err := s.pool.Query(ctx, `SELECT r.id, r.site_id, r.email, r.weekly, r.monthly, r.created_at, s.timezone
		FROM report_recipients r JOIN sites s ON s.id = r.site_id ORDER BY r.site_id, r.email`)
	if err != nil {
		return nil, translate("pgstore: report subscriptions", err)
	}
	list, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (model.ReportSubscription, error) {
		var sub model.ReportSubscription
		var id, site string
		err := row.Scan(&id, &site, &sub.Recipient.Email, &sub.Recipient.Weekly, &sub.Recipient.Monthly, &sub.Recipient.CreatedAt, &sub.Timezone)
		sub.Recipient.ID, sub.Recipient.SiteID = model.ReportRecipientID(id), model.SiteID(site)
		return sub, err
	})
	return list, translate("pgstore: report subscriptions", err)
}

// SettledReports lists the deliveries of periods from since on that need
// no more attempts: sent, handed over with no reply, or tried maxAttempts
// times.
func (s *Store) SettledReports(ctx context.Context, since time.Time, maxAttempts int) ([]model.ReportDelivery, error) {
	rows, err := s.pool.Query(ctx, `SELECT recipient_id, period_kind, period_start FROM report_deliveries
		WHERE period_start >= $1 AND (sent_at IS NOT NULL OR unknown_at IS NOT NULL OR attempts >= $2)`, since, maxAttempts)
	if err != nil {
		return nil, translate("pgstore: settled reports", err)
	}
	list, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (model.ReportDelivery, error) {
		var d model.ReportDelivery
		var id, kind string
		err := row.Scan(&id, &kind, &d.PeriodStart)
		d.Recipient, d.Kind = model.ReportRecipientID(id), model.ReportKind(kind)
		return d, err
	})
	return list, translate("pgstore: settled reports", err)
}

// ClaimReport claims a delivery for one attempt until leaseUntil: it makes
// its row (once: ON CONFLICT DO NOTHING) and takes it when it is not sent
// (nor maybe sent: ReportUnknown), has attempts left and no other claim holds it at now. ok is false when
// another server holds it, it was sent, or its attempts are spent: this
// caller then sends nothing. Concurrent claims of one delivery wait on its
// row, and only one takes it.
func (s *Store) ClaimReport(ctx context.Context, d model.ReportDelivery, now, leaseUntil time.Time, maxAttempts int) (model.ReportAttempt, bool, error) {
	var a model.ReportAttempt
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO report_deliveries (recipient_id, period_kind, period_start) VALUES ($1, $2, $3)
			ON CONFLICT (recipient_id, period_kind, period_start) DO NOTHING`, string(d.Recipient), string(d.Kind), d.PeriodStart); err != nil {
			return err
		}
		return tx.QueryRow(ctx, `UPDATE report_deliveries SET attempts = attempts + 1, claimed_until = $4
			WHERE recipient_id = $1 AND period_kind = $2 AND period_start = $3
			  AND sent_at IS NULL AND unknown_at IS NULL AND attempts < $6 AND (claimed_until IS NULL OR claimed_until <= $5)
			RETURNING id, attempts`, string(d.Recipient), string(d.Kind), d.PeriodStart, leaseUntil, now, maxAttempts).Scan(&a.ID, &a.Attempt)
	})
	var pgErr *pgconn.PgError
	if errors.Is(err, pgx.ErrNoRows) || (errors.As(err, &pgErr) && pgErr.Code == "23503") {
		// not to be taken, or its recipient was removed meanwhile
		return model.ReportAttempt{}, false, nil
	}
	return a, err == nil, translate("pgstore: claim report", err)
}

// ReportSent records that an attempt's message was accepted by the mail
// server (the error of an earlier attempt stays, for the record).
func (s *Store) ReportSent(ctx context.Context, id string, at time.Time) error {
	_, err := s.pool.Exec(ctx, "UPDATE report_deliveries SET sent_at = $2, claimed_until = NULL WHERE id = $1", id, at)
	return translate("pgstore: report sent", err)
}

// ReportUnknown records an attempt whose message was handed over with no
// reply, so may have arrived: the delivery is settled, never claimed
// again, with why kept (a message without secrets).
func (s *Store) ReportUnknown(ctx context.Context, id, reason string, at time.Time) error {
	_, err := s.pool.Exec(ctx, "UPDATE report_deliveries SET unknown_at = $3, claimed_until = NULL, last_error = $2 WHERE id = $1", id, reason, at)
	return translate("pgstore: report unknown", err)
}

// ReportFailed records why an attempt failed (a message without secrets)
// and holds the delivery until retryAt, when the next attempt may claim it.
func (s *Store) ReportFailed(ctx context.Context, id, reason string, retryAt time.Time) error {
	_, err := s.pool.Exec(ctx, "UPDATE report_deliveries SET claimed_until = $3, last_error = $2 WHERE id = $1", id, reason, retryAt)
	return translate("pgstore: report failed", err)
}

// ForgetReports deletes the deliveries of periods before since: they are
// never sent again whatever their state; and the unsubscribe tokens of
// messages made before since, whose links then open nothing.
func (s *Store) ForgetReports(ctx context.Context, since time.Time) (int64, error) {
	tag, err := s.pool.Exec(ctx, "DELETE FROM report_deliveries WHERE period_start < $1", since)
	if err == nil {
		_, err = s.pool.Exec(ctx, "DELETE FROM report_unsubscribes WHERE created_at < $1", since)
	}
	return tag.RowsAffected(), translate("pgstore: forget reports", err)
}

// AddReportUnsubscribe keeps the hash of a message's unsubscribe token for
// its recipient; a recipient removed meanwhile is errs.ErrNotFound.
func (s *Store) AddReportUnsubscribe(ctx context.Context, recipient model.ReportRecipientID, tokenHash []byte, at time.Time) error {
	return s.addUnsubscribe(ctx, reportList, string(recipient), tokenHash, at)
}

// ReportUnsubscribeSite is the domain of the site whose reports the
// recipient of an unsubscribe token gets; an unknown token is
// errs.ErrNotFound. It changes nothing.
func (s *Store) ReportUnsubscribeSite(ctx context.Context, tokenHash []byte) (string, error) {
	return s.unsubscribeSite(ctx, reportList, tokenHash)
}

// UnsubscribeReports removes the recipient of an unsubscribe token, with
// its deliveries and tokens, and returns its site's domain; an unknown
// token (or one whose recipient is gone) is errs.ErrNotFound.
func (s *Store) UnsubscribeReports(ctx context.Context, tokenHash []byte) (string, error) {
	return s.unsubscribe(ctx, reportList, tokenHash)
}

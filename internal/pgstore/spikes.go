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

const spikeRecipientColumns = "id, site_id, email, created_at"

func scanSpikeRecipient(row interface{ Scan(...any) error }) (model.SpikeRecipient, error) {
	var r model.SpikeRecipient
	var id, site string
	err := row.Scan(&id, &site, &r.Email, &r.CreatedAt)
	r.ID, r.SiteID = model.SpikeRecipientID(id), model.SiteID(site)
	return r, err
}

// SpikeNotification is a site's traffic spike notification with its
// recipients; a site without one is errs.ErrNotFound.
func (s *Store) SpikeNotification(ctx context.Context, site model.SiteID) (model.SpikeNotification, error) {
	n := model.SpikeNotification{SiteID: site}
	var last *time.Time
	err := s.pool.QueryRow(ctx, "SELECT threshold, last_sent_at FROM spike_notifications WHERE site_id = $1 AND threshold IS NOT NULL", string(site)).
		Scan(&n.Threshold, &last)
	if err != nil {
		return model.SpikeNotification{}, translate("pgstore: spike notification", err)
	}
	if last != nil {
		n.LastSentAt = *last
	}
	rows, err := s.pool.Query(ctx, "SELECT "+spikeRecipientColumns+" FROM spike_recipients WHERE site_id = $1 ORDER BY email", string(site))
	if err != nil {
		return model.SpikeNotification{}, translate("pgstore: spike notification", err)
	}
	n.Recipients, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (model.SpikeRecipient, error) { return scanSpikeRecipient(r) })
	return n, translate("pgstore: spike notification", err)
}

// SetSpikeThreshold turns a site's spike notification on with threshold,
// or changes its threshold (its recipients and its last notification
// stay); a site that does not exist is errs.ErrNotFound.
func (s *Store) SetSpikeThreshold(ctx context.Context, site model.SiteID, threshold int, at time.Time) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO spike_notifications (site_id, threshold, updated_at) VALUES ($1, $2, $3)
		ON CONFLICT (site_id) DO UPDATE SET threshold = excluded.threshold, updated_at = excluded.updated_at`,
		string(site), threshold, at)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23503" { // foreign_key_violation: no such site
		err = pgx.ErrNoRows
	}
	return translate("pgstore: set spike threshold", err)
}

// DeleteSpikeNotification turns a site's spike notification off and
// removes its recipients and their unsubscribe links; a site without one
// is errs.ErrNotFound. Its last notification is kept: turned on again, it
// stays quiet for what is left of the quiet period, so that turning it off
// and on cannot send mail at will.
func (s *Store) DeleteSpikeNotification(ctx context.Context, site model.SiteID, at time.Time) error {
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, "UPDATE spike_notifications SET threshold = NULL, updated_at = $2 WHERE site_id = $1 AND threshold IS NOT NULL",
			string(site), at)
		if err == nil && tag.RowsAffected() == 0 {
			return pgx.ErrNoRows
		}
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, "DELETE FROM spike_recipients WHERE site_id = $1", string(site))
		return err
	})
	return translate("pgstore: delete spike notification", err)
}

// AddSpikeRecipient adds an address to a site's spike notification (an
// address already listed is left as it is). A site without a notification
// is errs.ErrNotFound; one that has limit recipients and not this one,
// errs.ErrConflict. Additions to one site wait for each other (its
// notification's row is locked), so none passes the limit.
func (s *Store) AddSpikeRecipient(ctx context.Context, r model.SpikeRecipient, limit int) (model.SpikeRecipient, error) {
	var saved model.SpikeRecipient
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var n int
		if err := tx.QueryRow(ctx, "SELECT 1 FROM spike_notifications WHERE site_id = $1 AND threshold IS NOT NULL FOR NO KEY UPDATE", string(r.SiteID)).Scan(&n); err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, "SELECT count(*) FROM spike_recipients WHERE site_id = $1 AND email <> $2",
			string(r.SiteID), r.Email).Scan(&n); err != nil {
			return err
		}
		if n >= limit {
			return errFull
		}
		var err error
		saved, err = scanSpikeRecipient(tx.QueryRow(ctx, `INSERT INTO spike_recipients (site_id, email, created_at) VALUES ($1, $2, $3)
			ON CONFLICT (site_id, email) DO UPDATE SET email = excluded.email
			RETURNING `+spikeRecipientColumns, string(r.SiteID), r.Email, r.CreatedAt))
		return err
	})
	if errors.Is(err, errFull) {
		return model.SpikeRecipient{}, fmt.Errorf("pgstore: add spike recipient: %w", errs.ErrConflict)
	}
	return saved, translate("pgstore: add spike recipient", err)
}

// DeleteSpikeRecipient removes an address of site's spike notification;
// another site's, or an unknown id, is errs.ErrNotFound.
func (s *Store) DeleteSpikeRecipient(ctx context.Context, site model.SiteID, id model.SpikeRecipientID) error {
	tag, err := s.pool.Exec(ctx, "DELETE FROM spike_recipients WHERE id = $1 AND site_id = $2", string(id), string(site))
	if err == nil && tag.RowsAffected() == 0 {
		err = pgx.ErrNoRows
	}
	return translate("pgstore: delete spike recipient", err)
}

// SpikeWatches lists the spike notifications that may go: those with a
// recipient whose last notification is at or before quietSince (or that
// never went), each with its recipients, by site.
func (s *Store) SpikeWatches(ctx context.Context, quietSince time.Time) ([]model.SpikeNotification, error) {
	rows, err := s.pool.Query(ctx, `SELECT n.site_id, n.threshold, n.last_sent_at, r.id, r.email, r.created_at
		FROM spike_notifications n JOIN spike_recipients r ON r.site_id = n.site_id
		WHERE n.threshold IS NOT NULL AND (n.last_sent_at IS NULL OR n.last_sent_at <= $1)
		ORDER BY n.site_id, r.email`, quietSince)
	if err != nil {
		return nil, translate("pgstore: spike watches", err)
	}
	defer rows.Close()
	var out []model.SpikeNotification
	for rows.Next() {
		var site, id string
		var threshold int
		var last *time.Time
		r := model.SpikeRecipient{}
		if err := rows.Scan(&site, &threshold, &last, &id, &r.Email, &r.CreatedAt); err != nil {
			return nil, translate("pgstore: spike watches", err)
		}
		r.ID, r.SiteID = model.SpikeRecipientID(id), model.SiteID(site)
		if len(out) == 0 || out[len(out)-1].SiteID != r.SiteID {
			n := model.SpikeNotification{SiteID: r.SiteID, Threshold: threshold}
			if last != nil {
				n.LastSentAt = *last
			}
			out = append(out, n)
		}
		out[len(out)-1].Recipients = append(out[len(out)-1].Recipients, r)
	}
	return out, translate("pgstore: spike watches", rows.Err())
}

// ClaimSpike takes the right to send site's spike notification at now: it
// records now as its last notification if the one before was at or before
// quietSince (or there was none). Of concurrent claims, which wait on the
// row, one takes it; ok is false for the others, and when the notification
// was turned off meanwhile.
func (s *Store) ClaimSpike(ctx context.Context, site model.SiteID, now, quietSince time.Time) (bool, error) {
	tag, err := s.pool.Exec(ctx, `UPDATE spike_notifications SET last_sent_at = $2
		WHERE site_id = $1 AND threshold IS NOT NULL AND (last_sent_at IS NULL OR last_sent_at <= $3)`, string(site), now, quietSince)
	if err != nil {
		return false, translate("pgstore: claim spike", err)
	}
	return tag.RowsAffected() == 1, nil
}

// ReleaseSpike gives back a claim of site's notification made at claimed
// whose messages all failed: its last notification is previous again (zero:
// none), unless another claim has been made since.
func (s *Store) ReleaseSpike(ctx context.Context, site model.SiteID, claimed, previous time.Time) error {
	var prev *time.Time
	if !previous.IsZero() {
		prev = &previous
	}
	_, err := s.pool.Exec(ctx, "UPDATE spike_notifications SET last_sent_at = $3 WHERE site_id = $1 AND last_sent_at = $2",
		string(site), claimed, prev)
	return translate("pgstore: release spike", err)
}

// AddSpikeUnsubscribe keeps the hash of a message's unsubscribe token for
// its recipient; a recipient removed meanwhile is errs.ErrNotFound.
func (s *Store) AddSpikeUnsubscribe(ctx context.Context, recipient model.SpikeRecipientID, tokenHash []byte, at time.Time) error {
	return s.addUnsubscribe(ctx, spikeList, string(recipient), tokenHash, at)
}

// DropSpikeUnsubscribe forgets the token of a message that was not sent.
func (s *Store) DropSpikeUnsubscribe(ctx context.Context, tokenHash []byte) error {
	_, err := s.pool.Exec(ctx, "DELETE FROM spike_unsubscribes WHERE token_hash = $1", tokenHash)
	return translate("pgstore: drop spike unsubscribe", err)
}

// SpikeUnsubscribeSite is the domain of the site whose spike notifications
// the recipient of an unsubscribe token gets; an unknown token is
// errs.ErrNotFound. It changes nothing.
func (s *Store) SpikeUnsubscribeSite(ctx context.Context, tokenHash []byte) (string, error) {
	return s.unsubscribeSite(ctx, spikeList, tokenHash)
}

// UnsubscribeSpikes removes the recipient of an unsubscribe token, with its
// tokens, and returns its site's domain; an unknown token (or one whose
// recipient is gone) is errs.ErrNotFound.
func (s *Store) UnsubscribeSpikes(ctx context.Context, tokenHash []byte) (string, error) {
	return s.unsubscribe(ctx, spikeList, tokenHash)
}

// ForgetSpikeUnsubscribes deletes the unsubscribe tokens of messages made
// before since, whose links then open nothing.
func (s *Store) ForgetSpikeUnsubscribes(ctx context.Context, since time.Time) error {
	_, err := s.pool.Exec(ctx, "DELETE FROM spike_unsubscribes WHERE created_at < $1", since)
	return translate("pgstore: forget spike unsubscribes", err)
}

package pgstore

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tally-analytics/tally/internal/model"
)

// maxClaims bounds the visitors who may claim one checkout session.
const maxClaims = 5

// RememberCheckout stores that visitor claimed a checkout session (or, for a
// "subscription:" key, that the subscription's checkout was theirs) at at.
// A visitor's repeated claim keeps the first; a session already claimed by
// maxClaims visitors takes no more.
func (s *Store) RememberCheckout(ctx context.Context, site model.SiteID, checkoutSession string, visitor uint64, at time.Time) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO checkout_sessions (site_id, checkout_session_id, visitor_id, claimed_at)
		SELECT $1, $2, $3, $4
		WHERE (SELECT count(*) FROM checkout_sessions WHERE site_id = $1 AND checkout_session_id = $2) < $5
		ON CONFLICT (site_id, checkout_session_id, visitor_id) DO NOTHING`,
		string(site), checkoutSession, int64(visitor), at.UTC(), maxClaims)
	return translate("pgstore: remember checkout", err)
}

// CheckoutVisitor is the first visitor linked to a key.
func (s *Store) CheckoutVisitor(ctx context.Context, site model.SiteID, checkoutSession string) (uint64, error) {
	var v int64
	err := s.pool.QueryRow(ctx, `SELECT visitor_id FROM checkout_sessions WHERE site_id = $1 AND checkout_session_id = $2
		ORDER BY claimed_at, created_at LIMIT 1`, string(site), checkoutSession).Scan(&v)
	return uint64(v), translate("pgstore: checkout visitor", err)
}

// CheckoutClaims lists the claims of a checkout session made since since,
// first claim first.
func (s *Store) CheckoutClaims(ctx context.Context, site model.SiteID, checkoutSession string, since time.Time) ([]model.CheckoutClaim, error) {
	rows, err := s.pool.Query(ctx, `SELECT visitor_id, claimed_at FROM checkout_sessions
		WHERE site_id = $1 AND checkout_session_id = $2 AND claimed_at >= $3 ORDER BY claimed_at, created_at`,
		string(site), checkoutSession, since.UTC())
	if err != nil {
		return nil, translate("pgstore: checkout claims", err)
	}
	claims, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (model.CheckoutClaim, error) {
		var c model.CheckoutClaim
		var v int64
		err := r.Scan(&v, &c.At)
		c.Visitor = uint64(v)
		return c, err
	})
	return claims, translate("pgstore: checkout claims", err)
}

// ForgetClaims deletes the claims made before before, except those whose key
// starts with keep (the links of subscriptions), and says how many went.
func (s *Store) ForgetClaims(ctx context.Context, before time.Time, keep string) (int64, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM checkout_sessions
		WHERE claimed_at < $1 AND left(checkout_session_id, length($2)) <> $2`, before.UTC(), keep)
	return tag.RowsAffected(), translate("pgstore: forget claims", err)
}

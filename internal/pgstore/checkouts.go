package pgstore

import (
	"context"

	"github.com/tally-analytics/tally/internal/model"
)

// RememberCheckout stores which visitor opened a checkout session. The first
// visitor seen wins: a success page reloaded or shared does not move it.
func (s *Store) RememberCheckout(ctx context.Context, site model.SiteID, checkoutSession string, visitor uint64) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO checkout_sessions (site_id, checkout_session_id, visitor_id)
		VALUES ($1, $2, $3) ON CONFLICT (site_id, checkout_session_id) DO NOTHING`,
		string(site), checkoutSession, int64(visitor))
	return translate("pgstore: remember checkout", err)
}

// CheckoutVisitor is the visitor who opened a checkout session.
func (s *Store) CheckoutVisitor(ctx context.Context, site model.SiteID, checkoutSession string) (uint64, error) {
	var v int64
	err := s.pool.QueryRow(ctx, "SELECT visitor_id FROM checkout_sessions WHERE site_id = $1 AND checkout_session_id = $2",
		string(site), checkoutSession).Scan(&v)
	return uint64(v), translate("pgstore: checkout visitor", err)
}

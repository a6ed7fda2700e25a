package pgstore

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tally-analytics/tally/internal/model"
)

// CreateDashboardSession stores a login, by the hash of its token; expired
// logins are deleted on the way.
func (s *Store) CreateDashboardSession(ctx context.Context, tokenHash []byte, sess model.DashboardSession) error {
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "DELETE FROM dashboard_sessions WHERE expires_at < now()"); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO dashboard_sessions (token_hash, user_id, csrf_token, expires_at)
			VALUES ($1, $2, $3, $4)`, tokenHash, string(sess.UserID), sess.CSRFToken, sess.ExpiresAt)
		return err
	})
	return translate("pgstore: create dashboard session", err)
}

// DashboardSession finds an unexpired login by the hash of its token.
func (s *Store) DashboardSession(ctx context.Context, tokenHash []byte, now time.Time) (model.DashboardSession, error) {
	var sess model.DashboardSession
	var user string
	err := s.pool.QueryRow(ctx, `SELECT user_id, csrf_token, expires_at FROM dashboard_sessions
		WHERE token_hash = $1 AND expires_at > $2`, tokenHash, now).Scan(&user, &sess.CSRFToken, &sess.ExpiresAt)
	sess.UserID = model.UserID(user)
	return sess, translate("pgstore: dashboard session", err)
}

// DeleteDashboardSession ends a login.
func (s *Store) DeleteDashboardSession(ctx context.Context, tokenHash []byte) error {
	_, err := s.pool.Exec(ctx, "DELETE FROM dashboard_sessions WHERE token_hash = $1", tokenHash)
	return translate("pgstore: delete dashboard session", err)
}

// SiteMembers lists a site's members: owner first, then by email.
func (s *Store) SiteMembers(ctx context.Context, site model.SiteID) ([]model.Member, error) {
	rows, err := s.pool.Query(ctx, `SELECT u.id, u.email, u.name, m.role FROM site_members m JOIN users u ON u.id = m.user_id
		WHERE m.site_id = $1 ORDER BY m.role = 'owner' DESC, lower(u.email)`, string(site))
	if err != nil {
		return nil, translate("pgstore: site members", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (model.Member, error) {
		var m model.Member
		var id, role string
		err := r.Scan(&id, &m.Email, &m.Name, &role)
		m.UserID, m.Role = model.UserID(id), model.Role(role)
		return m, err
	})
	return out, translate("pgstore: site members", err)
}

// RemoveMember takes a user's role on a site away.
func (s *Store) RemoveMember(ctx context.Context, site model.SiteID, user model.UserID) error {
	tag, err := s.pool.Exec(ctx, "DELETE FROM site_members WHERE site_id = $1 AND user_id = $2", string(site), string(user))
	if err == nil && tag.RowsAffected() == 0 {
		err = pgx.ErrNoRows
	}
	return translate("pgstore: remove member", err)
}

// ProviderSecretStates lists the providers a site has a webhook secret for.
func (s *Store) ProviderSecretStates(ctx context.Context, site model.SiteID) ([]model.ProviderSecretState, error) {
	rows, err := s.pool.Query(ctx, `SELECT provider, updated_at FROM site_provider_secrets WHERE site_id = $1
		ORDER BY provider`, string(site))
	if err != nil {
		return nil, translate("pgstore: provider secrets", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (model.ProviderSecretState, error) {
		var st model.ProviderSecretState
		var p string
		err := r.Scan(&p, &st.UpdatedAt)
		st.Provider = model.Provider(p)
		return st, err
	})
	return out, translate("pgstore: provider secrets", err)
}

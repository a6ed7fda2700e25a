package pgstore

import (
	"context"
	"fmt"
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

// SiteMembers lists a site's members and the emails invited to it (which
// look the same): owner first, then by email.
func (s *Store) SiteMembers(ctx context.Context, site model.SiteID) ([]model.Member, error) {
	rows, err := s.pool.Query(ctx, `SELECT email, role FROM (
			SELECT lower(u.email) AS email, m.role FROM site_members m JOIN users u ON u.id = m.user_id WHERE m.site_id = $1
			UNION ALL SELECT email, role FROM site_invitations WHERE site_id = $1) AS roles
		ORDER BY role = 'owner' DESC, email`, string(site))
	if err != nil {
		return nil, translate("pgstore: site members", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (model.Member, error) {
		var m model.Member
		var role string
		err := r.Scan(&m.Email, &role)
		m.Role = model.Role(role)
		return m, err
	})
	return out, translate("pgstore: site members", err)
}

// InviteMember gives email, which has no account, role on site once an
// account with that email is created (replacing an earlier invitation).
func (s *Store) InviteMember(ctx context.Context, site model.SiteID, email string, role model.Role) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO site_invitations (site_id, email, role) VALUES ($1, lower($2), $3)
		ON CONFLICT (site_id, email) DO UPDATE SET role = EXCLUDED.role, created_at = now()`,
		string(site), email, string(role))
	return translate("pgstore: invite member", err)
}

// RemoveMember takes the role of the member or invitation with email on
// site away (never the owner's), and deletes the shared links of the site
// the member made; errs.ErrNotFound when there is none.
func (s *Store) RemoveMember(ctx context.Context, site model.SiteID, email string) error {
	var n int64
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		// the member's shared links go with them: a link is as good as its
		// maker's access
		rows, err := tx.Query(ctx, `DELETE FROM site_members m USING users u
			WHERE m.site_id = $1 AND m.user_id = u.id AND lower(u.email) = lower($2) AND m.role <> 'owner'
			RETURNING m.user_id::text`, string(site), email)
		if err != nil {
			return err
		}
		gone, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "DELETE FROM shared_links WHERE site_id = $1 AND created_by::text = ANY($2)", string(site), gone); err != nil {
			return err
		}
		b, err := tx.Exec(ctx, "DELETE FROM site_invitations WHERE site_id = $1 AND email = lower($2)", string(site), email)
		n = int64(len(gone)) + b.RowsAffected()
		return err
	})
	if err == nil && n == 0 {
		err = pgx.ErrNoRows
	}
	return translate("pgstore: remove member", err)
}

// ProviderSecretStates lists the providers a site has webhook secrets for,
// and how many of each (opened to be counted, never returned).
func (s *Store) ProviderSecretStates(ctx context.Context, site model.SiteID) ([]model.ProviderSecretState, error) {
	if s.secrets == nil {
		return nil, errNoSecretsKey
	}
	rows, err := s.pool.Query(ctx, `SELECT provider, secret, updated_at FROM site_provider_secrets WHERE site_id = $1
		ORDER BY provider`, string(site))
	if err != nil {
		return nil, translate("pgstore: provider secrets", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (model.ProviderSecretState, error) {
		var st model.ProviderSecretState
		var p, sealed string
		if err := r.Scan(&p, &sealed, &st.UpdatedAt); err != nil {
			return st, err
		}
		st.Provider = model.Provider(p)
		plain, _, err := s.secrets.Open(sealed, secretRow(site, st.Provider))
		if err != nil {
			return st, fmt.Errorf("open the secrets of %s/%s: %w", site, p, err)
		}
		st.Count = len(splitSecrets(plain))
		return st, nil
	})
	return out, translate("pgstore: provider secrets", err)
}

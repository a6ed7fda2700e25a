package pgstore

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tally-analytics/tally/internal/model"
)

// SetPassword replaces user's password hash and ends their logins, in one
// transaction: every dashboard session but the one whose token hashes to
// keep (nil keeps none), every login waiting for its second factor (its
// password was the old one), their reset link, and — the token generation
// moved on — every login token. It returns the user as changed;
// errs.ErrNotFound when there is no such user.
func (s *Store) SetPassword(ctx context.Context, user model.UserID, hash string, keep []byte) (model.User, error) {
	var u model.User
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var err error
		u, err = setPassword(ctx, tx, user, hash, keep)
		return err
	})
	return u, translate("pgstore: set password", err)
}

// ResetPassword is SetPassword for the user of a reset link, which it
// spends: errs.ErrNotFound when the link is unknown, used, or expired at
// now. No session is kept.
func (s *Store) ResetPassword(ctx context.Context, tokenHash []byte, hash string, now time.Time) (model.User, error) {
	var u model.User
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var user string
		// spent here, so that two requests with one link set one password
		if err := tx.QueryRow(ctx, `DELETE FROM password_resets WHERE token_hash = $1 AND expires_at > $2 RETURNING user_id`,
			tokenHash, now).Scan(&user); err != nil {
			return err
		}
		var err error
		u, err = setPassword(ctx, tx, model.UserID(user), hash, nil)
		return err
	})
	return u, translate("pgstore: reset password", err)
}

func setPassword(ctx context.Context, tx pgx.Tx, user model.UserID, hash string, keep []byte) (model.User, error) {
	u, err := scanUser(tx.QueryRow(ctx, `UPDATE users SET password_hash = $2, token_generation = token_generation + 1
		WHERE id = $1 RETURNING `+userColumns, string(user), hash))
	if err != nil {
		return model.User{}, err
	}
	if _, err := tx.Exec(ctx, "DELETE FROM dashboard_sessions WHERE user_id = $1 AND ($2::bytea IS NULL OR token_hash <> $2)",
		string(user), keep); err != nil {
		return model.User{}, err
	}
	if _, err := tx.Exec(ctx, "DELETE FROM login_challenges WHERE user_id = $1", string(user)); err != nil {
		return model.User{}, err
	}
	if _, err := tx.Exec(ctx, "DELETE FROM password_resets WHERE user_id = $1", string(user)); err != nil {
		return model.User{}, err
	}
	return u, nil
}

// CreatePasswordReset stores the reset link of user, by the hash of its
// token, in place of any they had: only the newest link works. Links
// expired by now are deleted on the way.
func (s *Store) CreatePasswordReset(ctx context.Context, user model.UserID, tokenHash []byte, now, expiresAt time.Time) error {
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "DELETE FROM password_resets WHERE expires_at <= $1", now); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO password_resets (user_id, token_hash, expires_at, created_at) VALUES ($1, $2, $3, $4)
			ON CONFLICT (user_id) DO UPDATE SET token_hash = EXCLUDED.token_hash, expires_at = EXCLUDED.expires_at,
				created_at = EXCLUDED.created_at`, string(user), tokenHash, expiresAt, now)
		return err
	})
	return translate("pgstore: create password reset", err)
}

// PasswordReset is the user of the reset link whose token hashes to
// tokenHash; errs.ErrNotFound when it is unknown, used, or expired at now.
func (s *Store) PasswordReset(ctx context.Context, tokenHash []byte, now time.Time) (model.User, error) {
	u, err := scanUser(s.pool.QueryRow(ctx, `SELECT `+userColumns+` FROM users
		WHERE id = (SELECT user_id FROM password_resets WHERE token_hash = $1 AND expires_at > $2)`, tokenHash, now))
	return u, translate("pgstore: password reset", err)
}

package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/model"
)

// totpRow binds a sealed TOTP secret to its user.
func totpRow(user model.UserID) string { return "user_totp/" + string(user) }

// SetPendingTOTP stores secret, sealed, as the TOTP secret user is setting
// up (replacing an earlier one not confirmed); errs.ErrConflict when the
// user's 2FA is already on.
func (s *Store) SetPendingTOTP(ctx context.Context, user model.UserID, secret string) error {
	if s.secrets == nil {
		return errNoSecretsKey
	}
	sealed, err := s.secrets.Seal(secret, totpRow(user))
	if err != nil {
		return fmt.Errorf("pgstore: set pending totp: %w", err)
	}
	tag, err := s.pool.Exec(ctx, `INSERT INTO user_totp (user_id, secret) VALUES ($1, $2)
		ON CONFLICT (user_id) DO UPDATE SET secret = EXCLUDED.secret, last_step = NULL, created_at = now()
		WHERE user_totp.enabled_at IS NULL`, string(user), sealed)
	if err == nil && tag.RowsAffected() == 0 {
		return fmt.Errorf("pgstore: set pending totp: %w", errs.ErrConflict)
	}
	return translate("pgstore: set pending totp", err)
}

// TOTP returns user's TOTP secret (opened), its state and how many
// recovery codes are left; errs.ErrNotFound when the user has none.
func (s *Store) TOTP(ctx context.Context, user model.UserID) (model.TOTP, error) {
	if s.secrets == nil {
		return model.TOTP{}, errNoSecretsKey
	}
	var t model.TOTP
	var sealed string
	var last *int64
	err := s.pool.QueryRow(ctx, `SELECT secret, enabled_at, last_step,
			(SELECT count(*) FROM user_recovery_codes r WHERE r.user_id = t.user_id)
		FROM user_totp t WHERE user_id = $1`, string(user)).Scan(&sealed, &t.EnabledAt, &last, &t.RecoveryCodes)
	if err != nil {
		return model.TOTP{}, translate("pgstore: totp", err)
	}
	if last != nil {
		t.LastStep = *last
	}
	if t.Secret, _, err = s.secrets.Open(sealed, totpRow(user)); err != nil {
		return model.TOTP{}, fmt.Errorf("pgstore: totp of %s: %w", user, err)
	}
	return t, nil
}

// EnableTOTP turns on the TOTP secret user set up, with the step of the
// code that confirmed it as the last used, and gives the user these
// recovery codes (their hashes); errs.ErrNotFound when nothing is being set
// up (none, or already on).
func (s *Store) EnableTOTP(ctx context.Context, user model.UserID, step int64, at time.Time, codeHashes [][]byte) error {
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE user_totp SET enabled_at = $2, last_step = $3
			WHERE user_id = $1 AND enabled_at IS NULL`, string(user), at, step)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return pgx.ErrNoRows
		}
		return replaceRecoveryCodes(ctx, tx, user, codeHashes)
	})
	return translate("pgstore: enable totp", err)
}

// UseTOTPStep records step as the last one a code of user's was accepted
// for, and reports false (nothing recorded) unless it is later than the
// last one and 2FA is on: a code is accepted once.
func (s *Store) UseTOTPStep(ctx context.Context, user model.UserID, step int64) (bool, error) {
	tag, err := s.pool.Exec(ctx, `UPDATE user_totp SET last_step = $2
		WHERE user_id = $1 AND enabled_at IS NOT NULL AND (last_step IS NULL OR last_step < $2)`, string(user), step)
	if err != nil {
		return false, translate("pgstore: use totp step", err)
	}
	return tag.RowsAffected() == 1, nil
}

// UseRecoveryCode spends one of user's recovery codes by its hash, and
// reports false when the user has no such code (or has used it).
func (s *Store) UseRecoveryCode(ctx context.Context, user model.UserID, codeHash []byte) (bool, error) {
	tag, err := s.pool.Exec(ctx, "DELETE FROM user_recovery_codes WHERE user_id = $1 AND code_hash = $2",
		string(user), codeHash)
	if err != nil {
		return false, translate("pgstore: use recovery code", err)
	}
	return tag.RowsAffected() == 1, nil
}

// ReplaceRecoveryCodes gives user these recovery codes (their hashes) in
// place of all earlier ones.
func (s *Store) ReplaceRecoveryCodes(ctx context.Context, user model.UserID, codeHashes [][]byte) error {
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error { return replaceRecoveryCodes(ctx, tx, user, codeHashes) })
	return translate("pgstore: replace recovery codes", err)
}

func replaceRecoveryCodes(ctx context.Context, tx pgx.Tx, user model.UserID, codeHashes [][]byte) error {
	if _, err := tx.Exec(ctx, "DELETE FROM user_recovery_codes WHERE user_id = $1", string(user)); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, `INSERT INTO user_recovery_codes (user_id, code_hash) SELECT $1, h FROM unnest($2::bytea[]) AS h`,
		string(user), codeHashes)
	return err
}

// DisableTOTP removes user's TOTP secret and recovery codes, and reports
// whether 2FA was on.
func (s *Store) DisableTOTP(ctx context.Context, user model.UserID) (bool, error) {
	var on bool
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var enabled *time.Time
		err := tx.QueryRow(ctx, "DELETE FROM user_totp WHERE user_id = $1 RETURNING enabled_at", string(user)).Scan(&enabled)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		on = err == nil && enabled != nil
		_, err = tx.Exec(ctx, "DELETE FROM user_recovery_codes WHERE user_id = $1", string(user))
		return err
	})
	return on, translate("pgstore: disable totp", err)
}

// CreateLoginChallenge stores a login waiting for its second factor, by the
// hash of its token; expired ones are deleted on the way.
func (s *Store) CreateLoginChallenge(ctx context.Context, tokenHash []byte, user model.UserID, expiresAt time.Time) error {
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "DELETE FROM login_challenges WHERE expires_at < now()"); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, "INSERT INTO login_challenges (token_hash, user_id, expires_at) VALUES ($1, $2, $3)",
			tokenHash, string(user), expiresAt)
		return err
	})
	return translate("pgstore: create login challenge", err)
}

// LoginChallenge finds the user of an unexpired login challenge.
func (s *Store) LoginChallenge(ctx context.Context, tokenHash []byte, now time.Time) (model.UserID, error) {
	var user string
	err := s.pool.QueryRow(ctx, "SELECT user_id FROM login_challenges WHERE token_hash = $1 AND expires_at > $2",
		tokenHash, now).Scan(&user)
	return model.UserID(user), translate("pgstore: login challenge", err)
}

// DeleteLoginChallenge ends a login challenge, and reports false when it
// was gone already (used by another request).
func (s *Store) DeleteLoginChallenge(ctx context.Context, tokenHash []byte) (bool, error) {
	tag, err := s.pool.Exec(ctx, "DELETE FROM login_challenges WHERE token_hash = $1", tokenHash)
	if err != nil {
		return false, translate("pgstore: delete login challenge", err)
	}
	return tag.RowsAffected() == 1, nil
}

// resealTOTP seals again, with the current key, every TOTP secret sealed
// with an earlier key (see ResealSecrets).
func (s *Store) resealTOTP(ctx context.Context) (int, error) {
	rows, err := s.pool.Query(ctx, "SELECT user_id, secret FROM user_totp")
	if err != nil {
		return 0, translate("pgstore: reseal totp secrets", err)
	}
	type row struct{ user, secret string }
	all, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (row, error) {
		var x row
		err := r.Scan(&x.user, &x.secret)
		return x, err
	})
	if err != nil {
		return 0, translate("pgstore: reseal totp secrets", err)
	}
	n := 0
	for _, x := range all {
		aad := totpRow(model.UserID(x.user))
		plain, current, err := s.secrets.Open(x.secret, aad)
		if err != nil {
			return n, fmt.Errorf("pgstore: reseal the totp secret of %s: %w", x.user, err)
		}
		if current {
			continue
		}
		sealed, err := s.secrets.Seal(plain, aad)
		if err != nil {
			return n, fmt.Errorf("pgstore: reseal totp secrets: %w", err)
		}
		tag, err := s.pool.Exec(ctx, "UPDATE user_totp SET secret = $3 WHERE user_id = $1 AND secret = $2", x.user, x.secret, sealed)
		if err != nil {
			return n, translate("pgstore: reseal totp secrets", err)
		}
		n += int(tag.RowsAffected())
	}
	return n, nil
}

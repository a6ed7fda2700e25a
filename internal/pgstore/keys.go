package pgstore

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tally-analytics/tally/internal/model"
)

const keyColumns = "id, user_id, name, prefix, environment, scopes, expires_at, revoked_at, last_used_at, created_at"

func scanKey(row interface{ Scan(...any) error }) (model.APIKey, error) {
	var k model.APIKey
	var id, user string
	var scopes []string
	err := row.Scan(&id, &user, &k.Name, &k.Prefix, &k.Environment, &scopes, &k.ExpiresAt, &k.RevokedAt, &k.LastUsedAt, &k.CreatedAt)
	k.ID, k.UserID = model.KeyID(id), model.UserID(user)
	for _, s := range scopes {
		k.Scopes = append(k.Scopes, model.Scope(s))
	}
	return k, err
}

// CreateKey stores an API key by the SHA-256 hash of its secret.
func (s *Store) CreateKey(ctx context.Context, k model.APIKey, hash []byte) (model.APIKey, error) {
	scopes := make([]string, len(k.Scopes))
	for i, sc := range k.Scopes {
		scopes[i] = string(sc)
	}
	created, err := scanKey(s.pool.QueryRow(ctx, `INSERT INTO api_keys (id, user_id, name, prefix, hash, environment, scopes, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING `+keyColumns,
		string(k.ID), string(k.UserID), k.Name, k.Prefix, hash, k.Environment, scopes, k.ExpiresAt))
	return created, translate("pgstore: create key", err)
}

// KeyByHash finds a key by the hash of its secret, whatever its state; the
// caller decides what revoked or expired means.
func (s *Store) KeyByHash(ctx context.Context, hash []byte) (model.APIKey, error) {
	k, err := scanKey(s.pool.QueryRow(ctx, "SELECT "+keyColumns+" FROM api_keys WHERE hash = $1", hash))
	return k, translate("pgstore: key by hash", err)
}

// KeyByID finds a key by its public id.
func (s *Store) KeyByID(ctx context.Context, id model.KeyID) (model.APIKey, error) {
	k, err := scanKey(s.pool.QueryRow(ctx, "SELECT "+keyColumns+" FROM api_keys WHERE id = $1", string(id)))
	return k, translate("pgstore: key by id", err)
}

// KeysByUser lists a user's keys, newest first.
func (s *Store) KeysByUser(ctx context.Context, user model.UserID) ([]model.APIKey, error) {
	rows, err := s.pool.Query(ctx, "SELECT "+keyColumns+" FROM api_keys WHERE user_id = $1 ORDER BY created_at DESC, id",
		string(user))
	if err != nil {
		return nil, translate("pgstore: keys by user", err)
	}
	keys, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (model.APIKey, error) { return scanKey(r) })
	return keys, translate("pgstore: keys by user", err)
}

// RevokeKey marks a key revoked at the given time. Revoking a revoked key
// keeps the first revocation time; an unknown id is errs.ErrNotFound.
func (s *Store) RevokeKey(ctx context.Context, id model.KeyID, at time.Time) (model.APIKey, error) {
	k, err := scanKey(s.pool.QueryRow(ctx, `UPDATE api_keys SET revoked_at = COALESCE(revoked_at, $2)
		WHERE id = $1 RETURNING `+keyColumns, string(id), at))
	return k, translate("pgstore: revoke key", err)
}

// TouchKeys records when keys were last used (batched by the caller).
func (s *Store) TouchKeys(ctx context.Context, used map[model.KeyID]time.Time) error {
	batch := &pgx.Batch{}
	for id, at := range used {
		batch.Queue("UPDATE api_keys SET last_used_at = GREATEST(COALESCE(last_used_at, $2), $2) WHERE id = $1", string(id), at)
	}
	return translate("pgstore: touch keys", s.pool.SendBatch(ctx, batch).Close())
}

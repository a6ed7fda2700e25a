package pgstore

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/tally-analytics/tally/internal/migrations"
	"github.com/tally-analytics/tally/postgres"
)

// migrationLock is the advisory lock that serialises concurrent migrators.
const migrationLock = 0x7a11_0001

// Migrate applies the embedded migrations that are not applied yet, each in
// its own transaction, and returns the names of those it applied. Concurrent
// callers wait for each other on an advisory lock.
func (s *Store) Migrate(ctx context.Context) ([]string, error) {
	ms, err := migrations.Load(postgres.Migrations)
	if err != nil {
		return nil, err
	}
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("pgstore: migrate: %w", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", migrationLock); err != nil {
		return nil, fmt.Errorf("pgstore: migrate: lock: %w", err)
	}
	defer conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", migrationLock) //nolint:errcheck // released with the session anyway

	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    integer PRIMARY KEY,
		name       text NOT NULL,
		applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return nil, fmt.Errorf("pgstore: migrate: version table: %w", err)
	}
	applied := map[int]bool{}
	rows, err := conn.Query(ctx, "SELECT version FROM schema_migrations")
	if err != nil {
		return nil, fmt.Errorf("pgstore: migrate: read versions: %w", err)
	}
	versions, err := pgx.CollectRows(rows, pgx.RowTo[int])
	if err != nil {
		return nil, fmt.Errorf("pgstore: migrate: read versions: %w", err)
	}
	for _, v := range versions {
		applied[v] = true
	}
	var done []string
	for _, m := range ms {
		if applied[m.Version] {
			continue
		}
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			for _, stmt := range m.Statements {
				if _, err := tx.Exec(ctx, stmt); err != nil {
					return err
				}
			}
			_, err := tx.Exec(ctx, "INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", m.Version, m.Name)
			return err
		})
		if err != nil {
			return done, fmt.Errorf("pgstore: migration %04d_%s: %w", m.Version, m.Name, err)
		}
		done = append(done, fmt.Sprintf("%04d_%s", m.Version, m.Name))
	}
	return done, nil
}

package chstore

import (
	"context"

	"github.com/tally-analytics/tally/internal/migrations"
)

// Exec runs one statement, for tests that replay a migration.
func (s *Store) Exec(ctx context.Context, stmt string) error { return s.migrateExec(ctx, stmt) }

// Rendered are the statements of m as the store's migrator runs them.
func (s *Store) Rendered(m migrations.Migration) ([]string, error) {
	sql, err := s.layout.render(m.Name, m.Body)
	return migrations.Split(sql), err
}

package chstore

import "context"

// Exec runs one statement, for tests that replay a migration.
func (s *Store) Exec(ctx context.Context, stmt string) error { return s.conn.Exec(ctx, stmt) }

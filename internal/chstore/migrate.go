package chstore

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	ch "github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/tally-analytics/tally/clickhouse"
	"github.com/tally-analytics/tally/internal/migrations"
)

// Migrate applies the embedded ClickHouse migrations that are not applied yet
// and returns the names of those it applied. ClickHouse has no transactions
// or locks, so every migration must be idempotent: CREATE ... IF NOT EXISTS,
// and ADD COLUMN one column per statement, which counts as applied when the
// column exists (ClickHouse 18.16 cannot parse ADD COLUMN IF NOT EXISTS).
// Two migrators racing, or one cut short, then do no harm.
func (s *Store) Migrate(ctx context.Context) ([]string, error) {
	ms, err := migrations.Load(clickhouse.Migrations)
	if err != nil {
		return nil, err
	}
	if s.layout.clustered() {
		if err := s.checkProfile(ctx); err != nil {
			return nil, err
		}
	}
	if err := s.conn.Exec(ctx, s.versionTable()); err != nil {
		return nil, fmt.Errorf("chstore: migrate: version table: %w", err)
	}
	applied := map[uint32]bool{}
	rows, err := s.conn.Query(ctx, "SELECT version FROM schema_migrations")
	if err != nil {
		return nil, fmt.Errorf("chstore: migrate: read versions: %w", err)
	}
	for rows.Next() {
		var v uint32
		if err := rows.Scan(&v); err != nil {
			rows.Close()
			return nil, fmt.Errorf("chstore: migrate: read versions: %w", err)
		}
		applied[v] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("chstore: migrate: read versions: %w", err)
	}
	var done []string
	for _, m := range ms {
		if applied[uint32(m.Version)] {
			continue
		}
		sql, err := s.layout.render(fmt.Sprintf("%04d_%s.sql", m.Version, m.Name), m.Body)
		if err != nil {
			return done, err
		}
		for _, stmt := range migrations.Split(sql) {
			if err := s.migrateExec(ctx, stmt); err != nil {
				return done, fmt.Errorf("chstore: migration %04d_%s: %w", m.Version, m.Name, err)
			}
		}
		batch, err := s.conn.PrepareBatch(ctx, "INSERT INTO schema_migrations (version, name, applied_at)")
		if err != nil {
			return done, fmt.Errorf("chstore: migration %04d_%s: record: %w", m.Version, m.Name, err)
		}
		if err := batch.Append(uint32(m.Version), m.Name, time.Now().UTC()); err != nil {
			return done, fmt.Errorf("chstore: migration %04d_%s: record: %w", m.Version, m.Name, err)
		}
		if err := batch.Send(); err != nil {
			return done, fmt.Errorf("chstore: migration %04d_%s: record: %w", m.Version, m.Name, err)
		}
		done = append(done, fmt.Sprintf("%04d_%s", m.Version, m.Name))
	}
	return done, nil
}

// migrateExec runs one statement of a migration, on every node of the
// cluster in turn or on one replica of each shard when it is marked so; an
// added column that exists counts as added, a dropped one that is gone as
// dropped.
func (s *Store) migrateExec(ctx context.Context, stmt string) error {
	exec := func(ctx context.Context, conn driver.Conn, stmt string) error {
		if err := conn.Exec(ctx, stmt); err != nil && !columnDone(stmt, err) {
			return err
		}
		return nil
	}
	if rest, ok := strings.CutPrefix(stmt, everyNodeMarker); ok {
		return s.everyNode(ctx, func(n *node) error { return exec(ctx, n.conn, rest) })
	}
	if rest, ok := strings.CutPrefix(stmt, everyShardMarker); ok {
		// the ALTER returns once every replica of the shard has applied it,
		// so what the next statement reads is there on every replica (18.16
		// waits for them anyway; current releases wait for the one replica
		// by default)
		all := ch.Context(ctx, ch.WithSettings(ch.Settings{"replication_alter_partitions_sync": 2}))
		return s.everyShard(ctx, func(n *node) error { return exec(all, n.conn, rest) })
	}
	return exec(ctx, s.conn, stmt)
}

// versionTable is the statement creating the table of applied versions. On
// a cluster it is replicated on every node (one replica set, whatever the
// shard), so every node and every migrator reads the same versions.
func (s *Store) versionTable() string {
	engine := "MergeTree"
	if s.layout.clustered() {
		engine = s.layout.replicated("schema_migrations", "all", "MergeTree", nil)
	}
	return fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s %s (version UInt32, name String, applied_at DateTime) ENGINE = %s ORDER BY version",
		s.layout.qualified("schema_migrations"), s.layout.onCluster(), engine)
}

// addColumn and dropColumn match a statement that adds or drops one column
// (ON CLUSTER or not).
var (
	addColumn  = regexp.MustCompile(`(?is)^\s*ALTER\s+TABLE\s+\S+\s+(?:ON\s+CLUSTER\s+\S+\s+)?ADD\s+COLUMN\s+[^,]*$`)
	dropColumn = regexp.MustCompile(`(?is)^\s*ALTER\s+TABLE\s+\S+\s+(?:ON\s+CLUSTER\s+\S+\s+)?DROP\s+COLUMN\s+[^,]*$`)
)

// columnDone reports whether err says that stmt, an ALTER TABLE adding or
// dropping one column, failed because that was done already (by a run of
// its migration cut short): 18.16 answers ILLEGAL_COLUMN (44) to both,
// current releases DUPLICATE_COLUMN (15) to an added column that exists
// ("column with this name already exists") and NOT_FOUND_COLUMN_IN_BLOCK
// (10) to a dropped one that does not ("Cannot find column … to drop").
// Neither release knows DROP COLUMN IF EXISTS.
func columnDone(stmt string, err error) bool {
	var e *ch.Exception
	if !errors.As(err, &e) {
		return false
	}
	added := (e.Code == 15 || e.Code == 44) && addColumn.MatchString(stmt) && strings.Contains(e.Message, "already exists")
	dropped := (e.Code == 10 || e.Code == 44) && dropColumn.MatchString(stmt) && strings.Contains(e.Message, "Cannot find column")
	return added || dropped
}

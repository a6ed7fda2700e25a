// Package chstore is tally's ClickHouse store: migrations, batch inserts of
// events, sessions and bot events, and (later) the stats queries. It is one of
// the two packages that import a database driver.
//
// Every statement must run on ClickHouse 18.16 as well as current releases.
// Against 18.16, an INSERT must go through PrepareBatch with a column list
// (Exec of INSERT ... VALUES hangs there), so that is the only way this
// package writes.
package chstore

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/tally-analytics/tally/internal/config"
	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/stats"
)

// Options configure the connection.
type Options struct {
	// Addr is host:port of the native protocol; on a cluster a
	// comma-separated list of nodes, tried in order.
	Addr     string
	Database string
	// Cluster names the ClickHouse cluster the tables are spread over
	// (layout); empty for one node.
	Cluster  string
	User     string
	Password string
	// Timeout bounds dialing and every read; clickhouse-go waits forever without it.
	Timeout time.Duration
	// Compress sends and receives blocks LZ4-compressed (worth it across a
	// network, not to a server on this host).
	Compress bool
	// Observe, if set, is told the latency of every insert ("insert_" +
	// table) and stats query ("stats_query").
	Observe func(op string, d time.Duration, err error)
}

// Store wraps a ClickHouse connection pool.
type Store struct {
	conn    driver.Conn
	db      string
	layout  layout
	opts    Options
	observe func(op string, d time.Duration, err error)
	nodes   nodeConns // on a cluster: a connection to every node (cluster.go)
}

// timed runs f and reports its latency to the observer.
func (s *Store) timed(op string, f func() error) error {
	start := time.Now()
	err := f()
	if s.observe != nil {
		s.observe(op, time.Since(start), err)
	}
	return err
}

var safeName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,62}$`)

func connect(o Options, database string) (driver.Conn, error) {
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
	}
	conn, err := clickhouse.Open(&clickhouse.Options{
		Addr:             config.ClickHouseAddrs(o.Addr),
		Settings:         clusterSettings(o.Cluster),
		Auth:             clickhouse.Auth{Database: database, Username: o.User, Password: o.Password},
		DialTimeout:      5 * time.Second,
		ReadTimeout:      o.Timeout,
		MaxOpenConns:     16,
		MaxIdleConns:     8,
		ConnMaxLifetime:  time.Hour,
		Compression:      compression(o.Compress),
		ConnOpenStrategy: clickhouse.ConnOpenInOrder,
	})
	if err != nil {
		return nil, fmt.Errorf("chstore: open: %w", err)
	}
	return conn, nil
}

// compression is the driver's setting for Options.Compress.
func compression(on bool) *clickhouse.Compression {
	if !on {
		return nil
	}
	return &clickhouse.Compression{Method: clickhouse.CompressionLZ4}
}

// New prepares a connection pool without contacting ClickHouse: the server
// starts, and keeps accepting events into its buffer, while ClickHouse is down.
func New(o Options) (*Store, error) {
	if !safeName.MatchString(o.Database) {
		return nil, fmt.Errorf("chstore: invalid database name %q", o.Database)
	}
	conn, err := connect(o, o.Database)
	if err != nil {
		return nil, err
	}
	return &Store{conn: conn, db: o.Database, layout: layout{cluster: o.Cluster, db: o.Database}, opts: o, observe: o.Observe}, nil
}

// Open connects to ClickHouse, creating the database if it is missing, and
// checks the connection (for migrations and tools).
func Open(ctx context.Context, o Options) (*Store, error) {
	if err := CreateDatabase(ctx, o, o.Database); err != nil {
		return nil, err
	}
	s, err := New(o)
	if err != nil {
		return nil, err
	}
	if err := s.conn.Ping(ctx); err != nil {
		s.conn.Close()
		return nil, fmt.Errorf("chstore: ping: %w", err)
	}
	return s, nil
}

// Close closes the connections.
func (s *Store) Close() error {
	s.nodes.close()
	return s.conn.Close()
}

// Ping checks that ClickHouse answers.
func (s *Store) Ping(ctx context.Context) error { return s.conn.Ping(ctx) }

// CreateDatabase creates a database if it does not exist (on every node of
// a cluster).
func CreateDatabase(ctx context.Context, o Options, name string) error {
	return adminExec(ctx, o, name, "CREATE DATABASE IF NOT EXISTS %s "+layout{cluster: o.Cluster}.onCluster())
}

// DropDatabase drops a database if it exists (test harness).
func DropDatabase(ctx context.Context, o Options, name string) error {
	return adminExec(ctx, o, name, "DROP DATABASE IF EXISTS %s "+layout{cluster: o.Cluster}.onCluster())
}

func adminExec(ctx context.Context, o Options, name, stmt string) error {
	if !safeName.MatchString(name) {
		return fmt.Errorf("chstore: invalid database name %q", name)
	}
	conn, err := connect(o, "default")
	if err != nil {
		return err
	}
	defer conn.Close()
	if err := conn.Exec(ctx, fmt.Sprintf(stmt, name)); err != nil {
		return fmt.Errorf("chstore: %s: %w", fmt.Sprintf(stmt, name), err)
	}
	return nil
}

// translate turns a failure to reach ClickHouse into errs.StoreDown (503
// with Retry-After); other errors pass unchanged.
//
// On a cluster, a node that cannot reach any replica of a shard says so
// with an exception, which counts the same: a report never answers with
// the numbers of a part of the shards.
func translate(err error) error {
	if err != nil && (unreachable(err) || shardAway(err)) {
		return errs.StoreDown(err)
	}
	return err
}

// unreachable reports whether err is a failure to reach the ClickHouse
// server asked: no connection, or none free in time.
func unreachable(err error) bool {
	return errs.IsNetwork(err) || errors.Is(err, clickhouse.ErrAcquireConnTimeout)
}

// shardAway reports whether err is ClickHouse failing to reach another
// node: ALL_CONNECTION_TRIES_FAILED (279), NETWORK_ERROR (210),
// SOCKET_TIMEOUT (209).
func shardAway(err error) bool {
	var e *clickhouse.Exception
	return errors.As(err, &e) && (e.Code == 279 || e.Code == 210 || e.Code == 209)
}

// QueryRow runs a query returning one row; args bind to ? placeholders.
func (s *Store) QueryRow(ctx context.Context, query string, args ...any) interface{ Scan(...any) error } {
	return s.conn.QueryRow(ctx, query, args...)
}

// DeleteSite removes every row of a site from the statistics tables.
func (s *Store) DeleteSite(ctx context.Context, site model.SiteID) error {
	return s.DeleteSites(ctx, []model.SiteID{site})
}

// DeleteSites removes every row of sites from the statistics tables, with
// one mutation of each table that holds any of their rows: a mutation
// rewrites the parts that hold them, so the sites of one call share the
// rewrites. The deletions finish in the background.
func (s *Store) DeleteSites(ctx context.Context, sites []model.SiteID) error {
	if len(sites) == 0 {
		return nil
	}
	ids := make([]any, len(sites))
	for i, site := range sites {
		ids[i] = string(site)
	}
	byID := "site_id IN (" + strings.Repeat("?, ", len(sites)-1) + "?)"
	for _, table := range []string{"events", "sessions", "bot_events", "engagements", "payments", "ingest_refusals"} {
		if err := s.deleteWhere(ctx, table, byID, ids...); err != nil {
			return fmt.Errorf("chstore: delete sites from %s: %w", table, err)
		}
	}
	// the rollups (clickhouse/0005_page_rollups.sql, 0008–0010) know sites by key
	byKey := "site_key IN (" + strings.Repeat("cityHash64(?), ", len(sites)-1) + "cityHash64(?))"
	for _, table := range stats.RollupTables() {
		if err := s.deleteWhere(ctx, table, byKey, ids...); err != nil {
			return fmt.Errorf("chstore: delete sites from %s: %w", table, err)
		}
	}
	return nil
}

// DeletePayments removes a site's payments from one provider (or source)
// from the revenue table (a mutation: it finishes in the background).
func (s *Store) DeletePayments(ctx context.Context, site model.SiteID, provider string) error {
	if err := s.deleteWhere(ctx, "payments", "site_id = ? AND provider = ?", string(site), provider); err != nil {
		return fmt.Errorf("chstore: delete payments: %w", translate(err))
	}
	return nil
}

// deleteWhere deletes table's rows where cond holds, by a mutation, when
// there are any: a mutation rewrites the table's parts whoever's rows they
// hold, so a deletion with nothing to delete (a site deleted before its
// first event, a purge of no client revenue, the deleter's later passes)
// costs a count, not a rewrite of every site's data. On a cluster each
// shard's replica that takes the mutation counts its own rows (a part not
// fetched yet is the deleter's next pass's).
func (s *Store) deleteWhere(ctx context.Context, table, cond string, args ...any) error {
	local := s.layout.local(table)
	run := func(conn driver.Conn) error {
		var n uint64
		if err := conn.QueryRow(ctx, "SELECT count() FROM "+local+" WHERE "+cond, args...).Scan(&n); err != nil || n == 0 {
			return err
		}
		return conn.Exec(ctx, "ALTER TABLE "+local+" DELETE WHERE "+cond, args...)
	}
	if !s.layout.clustered() {
		return run(s.conn)
	}
	return s.everyShard(ctx, func(n *node) error { return run(n.conn) })
}

// mutate runs a mutation (ALTER TABLE ... DELETE or UPDATE) of table's
// rows. On a cluster a Distributed table has no rows to mutate: the
// mutation goes to the local tables of one replica of each shard
// (everyShard), and the shard's other replica applies it through
// replication (when it returns, if it is down).
func (s *Store) mutate(ctx context.Context, table, mutation string, args ...any) error {
	stmt := "ALTER TABLE " + s.layout.local(table) + " " + mutation
	if !s.layout.clustered() {
		return s.conn.Exec(ctx, stmt, args...)
	}
	return s.everyShard(ctx, func(n *node) error { return n.conn.Exec(ctx, stmt, args...) })
}

// OptimizeFinal merges every part of table now, so that rows which collapse
// (sessions) or sum (rollups) are collapsed or summed on disk. Merges run
// in the background anyway; tests use this to see their effect at once.
func (s *Store) OptimizeFinal(ctx context.Context, table string) error {
	if !safeName.MatchString(table) {
		return fmt.Errorf("chstore: invalid table name %q", table)
	}
	if s.layout.clustered() {
		return s.optimizeCluster(ctx, table)
	}
	if err := s.conn.Exec(ctx, "OPTIMIZE TABLE "+table+" FINAL"); err != nil {
		return fmt.Errorf("chstore: optimize %s: %w", table, err)
	}
	return nil
}

package chstore

import (
	"context"
	"fmt"
	"slices"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/tally-analytics/tally/internal/model"
)

func spanArgs(span model.Span) []any {
	sites := make([]string, len(span.Sites))
	for i, s := range span.Sites {
		sites[i] = string(s)
	}
	return []any{sites, utc(span.From), utc(span.To)}
}

// Lists bind as array literals, so membership tests use has(?, column):
// "column IN (?)" would compare with an array, which ClickHouse rejects.

// idsPerQuery keeps each lookup under ClickHouse's max_query_size (256 KiB
// by default): ids bind into the query text.
const idsPerQuery = 2000

// ExistingEventIDs reports which of ids are already stored in table (events
// or bot_events) within span. The write buffer uses it after a crash to
// replay a batch that may have been partly inserted, without duplicating rows.
func (s *Store) ExistingEventIDs(ctx context.Context, table string, span model.Span, ids []string) (map[string]bool, error) {
	if table != "events" && table != "bot_events" {
		return nil, fmt.Errorf("chstore: existing ids: unknown table %q", table)
	}
	return existing(ctx, s, "ids in "+table, ids, table,
		"SELECT event_id FROM %s WHERE has(?, site_id) AND ts >= ? AND ts <= ? AND has(?, event_id)",
		func(chunk []string) []any { return append(spanArgs(span), chunk) },
		func(r driver.Rows) (id string, err error) { return id, r.Scan(&id) })
}

// ExistingSessionRows reports which session rows of span are already stored,
// among the sessions listed.
func (s *Store) ExistingSessionRows(ctx context.Context, span model.Span, sessions []uint64) (map[model.SessionRowKey]bool, error) {
	return existing(ctx, s, "session rows", sessions, "sessions",
		"SELECT session_id, version, sign FROM %s WHERE has(?, site_id) AND started_at >= ? AND started_at <= ? AND has(?, session_id)",
		func(chunk []uint64) []any { return append(spanArgs(span), chunk) },
		func(r driver.Rows) (k model.SessionRowKey, err error) {
			return k, r.Scan(&k.SessionID, &k.Version, &k.Sign)
		})
}

// existing runs a lookup query of table (its %s) once per chunk of ids
// (args binds a chunk) and gathers the keys its rows scan to.
//
// On a cluster it asks every replica of every shard, each its local table,
// and fails unless all of them answer: an insert is acknowledged by one
// replica of its shard, and the others may not have fetched its part yet
// (or be down, holding the only copy), so only the union of all replicas
// is an exact answer. A lookup is needed only after an insert failed or a
// process stopped in the middle of one; it waits for a replica that is
// down, as it waits for a single server that is down.
func existing[T any, K comparable](ctx context.Context, s *Store, what string, ids []T, table, query string,
	args func(chunk []T) []any, scan func(driver.Rows) (K, error)) (map[K]bool, error) {
	found := map[K]bool{}
	collect := func(query string, args []any, scan func(driver.Rows) error) error {
		return s.collect(ctx, query, args, scan)
	}
	if s.layout.clustered() {
		collect = func(query string, args []any, scan func(driver.Rows) error) error {
			return s.everyNode(ctx, func(n *node) error { return n.collect(ctx, query, args, scan) })
		}
	}
	query = fmt.Sprintf(query, s.layout.local(table))
	for chunk := range slices.Chunk(ids, idsPerQuery) {
		err := collect(query, args(chunk), func(r driver.Rows) error {
			k, err := scan(r)
			if err != nil {
				return err
			}
			found[k] = true
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("chstore: existing %s: %w", what, err)
		}
	}
	return found, nil
}

// collect runs a query and hands each row to scan.
func (s *Store) collect(ctx context.Context, query string, args []any, scan func(driver.Rows) error) error {
	return collectOn(ctx, s.conn, query, args, scan)
}

func collectOn(ctx context.Context, conn driver.Conn, query string, args []any, scan func(driver.Rows) error) error {
	rows, err := conn.Query(ctx, query, args...)
	if err != nil {
		return translate(err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return translate(err)
		}
	}
	return translate(rows.Err())
}

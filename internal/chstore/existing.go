package chstore

import (
	"context"
	"fmt"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/ext"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/tally-analytics/tally/internal/model"
)

// The lookups read by the tables' sort keys: the span's sites by site_key
// (the cityHash64 of the id, first in every key), then its days by the
// time column, so a lookup reads those sites' rows of those days and no
// other site's. The ids go beside the query as an external table (_ids),
// which IN reads into a hash set: one query whatever their number, and no
// id in the query's text. A literal array tested with has(?, id) compared
// every row with every id, and a site_id condition alone left the key
// unused: on a month of 110M events, 2,000 ids of a 10M-event site took
// 135 s to look up, against 1 s by the key.
const spanSites = "site_key IN (SELECT cityHash64(arrayJoin(?))) AND has(?, site_id)"

func spanArgs(span model.Span) []any {
	sites := make([]string, len(span.Sites))
	for i, s := range span.Sites {
		sites[i] = string(s)
	}
	return []any{sites, sites, utc(span.From), utc(span.To)}
}

// ExistingEventIDs reports which of ids are already stored in table (events,
// bot_events or engagements) within span. The write buffer uses it after a crash to
// replay a batch that may have been partly inserted, without duplicating rows.
func (s *Store) ExistingEventIDs(ctx context.Context, table string, span model.Span, ids []string) (map[string]bool, error) {
	if table != "events" && table != "bot_events" && table != "engagements" {
		return nil, fmt.Errorf("chstore: existing ids: unknown table %q", table)
	}
	return existing(ctx, s, "ids in "+table, ids, table,
		"SELECT event_id FROM %s WHERE "+spanSites+" AND ts >= ? AND ts <= ? AND event_id IN _ids", spanArgs(span),
		func(r driver.Rows) (id string, err error) { return id, r.Scan(&id) })
}

// ExistingSessionRows reports which session rows of span are already stored,
// among the sessions listed.
func (s *Store) ExistingSessionRows(ctx context.Context, span model.Span, sessions []uint64) (map[model.SessionRowKey]bool, error) {
	return existing(ctx, s, "session rows", sessions, "sessions",
		"SELECT session_id, version, sign FROM %s WHERE "+spanSites+" AND started_at >= ? AND started_at <= ? AND session_id IN _ids",
		spanArgs(span),
		func(r driver.Rows) (k model.SessionRowKey, err error) {
			return k, r.Scan(&k.SessionID, &k.Version, &k.Sign)
		})
}

// existing runs a lookup query of table (its %s) with ids as the external
// table _ids, and gathers the keys its rows scan to.
//
// On a cluster it asks every replica of every shard, each its local table,
// and fails unless all of them answer: an insert is acknowledged by one
// replica of its shard, and the others may not have fetched its part yet
// (or be down, holding the only copy), so only the union of all replicas
// is an exact answer. A lookup is needed only after an insert failed or a
// process stopped in the middle of one; it waits for a replica that is
// down, as it waits for a single server that is down.
func existing[T string | uint64, K comparable](ctx context.Context, s *Store, what string, ids []T, table, query string,
	args []any, scan func(driver.Rows) (K, error)) (map[K]bool, error) {
	found := map[K]bool{}
	if len(ids) == 0 {
		return found, nil
	}
	idTable, err := externalTable("_ids", ids)
	if err != nil {
		return nil, fmt.Errorf("chstore: existing %s: %w", what, err)
	}
	ctx = clickhouse.Context(ctx, clickhouse.WithExternalTable(idTable))
	query = fmt.Sprintf(query, s.layout.local(table))
	gather := func(r driver.Rows) error {
		k, err := scan(r)
		if err != nil {
			return err
		}
		found[k] = true
		return nil
	}
	if s.layout.clustered() {
		err = s.everyNode(ctx, func(n *node) error { return n.collect(ctx, query, args, gather) })
	} else {
		err = s.collect(ctx, query, args, gather)
	}
	if err != nil {
		return nil, fmt.Errorf("chstore: existing %s: %w", what, err)
	}
	return found, nil
}

// externalTable is values as the external table name, of one column v,
// which a query reads as "x IN name": the lookups' ids and the stats
// queries' sets.
func externalTable[T string | uint64](name string, values []T) (*ext.Table, error) {
	col := ext.Column("v", "String")
	if _, ok := any(*new(T)).(uint64); ok {
		col = ext.Column("v", "UInt64")
	}
	t, err := ext.NewTable(name, col)
	if err != nil {
		return nil, err
	}
	for _, v := range values {
		if err := t.Append(v); err != nil {
			return nil, err
		}
	}
	return t, nil
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

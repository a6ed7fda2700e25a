package chstore

import (
	"context"
	"fmt"
	"reflect"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/tally-analytics/tally/internal/model"
)

const attributionColumns = "referrer, referrer_source, source_type, utm_source, utm_medium, utm_campaign, " +
	"utm_content, utm_term, device, browser, browser_version, os, os_version, country_code, region_code, region_name, city"

// attributionFields read the attribution columns, in attributionColumns' order.
var attributionFields = []func(a *model.Attribution) string{
	func(a *model.Attribution) string { return a.Referrer },
	func(a *model.Attribution) string { return a.ReferrerSource },
	func(a *model.Attribution) string { return a.SourceType },
	func(a *model.Attribution) string { return a.UTMSource },
	func(a *model.Attribution) string { return a.UTMMedium },
	func(a *model.Attribution) string { return a.UTMCampaign },
	func(a *model.Attribution) string { return a.UTMContent },
	func(a *model.Attribution) string { return a.UTMTerm },
	func(a *model.Attribution) string { return a.Device },
	func(a *model.Attribution) string { return a.Browser },
	func(a *model.Attribution) string { return a.BrowserVersion },
	func(a *model.Attribution) string { return a.OS },
	func(a *model.Attribution) string { return a.OSVersion },
	func(a *model.Attribution) string { return a.CountryCode },
	func(a *model.Attribution) string { return a.RegionCode },
	func(a *model.Attribution) string { return a.RegionName },
	func(a *model.Attribution) string { return a.City },
}

// utc truncates to the second in UTC: DateTime has second precision.
func utc(t time.Time) time.Time { return t.UTC().Truncate(time.Second) }

// column builds one column of n rows from a field of each row.
func column[T any](n int, field func(i int) T) []T {
	out := make([]T, n)
	for i := range out {
		out[i] = field(i)
	}
	return out
}

// attributionColumnsOf builds the attribution columns of n rows.
func attributionColumnsOf(n int, attr func(i int) *model.Attribution) []any {
	cols := make([]any, len(attributionFields))
	for j, f := range attributionFields {
		cols[j] = column(n, func(i int) string { return f(attr(i)) })
	}
	return cols
}

// InsertEvents writes event rows in one batch, column by column. id, when
// set, names the insert (its ClickHouse query id) for EndInsert.
func (s *Store) InsertEvents(ctx context.Context, id string, rows []model.EventRow) error {
	n := len(rows)
	cols := []any{
		column(n, func(i int) string { return string(rows[i].SiteID) }),
		column(n, func(i int) time.Time { return utc(rows[i].Timestamp) }),
		column(n, func(i int) string { return rows[i].EventID }),
		column(n, func(i int) string { return rows[i].Name }),
		column(n, func(i int) uint64 { return rows[i].VisitorID }),
		column(n, func(i int) uint64 { return rows[i].SessionID }),
		column(n, func(i int) string { return rows[i].Attribution.Hostname }),
		column(n, func(i int) string { return rows[i].Pathname }),
		column(n, func(i int) string { return rows[i].PrevPathname }),
		column(n, func(i int) uint32 { return rows[i].TimeOnPrev }),
	}
	cols = append(cols, attributionColumnsOf(n, func(i int) *model.Attribution { return &rows[i].Attribution })...)
	cols = append(cols,
		column(n, func(i int) []string { return nonNil(rows[i].PropKeys) }),
		column(n, func(i int) []string { return nonNil(rows[i].PropValues) }),
		column(n, func(i int) int64 { return rows[i].RevenueAmount }),
		column(n, func(i int) string { return rows[i].RevenueCurrency }))
	return s.insertColumns(ctx, id, "events", "INSERT INTO events (site_id, ts, event_id, name, visitor_id, session_id, hostname, "+
		"pathname, prev_pathname, time_on_prev, "+attributionColumns+", props_keys, props_values, revenue_amount, revenue_currency)",
		n, cols)
}

// InsertSessions writes session state and cancel rows in one batch, column
// by column; id as for InsertEvents.
func (s *Store) InsertSessions(ctx context.Context, id string, rows []model.SessionRow) error {
	n := len(rows)
	cols := []any{
		column(n, func(i int) string { return string(rows[i].SiteID) }),
		column(n, func(i int) uint64 { return rows[i].SessionID }),
		column(n, func(i int) uint64 { return rows[i].VisitorID }),
		column(n, func(i int) int8 { return rows[i].Sign }),
		column(n, func(i int) uint32 { return rows[i].Version }),
		column(n, func(i int) time.Time { return utc(rows[i].Start) }),
		column(n, func(i int) time.Time { return utc(rows[i].End) }),
		column(n, func(i int) uint32 { return rows[i].Duration() }),
		column(n, func(i int) uint32 { return rows[i].Pageviews }),
		column(n, func(i int) uint32 { return rows[i].Events }),
		column(n, func(i int) uint8 {
			if rows[i].IsBounce {
				return 1
			}
			return 0
		}),
		column(n, func(i int) string { return rows[i].EntryPage }),
		column(n, func(i int) string { return rows[i].ExitPage }),
		column(n, func(i int) string { return rows[i].Attribution.Hostname }),
	}
	cols = append(cols, attributionColumnsOf(n, func(i int) *model.Attribution { return &rows[i].Attribution })...)
	return s.insertColumns(ctx, id, "sessions", "INSERT INTO sessions (site_id, session_id, visitor_id, sign, version, started_at, "+
		"ended_at, duration, pageviews, events, is_bounce, entry_page, exit_page, hostname, "+attributionColumns+")", n, cols)
}

// InsertBotEvents writes filtered bot traffic in one batch; id as for
// InsertEvents.
func (s *Store) InsertBotEvents(ctx context.Context, id string, rows []model.BotEventRow) error {
	n := len(rows)
	return s.insertColumns(ctx, id, "bot_events", "INSERT INTO bot_events (site_id, ts, event_id, reason)", n, []any{
		column(n, func(i int) string { return string(rows[i].SiteID) }),
		column(n, func(i int) time.Time { return utc(rows[i].Timestamp) }),
		column(n, func(i int) string { return rows[i].EventID }),
		column(n, func(i int) string { return rows[i].Reason }),
	})
}

// InsertRefusals adds counts of refused events (tracking health) in one
// batch. An insert that failed may be repeated: unlike events, these rows
// are counts, so a repeat after a timeout whose insert did land counts
// twice — the price of not keeping them in the write-ahead log.
func (s *Store) InsertRefusals(ctx context.Context, rows []model.RefusalRow) error {
	n := len(rows)
	return s.insertColumns(ctx, "", "ingest_refusals", "INSERT INTO ingest_refusals (site_id, ts, reason, events)", n, []any{
		column(n, func(i int) string { return string(rows[i].SiteID) }),
		column(n, func(i int) time.Time { return utc(rows[i].Bucket) }),
		column(n, func(i int) string { return rows[i].Reason }),
		column(n, func(i int) uint64 { return rows[i].Events }),
	})
}

// insertColumns sends n rows given as one slice per column, in the order of
// stmt's column list: far cheaper than appending row by row.
func (s *Store) insertColumns(ctx context.Context, id, table, stmt string, n int, cols []any) error {
	if id != "" {
		ctx = clickhouse.Context(ctx, clickhouse.WithQueryID(id))
	}
	return s.sendBatch(ctx, table, stmt, n, func(batch driver.Batch) error {
		for lo := 0; lo < n; lo += insertBlockRows {
			hi := min(lo+insertBlockRows, n)
			for i, c := range cols {
				if err := batch.Column(i).Append(reflect.ValueOf(c).Slice(lo, hi).Interface()); err != nil {
					return fmt.Errorf("column %d: %w", i, err)
				}
			}
			if hi < n {
				if err := batch.Flush(); err != nil {
					return fmt.Errorf("send a block: %w", err)
				}
			}
		}
		return nil
	})
}

// insertBlockRows is how many rows an insert sends a block. The driver
// empties its columns after each block but keeps their buffers, so the
// later blocks fill them without growing them: a block of a whole insert
// grew every string column from empty, copying each byte about four times
// (6 % of tally's CPU at ingest). ClickHouse joins an insert's blocks into
// blocks of min_insert_block_size_rows before it writes them.
const insertBlockRows = 2048

// insert sends n rows appended one by one.
func (s *Store) insert(ctx context.Context, table, stmt string, n int, appendRow func(driver.Batch, int) error) error {
	return s.sendBatch(ctx, table, stmt, n, func(batch driver.Batch) error {
		for i := range n {
			if err := appendRow(batch, i); err != nil {
				return fmt.Errorf("append: %w", err)
			}
		}
		return nil
	})
}

// sendBatch prepares a batch for stmt, fills it and sends it, timed; no rows
// is no insert.
func (s *Store) sendBatch(ctx context.Context, table, stmt string, n int, fill func(driver.Batch) error) error {
	if n == 0 {
		return nil
	}
	return s.timed("insert_"+table, func() error {
		batch, err := s.conn.PrepareBatch(ctx, stmt)
		if err != nil {
			return fmt.Errorf("chstore: insert %s: prepare: %w", table, err)
		}
		if err := fill(batch); err != nil {
			batch.Abort() //nolint:errcheck // the fill error is the one to report
			return fmt.Errorf("chstore: insert %s: %w", table, err)
		}
		if err := batch.Send(); err != nil {
			return fmt.Errorf("chstore: insert %s: send: %w", table, err)
		}
		return nil
	})
}

// EndInsert waits until the insert named id is over: one still running in
// ClickHouse (its client gave up or went away while the server still
// writes) is waited for. After it, what the insert stored is all it will
// ever store, so looking for its rows gives a final answer. (KILL QUERY
// would be quicker, but ClickHouse 18.16 drops the connection of a native
// client that sends it.)
func (s *Store) EndInsert(ctx context.Context, id string) error {
	for {
		running, err := s.insertRunning(ctx, id)
		if err != nil {
			return translate(fmt.Errorf("chstore: end insert %s: %w", id, err))
		}
		if !running {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("chstore: end insert %s: %w", id, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// insertRunning reports whether the insert named id runs in ClickHouse (on
// a cluster: on any node).
func (s *Store) insertRunning(ctx context.Context, id string) (bool, error) {
	if s.layout.clustered() {
		return s.endInsertCluster(ctx, id)
	}
	var running uint64
	err := s.conn.QueryRow(ctx, "SELECT count() FROM system.processes WHERE query_id = ?", id).Scan(&running)
	return running > 0, err
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

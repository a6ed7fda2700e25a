package chstore

import (
	"context"
	"fmt"
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

// blockColumn is one column of an insert, sent a block of rows at a time.
type blockColumn interface {
	// send appends rows lo to hi (exclusive) to the driver's column.
	send(c driver.BatchColumn, lo, hi int) error
}

// fieldColumn reads a field of each row into a buffer of one block, which
// the driver copies: an insert holds one block of each column, not all of
// its rows (a flush of 10,000 events held 5 MB of string headers in whole
// columns, 5 % of the bytes tally allocated under single-event load).
type fieldColumn[T any] struct {
	field func(i int) T
	buf   []T
}

// column is the column of a field of each row.
func column[T any](field func(i int) T) blockColumn { return &fieldColumn[T]{field: field} }

func (c *fieldColumn[T]) send(bc driver.BatchColumn, lo, hi int) error {
	c.buf = c.buf[:0]
	for i := lo; i < hi; i++ {
		c.buf = append(c.buf, c.field(i))
	}
	return bc.Append(c.buf)
}

// attributionColumnsOf are the attribution columns of the rows.
func attributionColumnsOf(attr func(i int) *model.Attribution) []blockColumn {
	cols := make([]blockColumn, len(attributionFields))
	for j, f := range attributionFields {
		cols[j] = column(func(i int) string { return f(attr(i)) })
	}
	return cols
}

// InsertEvents writes event rows in one batch, column by column. id, when
// set, names the insert (its ClickHouse query id) for EndInsert.
func (s *Store) InsertEvents(ctx context.Context, id string, rows []model.EventRow) error {
	n := len(rows)
	cols := []blockColumn{
		column(func(i int) string { return string(rows[i].SiteID) }),
		column(func(i int) time.Time { return utc(rows[i].Timestamp) }),
		column(func(i int) string { return rows[i].EventID }),
		column(func(i int) string { return rows[i].Name }),
		column(func(i int) uint64 { return rows[i].VisitorID }),
		column(func(i int) uint8 { return uint8Of(rows[i].StableVisitor) }),
		column(func(i int) uint64 { return rows[i].SessionID }),
		column(func(i int) string { return rows[i].Attribution.Hostname }),
		column(func(i int) string { return rows[i].Pathname }),
		column(func(i int) string { return rows[i].PrevPathname }),
		column(func(i int) uint32 { return rows[i].TimeOnPrev }),
	}
	cols = append(cols, attributionColumnsOf(func(i int) *model.Attribution { return &rows[i].Attribution })...)
	cols = append(cols,
		column(func(i int) []string { return nonNil(rows[i].PropKeys) }),
		column(func(i int) []string { return nonNil(rows[i].PropValues) }),
		column(func(i int) int64 { return rows[i].RevenueAmount }),
		column(func(i int) string { return rows[i].RevenueCurrency }))
	return s.insertColumns(ctx, id, "events", "INSERT INTO events (site_id, ts, event_id, name, visitor_id, stable_visitor, session_id, hostname, "+
		"pathname, prev_pathname, time_on_prev, "+attributionColumns+", props_keys, props_values, revenue_amount, revenue_currency)",
		n, cols)
}

// InsertSessions writes session state and cancel rows in one batch, column
// by column; id as for InsertEvents.
func (s *Store) InsertSessions(ctx context.Context, id string, rows []model.SessionRow) error {
	n := len(rows)
	cols := []blockColumn{
		column(func(i int) string { return string(rows[i].SiteID) }),
		column(func(i int) uint64 { return rows[i].SessionID }),
		column(func(i int) uint64 { return rows[i].VisitorID }),
		column(func(i int) int8 { return rows[i].Sign }),
		column(func(i int) uint32 { return rows[i].Version }),
		column(func(i int) time.Time { return utc(rows[i].Start) }),
		column(func(i int) time.Time { return utc(rows[i].End) }),
		column(func(i int) uint32 { return rows[i].Duration() }),
		column(func(i int) uint32 { return rows[i].Pageviews }),
		column(func(i int) uint32 { return rows[i].Events }),
		column(func(i int) uint8 { return uint8Of(rows[i].IsBounce) }),
		column(func(i int) string { return rows[i].EntryPage }),
		column(func(i int) string { return rows[i].ExitPage }),
		column(func(i int) string { return rows[i].Attribution.Hostname }),
	}
	cols = append(cols, attributionColumnsOf(func(i int) *model.Attribution { return &rows[i].Attribution })...)
	return s.insertColumns(ctx, id, "sessions", "INSERT INTO sessions (site_id, session_id, visitor_id, sign, version, started_at, "+
		"ended_at, duration, pageviews, events, is_bounce, entry_page, exit_page, hostname, "+attributionColumns+")", n, cols)
}

// InsertBotEvents writes filtered bot traffic in one batch; id as for
// InsertEvents.
func (s *Store) InsertBotEvents(ctx context.Context, id string, rows []model.BotEventRow) error {
	n := len(rows)
	return s.insertColumns(ctx, id, "bot_events", "INSERT INTO bot_events (site_id, ts, event_id, reason)", n, []blockColumn{
		column(func(i int) string { return string(rows[i].SiteID) }),
		column(func(i int) time.Time { return utc(rows[i].Timestamp) }),
		column(func(i int) string { return rows[i].EventID }),
		column(func(i int) string { return rows[i].Reason }),
	})
}

// InsertEngagements writes the scroll depths the tracking script reported
// in one batch; id as for InsertEvents.
func (s *Store) InsertEngagements(ctx context.Context, id string, rows []model.EngagementRow) error {
	n := len(rows)
	return s.insertColumns(ctx, id, "engagements",
		"INSERT INTO engagements (site_id, ts, event_id, visitor_id, pathname, scroll_depth)", n, []blockColumn{
			column(func(i int) string { return string(rows[i].SiteID) }),
			column(func(i int) time.Time { return utc(rows[i].Timestamp) }),
			column(func(i int) string { return rows[i].EventID }),
			column(func(i int) uint64 { return rows[i].VisitorID }),
			column(func(i int) string { return rows[i].Pathname }),
			column(func(i int) uint8 { return rows[i].ScrollDepth }),
		})
}

// InsertRefusals adds counts of refused events (tracking health) in one
// batch. An insert that failed may be repeated: unlike events, these rows
// are counts, so a repeat after a timeout whose insert did land counts
// twice — the price of not keeping them in the write-ahead log.
func (s *Store) InsertRefusals(ctx context.Context, rows []model.RefusalRow) error {
	n := len(rows)
	return s.insertColumns(ctx, "", "ingest_refusals", "INSERT INTO ingest_refusals (site_id, ts, reason, events)", n, []blockColumn{
		column(func(i int) string { return string(rows[i].SiteID) }),
		column(func(i int) time.Time { return utc(rows[i].Bucket) }),
		column(func(i int) string { return rows[i].Reason }),
		column(func(i int) uint64 { return rows[i].Events }),
	})
}

// insertColumns sends n rows column by column, in the order of stmt's
// column list: far cheaper than appending row by row.
func (s *Store) insertColumns(ctx context.Context, id, table, stmt string, n int, cols []blockColumn) error {
	if id != "" {
		ctx = clickhouse.Context(ctx, clickhouse.WithQueryID(id))
	}
	return s.sendBatch(ctx, table, stmt, n, func(batch driver.Batch) error {
		for lo := 0; lo < n; lo += insertBlockRows {
			hi := min(lo+insertBlockRows, n)
			for i, c := range cols {
				if err := c.send(batch.Column(i), lo, hi); err != nil {
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

// uint8Of is a boolean as ClickHouse's UInt8 columns hold it.
func uint8Of(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}

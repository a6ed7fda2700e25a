package stats

import (
	"fmt"
	"strings"
	"time"

	"github.com/tally-analytics/tally/internal/model"
)

// Statement is one SQL statement and its arguments.
type Statement struct {
	SQL  string
	Args []any
}

// RollupRebuild rebuilds one rollup table's rows of a range from the raw
// rows: delete the rows Delete selects (ALTER TABLE … DELETE WHERE), wait
// for the mutation, then run Inserts.
type RollupRebuild struct {
	Table   string
	Delete  Statement // a condition on the rollup's rows; none (SQL "") for visitor blocks
	Inserts []Statement
}

// RollupTables lists every table the views keep from the raw rows: those
// of the pages (clickhouse/0005_page_rollups.sql), the declared rollups,
// and the funnels' copy of the events (eventsByPath).
func RollupTables() []string {
	out := []string{"page_days", "page_visitor_days", eventsByPath}
	for _, r := range rollups {
		out = append(out, r.table)
		if r.blocks {
			out = append(out, r.blocksTable())
		}
	}
	return out
}

// RebuildBefore is the end of the range `tally rollups rebuild` may
// rewrite at now: the start of yesterday (UTC). Rows of later days are
// still being written — a session's cancel and new rows carry its start,
// up to a day back — and the views would add them again after the rebuild
// read them (ClickHouse deletes only the parts that existed when the
// mutation was submitted, and cannot lock a table).
func RebuildBefore(now time.Time) time.Time {
	return now.UTC().Truncate(dayGrain).Add(-dayGrain)
}

// RollupRebuilds lists how to rebuild every rollup table for the whole UTC
// days [from, to) of one site, or of every site when site is "".
func RollupRebuilds(site model.SiteID, from, to time.Time) []RollupRebuild {
	from, to = from.UTC(), to.UTC()
	siteCond, siteArgs := "", []any(nil)
	if site != "" {
		siteCond, siteArgs = "site_key = cityHash64(?) AND ", []any{string(site)}
	}
	days := []any{from.Format(time.DateOnly), to.Format(time.DateOnly)}
	span := append(append([]any(nil), siteArgs...), from, to)
	pages := Statement{siteCond + "day >= toDate(?) AND day < toDate(?)", append(append([]any(nil), siteArgs...), days...)}
	pageWhere := siteCond + "ts >= ? AND ts < ? AND is_pageview = 1"
	out := []RollupRebuild{
		{Table: "page_days", Delete: pages, Inserts: []Statement{
			{"INSERT INTO page_days (site_key, day, pathname, pageviews, time_sum, time_count)" +
				" SELECT site_key, toDate(ts, 'UTC') AS day, pathname, count(), toUInt64(0), toUInt64(0)" +
				" FROM events WHERE " + pageWhere + " GROUP BY site_key, day, pathname", span},
			{"INSERT INTO page_days (site_key, day, pathname, pageviews, time_sum, time_count)" +
				" SELECT site_key, toDate(ts, 'UTC') AS day, prev_pathname, toUInt64(0), toUInt64(sum(time_on_prev)), count()" +
				" FROM events WHERE " + pageWhere + " AND prev_pathname != '' GROUP BY site_key, day, prev_pathname", span},
		}},
		{Table: "page_visitor_days", Delete: pages, Inserts: []Statement{
			{"INSERT INTO page_visitor_days (site_key, day, pathname, visitors)" +
				" SELECT site_key, toDate(ts, 'UTC') AS day, pathname, uniqCombinedState(" + PageStatePrecision + ")(visitor_id)" +
				" FROM events WHERE " + pageWhere + " GROUP BY site_key, day, pathname", span},
		}},
		{Table: eventsByPath, Delete: Statement{siteCond + "ts >= ? AND ts < ?", span}, Inserts: []Statement{
			{"INSERT INTO " + eventsByPath + " (" + eventsByPathColumns + ") SELECT " + eventsByPathColumns +
				" FROM events WHERE " + siteCond + "ts >= ? AND ts < ?", span},
		}},
	}
	for _, r := range rollups {
		tc := timeColumn[r.source]
		cond := siteCond + tc + " >= ? AND " + tc + " < ?"
		out = append(out, RollupRebuild{Table: r.table, Delete: Statement{cond, span},
			Inserts: []Statement{{"INSERT INTO " + r.table + " (" + strings.Join(r.columns(), ", ") + ") " + r.selectSQL(cond), span}}})
		if r.blocks {
			// visitor states are unions: the days' visitors inserted again
			// into their blocks mend what is missing and double nothing, so
			// blocks are rebuilt without deleting — and a block that reaches
			// into today, which the views are still writing, is mended too
			rb := RollupRebuild{Table: r.blocksTable()}
			for _, level := range blockLevels {
				rb.Inserts = append(rb.Inserts, Statement{"INSERT INTO " + r.blocksTable() + " (" + strings.Join(r.blockColumns(), ", ") + ") " +
					r.blocksSQL(level, cond), span})
			}
			out = append(out, rb)
		}
	}
	return out
}

// columns are r's columns in the order selectSQL selects them.
func (r rollup) columns() []string {
	cols := []string{"site_key", timeColumn[r.source]}
	for _, d := range r.dims {
		cols = append(cols, d.exprs[r.source])
	}
	for _, m := range r.tableMetrics() {
		cols = append(cols, m.column)
	}
	return cols
}

// selectSQL rolls the raw rows meeting where ("" = all) up into r's rows,
// in the order of columns: the SELECT of its materialised view (which
// matches columns by name), its backfill and its rebuild.
func (r rollup) selectSQL(where string) string {
	return r.rollUp(false, r.grain, "", r.tableMetrics(), where)
}

// rollUp rolls the raw rows meeting where up by site, unit of span and r's
// dims: site_key, then lead (a column of constants) if any, the start of
// the unit, the dims and metrics. The start is named as the raw time
// column, unless where needs that column: ClickHouse would read an alias
// there. With days, it rolls r's blocks of single days up instead (where
// then picks them), merging their visitor states.
func (r rollup) rollUp(days bool, span time.Duration, lead string, metrics []rollupMetric, where string) string {
	tc := timeColumn[r.source]
	unit := tc
	if where != "" {
		unit = "unit"
	}
	g := int64(span / time.Second)
	sel := []string{"site_key"}
	if lead != "" {
		sel = append(sel, lead)
	}
	sel = append(sel, fmt.Sprintf("toDateTime(intDiv(toUInt32(%s), %d) * %d) AS %s", tc, g, g, unit))
	group := []string{"site_key", unit}
	for _, d := range r.dims {
		sel = append(sel, d.exprs[r.source])
		group = append(group, d.exprs[r.source])
	}
	for _, m := range metrics {
		expr := m.metric.exprs[r.source]
		switch {
		case m.uniq && days:
			expr = "uniqCombinedMergeState(17)(" + m.column + ")"
		case m.uniq:
			expr = visitorState(r.source)
		}
		sel = append(sel, expr+" AS "+m.column)
	}
	from := string(r.source)
	if days {
		from = r.blocksTable()
	}
	sql := "SELECT " + strings.Join(sel, ", ") + " FROM " + from
	if where != "" {
		sql += " WHERE " + where
	}
	return sql + " GROUP BY " + strings.Join(group, ", ")
}

// blockColumns are the columns of r's visitor blocks, in the order
// blocksSQL selects them.
func (r rollup) blockColumns() []string {
	cols := []string{"site_key", "level", timeColumn[r.source]}
	for _, d := range r.dims {
		cols = append(cols, d.exprs[r.source])
	}
	for _, m := range r.visitorMetrics() {
		cols = append(cols, m.column)
	}
	return cols
}

// visitorMetrics are r's metrics kept as visitor states.
func (r rollup) visitorMetrics() []rollupMetric {
	var out []rollupMetric
	for _, m := range r.metrics {
		if m.uniq {
			out = append(out, m)
		}
	}
	return out
}

// blocksSQL rolls the raw rows meeting where ("" = all) up into r's visitor
// blocks of one level, in the order of blockColumns.
func (r rollup) blocksSQL(level int, where string) string {
	return r.rollUp(false, r.grain<<level, fmt.Sprintf("toUInt8(%d) AS level", level), r.visitorMetrics(), where)
}

// blocksViewSQL is the SELECT of the view that writes the late rows into
// r's visitor blocks (blocks.go: lateAfter; the live ones are built once
// closed): each late row once a level (the arrayJoin function, which
// repeats only the columns the rest of the SELECT reads, where an ARRAY
// JOIN clause over the table repeated every column of the inserted block;
// a subquery of those columns is refused by ClickHouse 18.16 when the
// insert comes through a Distributed table), its start rounded down to its
// block. The start is read as ended_at less the duration: started_at there
// would be the alias of the block's start, which depends on the level
// (ClickHouse refuses the cycle). Only the rows of sign 1: a cancel row
// repeats the visitor and dims of a row inserted before it (the same
// blocks either way, from half the rows). Backfills and rebuilds insert
// level by level (blocksSQL), which adds the same visitors.
func (r rollup) blocksViewSQL() string {
	tc := timeColumn[r.source]
	levels := make([]string, len(blockLevels))
	for i, level := range blockLevels {
		levels[i] = fmt.Sprintf("toUInt8(%d)", level)
	}
	late := fmt.Sprintf("toUInt32(ended_at) - duration < toUInt32(now()) - %d", int64(lateAfter/time.Second))
	span := fmt.Sprintf("bitShiftLeft(toUInt32(%d), level)", int64(r.grain/time.Second))
	sel := []string{"site_key", "arrayJoin([" + strings.Join(levels, ", ") + "]) AS level",
		fmt.Sprintf("toDateTime(intDiv(toUInt32(%s), %s) * %s) AS %s", tc, span, span, tc)}
	group := []string{"site_key", "level", tc}
	for _, d := range r.dims {
		sel = append(sel, d.exprs[r.source])
		group = append(group, d.exprs[r.source])
	}
	for _, m := range r.metrics {
		if m.uniq {
			sel = append(sel, visitorState(r.source)+" AS "+m.column)
		}
	}
	return "SELECT " + strings.Join(sel, ", ") + " FROM " + string(r.source) + " WHERE sign = 1 AND " + late +
		" GROUP BY " + strings.Join(group, ", ")
}

// RollupViews are the statements of the materialised views that keep the
// declared rollups, and the backfill of their tables, as the migrations
// from clickhouse/0008_rollups.sql on hold them (a test compares them with
// the migrations as one node runs them).
func RollupViews() []string {
	var out []string
	for _, r := range rollups {
		out = append(out,
			"CREATE MATERIALIZED VIEW IF NOT EXISTS "+r.table+"_mv TO "+r.table+" AS "+r.selectSQL(""),
			"TRUNCATE TABLE "+r.table,
			"INSERT INTO "+r.table+" ("+strings.Join(r.columns(), ", ")+") "+r.selectSQL(""))
		if r.blocks {
			b := r.blocksTable()
			out = append(out, fmt.Sprintf("CREATE MATERIALIZED VIEW IF NOT EXISTS %s_mv TO %s AS %s", b, b, r.blocksViewSQL()),
				"TRUNCATE TABLE "+b)
			for _, level := range blockLevels {
				out = append(out, "INSERT INTO "+b+" ("+strings.Join(r.blockColumns(), ", ")+") "+r.blocksSQL(level, ""))
			}
		}
	}
	return out
}

package stats

import (
	"fmt"
	"strings"
	"time"
)

// Rollups: tables that materialised views keep in step with every insert
// into events, sessions and bot_events (clickhouse/0008_rollups.sql), each
// summing the raw rows of a site by a unit of time (a quarter of an hour or
// a UTC day) and the values of a few dimensions. Each is declared once
// below; the declaration drives the planner (a Query whose table,
// dimensions, filters and metrics a rollup holds reads it for the whole
// units of its range and the raw table only for the edges), the views'
// SELECT (a test holds the migration to it) and `tally rollups rebuild`.
//
// A rollup's columns are named as the raw table's, its time column too
// (ts, started_at: the start of the unit), so the vocabulary's expressions
// apply to both unchanged.
//
// Grains: the overview's totals have UTC days and quarters of an hour. A
// range reads the whole UTC days it holds from the days, the parts of days
// at its edges from the quarters (all UTC offsets are multiples of 15
// minutes; +5:30 and +12:45 included), and raw rows only where it starts or
// ends inside a quarter; a series by day in a zone whose midnights are not
// UTC's reads quarters throughout. Days matter for visitors: a day's visitor
// state is one state to merge, where its 96 quarters' are 96 (on 10M events
// over 30 days, 30 states instead of 2,880: the overview's visitors in ~75
// ms instead of ~400). The breakdowns use UTC days only: a day holds ~96
// times fewer rows than its quarters (most rows of a breakdown are values
// seen a few times a day), and an edge costs little more than a quarter
// would, since the raw tables are ordered by day and an edge of a few
// minutes reads that day's rows of the site anyway.
type rollup struct {
	table   string
	source  Table
	grain   time.Duration
	dims    []Dimension
	metrics []rollupMetric
	// blocks: the visitors of a day rollup are kept by blocks of 1, 4 and
	// 16 UTC days (<table>_blocks; see block), and only there: the day
	// table holds the sums
	blocks bool
}

// rollupMetric is a metric a rollup holds in a column: a sum of the
// metric's own expression on the raw table, or distinct visitors as
// uniqCombined(17) states.
type rollupMetric struct {
	metric Metric
	column string
	uniq   bool
}

const (
	quarterGrain = 15 * time.Minute
	dayGrain     = 24 * time.Hour
)

// visitorState is the state of Visitors (uniqCombined, whose default
// precision is 17) on the raw rows of t: of events, those of a known
// visitor, as Visitors counts them. Merging such states counts exactly what
// uniqCombined counts over the same rows, so a report reads the same
// visitors from rollups as from raw rows (exact up to a few thousand, within
// about 0.3 % beyond); a state takes 4 bytes a visitor, at most ~80 KB.
func visitorState(t Table) string {
	if t == Events {
		return "uniqCombinedStateIf(17)(visitor_id, " + knownVisitor + ")"
	}
	return "uniqCombinedState(17)(visitor_id)"
}

var (
	rolledVisitors = rollupMetric{metric: Visitors, column: "visitors", uniq: true}
	// rolledSessions counts live sessions: the visits of the statistics
	rolledSessions = rollupMetric{metric: SessionCount, column: "sessions"}
	// sessionSums are exact in SummingMergeTree: every column adds up sign
	// times a figure, so the cancel rows of the sessions table take out the
	// states they replace, wherever a merge puts them.
	sessionSums = []rollupMetric{
		rolledSessions, {metric: Bounces, column: "bounces"},
		{metric: DurationSum, column: "duration_sum"}, {metric: Pageviews, column: "pageview_count"},
	}
)

// withBlocks keeps r's visitors by blocks of days instead of in its table
// (see block).
func withBlocks(r rollup) rollup {
	r.blocks = true
	return r
}

// tableMetrics are the metrics r's own table holds: all of them, but its
// visitors when blocks keep those. A day's visitors are the block of level
// 0 of that day: a second state of the same visitors in the day table cost
// every insert a state to build and every merge of the day's part a state
// to merge again (on ClickHouse alone, 5 s of CPU more for 100 inserts of
// 14,000 session rows: a sixth to a fifth of what the session views cost).
func (r rollup) tableMetrics() []rollupMetric {
	if !r.blocks {
		return r.metrics
	}
	var out []rollupMetric
	for _, m := range r.metrics {
		if !m.uniq {
			out = append(out, m)
		}
	}
	return out
}

// siteMetrics are a site's totals over events: visitors, pageviews, events.
var siteMetrics = []rollupMetric{rolledVisitors, {metric: Pageviews, column: "pageview_count"}, {metric: EventCount, column: "event_count"}}

// sessionRollup rolls sessions up by UTC day of their start and dims fixed
// when a session starts (visitors are counted over every row of a session,
// cancel rows included: all carry the same dims).
func sessionRollup(table string, dims ...Dimension) rollup {
	return rollup{table: table, source: Sessions, grain: dayGrain, dims: dims,
		metrics: append(append([]rollupMetric(nil), sessionSums...), rolledVisitors)}
}

// rollups are the declared rollups, in the planner's order: the first that
// holds a query reads the whole units of its range, the next that holds it
// (a finer grain) those of the edges left, and so on.
var rollups = []rollup{
	// the overview: visitors, pageviews and events by UTC day, and by
	// quarter for the days a range or a zone's day cuts; its sessions
	{table: "site_days", source: Events, grain: dayGrain, metrics: siteMetrics},
	{table: "site_quarters", source: Events, grain: quarterGrain, metrics: siteMetrics},
	{table: "session_quarters", source: Sessions, grain: quarterGrain, metrics: sessionSums},
	// custom events (and pageviews, one row a day)
	{table: "event_days", source: Events, grain: dayGrain, dims: []Dimension{IsPageview, EventName},
		metrics: []rollupMetric{{metric: EventCount, column: "event_count"}, rolledVisitors}},
	{table: "bot_days", source: BotEvents, grain: dayGrain, dims: []Dimension{BotReason},
		metrics: []rollupMetric{{metric: EventCount, column: "event_count"}}},
	withBlocks(sessionRollup("source_days", Source, SourceType)),
	sessionRollup("utm_days", UTMSource, UTMMedium, UTMCampaign, UTMContent),
	withBlocks(sessionRollup("device_days", Device, Browser, OS)),
	// countries: a block's visitors merge one state a country instead of
	// one a city (on 10M demo events, 15 countries against 28 places a
	// block, and a range of 30 days covers 6 to 12 blocks); before
	// location_days, which the regions and cities read
	withBlocks(sessionRollup("country_days", Country)),
	withBlocks(sessionRollup("location_days", Country, Region, RegionName, City)),
	// entry and exit pages count sessions only; the exit page changes
	// between versions of a session (a mutable dimension), which sums with
	// sign handle but visitor states could not
	{table: "entry_days", source: Sessions, grain: dayGrain, dims: []Dimension{EntryPage}, metrics: sessionSums},
	{table: "exit_days", source: Sessions, grain: dayGrain, dims: []Dimension{ExitPage}, metrics: sessionSums},
}

// holds reports whether every dimension, filter and metric of q is in r.
func (r rollup) holds(q Query) bool {
	if r.source != q.Table {
		return false
	}
	for _, d := range q.Dimensions {
		if d.zone == "" && !r.hasDim(d) {
			return false
		}
	}
	for _, f := range q.Filters {
		if f.Visits || len(f.Any) > 0 || !r.hasDim(f.Dim) {
			return false
		}
	}
	for _, m := range q.Metrics {
		if _, ok := r.metric(m); !ok {
			return false
		}
	}
	return true
}

func (r rollup) hasDim(d Dimension) bool {
	for _, x := range r.dims {
		if x.Name == d.Name && x.exprs[r.source] == d.exprs[r.source] && len(d.args) == 0 {
			return true
		}
	}
	return false
}

func (r rollup) metric(m Metric) (rollupMetric, bool) {
	for _, x := range r.metrics {
		if x.metric.Name == m.Name && x.metric.exprs[r.source] == m.exprs[r.source] && len(m.args) == 0 {
			return x, true
		}
	}
	return rollupMetric{}, false
}

// rollupPlan reads a query's range in parts: whole units of rollups, from
// the coarsest that holds the query to the finest (site_days, then
// site_quarters for the parts of days at its edges), and the raw table for
// what no rollup's whole unit covers.
type rollupPlan struct {
	parts []planPart // rolled parts first, then raw ones
}

// planPart is [from, to) of a rollup's table, or of the raw table when r is
// nil. When blocks is set, the part's visitors come from those blocks, and
// its sums from the rollup's table.
type planPart struct {
	r        *rollup
	from, to time.Time
	blocks   []block
}

// rollupPlan splits q's range among the rollups that hold it, in their
// declared order: each takes the whole units of what is left of the range
// and leaves its edges to the next; ok is false when q does not allow
// rollups or no rollup has a whole unit in it.
func (q Query) rollupPlan() (rollupPlan, bool) {
	if !q.Rollups {
		return rollupPlan{}, false
	}
	spans := [][2]time.Time{{q.From.UTC(), q.To.UTC()}}
	var p rollupPlan
	for i := range rollups {
		r := &rollups[i]
		if !r.holds(q) {
			continue
		}
		var rest [][2]time.Time
		for _, s := range spans {
			units, edges, ok := r.plan(q, s[0], s[1])
			if !ok {
				rest = append(rest, s)
				continue
			}
			rest = append(rest, edges...)
			if !r.blocks || !q.countsVisitors() {
				p.parts = append(p.parts, planPart{r: r, from: units[0], to: units[1]})
				continue
			}
			// by day, each day's block; over the range, the longest blocks;
			// of those built. The days not built yet are left to the next
			// rollups, and to the raw rows.
			blocks, unbuilt := dyadic(units[0], units[1], func(b block) bool {
				return (b.level == 0 || q.mergesVisitorsOverDays()) && q.Built.has(r.blocksTable(), b)
			})
			rest = append(rest, unbuilt...)
			for len(blocks) > 0 {
				n := 1
				for n < len(blocks) && blocks[n].start.Equal(blocks[n-1].end()) {
					n++
				}
				p.parts = append(p.parts, planPart{r: r, from: blocks[0].start, to: blocks[n-1].end(), blocks: blocks[:n]})
				blocks = blocks[n:]
			}
		}
		spans = rest
	}
	if len(p.parts) == 0 {
		return rollupPlan{}, false
	}
	for _, s := range spans {
		p.parts = append(p.parts, planPart{from: s[0], to: s[1]})
	}
	return p, true
}

// countsVisitors reports whether q's metrics include visitors.
func (q Query) countsVisitors() bool {
	for _, m := range q.Metrics {
		if m.Name == Visitors.Name {
			return true
		}
	}
	return false
}

// mergesVisitorsOverDays reports whether q counts visitors over its whole
// range rather than by day of a time zone: blocks longer than a day can
// serve it. By day, each day's visitors are its block of level 0 (a zone
// whose days are not UTC's reads no day rollup: see plan).
func (q Query) mergesVisitorsOverDays() bool {
	for _, d := range q.Dimensions {
		if d.zone != "" {
			return false
		}
	}
	return q.countsVisitors()
}

// A block is 2^level UTC days from a day whose number (days since
// 1970-01-01) 2^level divides. The breakdowns whose values are many and
// large (sources, devices, locations) keep their visitors by blocks of 1, 4
// and 16 days too (blockLevels), in <table>_blocks, so that a range's
// visitors merge a few states a value instead of one a day. Reading and
// merging visitor states is what a breakdown over days costs: on ClickHouse
// 18.16 about half a millisecond for a large one (uniqCombined(17) keeps
// 2^17 registers), so 30 days of a site's 15 large countries took ~340 ms;
// in blocks, 30 days are 7 on average (dyadic).
//
// Blocks are built once closed (blocks.go); one view writes the late rows,
// whose blocks may be built already, into every level (blocksViewSQL: the
// arrayJoin function repeats each row once a level, and only the columns
// the blocks hold; an ARRAY JOIN clause repeated every column of the
// inserted block: 12 s more per million session rows). Three levels are the trade
// between what a query reads and what an insert pays (levels 0..5 read ~5
// blocks for 30 days instead of ~7, for twice the rows). The blocks table
// is read in granules of 16 rows, so a block's few rows do not drag in the
// states of its neighbours (ClickHouse reads a column by whole granules),
// which is also why single days are blocks of level 0 rather than rows of
// the day table. Blocks hold visitor states only: sums are cheap to add up
// from the days, and a state is a union, so inserting the same visitors
// twice changes nothing — which makes a rebuild of blocks a plain insert.
type block struct {
	level int
	start time.Time
}

// blockLevels are the levels blocks are kept for, longest first; the last
// is 0, single days, so that every range of whole days is covered.
var blockLevels = []int{4, 2, 0}

// dyadic splits the whole UTC days [from, to) into blocks from the left: at
// each day the longest block that starts there, fits and is usable. The
// days no usable block starts at are left out, as the runs of them, unbuilt.
func dyadic(from, to time.Time, usable func(block) bool) (blocks []block, unbuilt [][2]time.Time) {
	const day = int64(dayGrain / time.Second)
	at := func(a int64) time.Time { return time.Unix(a*day, 0).UTC() }
	for a, b := from.Unix()/day, to.Unix()/day; a < b; {
		took := false
		for _, level := range blockLevels {
			blk := block{level: level, start: at(a)}
			if n := int64(1) << level; a%n == 0 && a+n <= b && usable(blk) {
				blocks = append(blocks, blk)
				a += n
				took = true
				break
			}
		}
		if !took {
			if k := len(unbuilt) - 1; k >= 0 && unbuilt[k][1].Equal(at(a)) {
				unbuilt[k][1] = at(a + 1)
			} else {
				unbuilt = append(unbuilt, [2]time.Time{at(a), at(a + 1)})
			}
			a++
		}
	}
	return blocks, unbuilt
}

// end is the end of the block.
func (b block) end() time.Time { return b.start.Add(dayGrain << b.level) }

// plan splits [from, to) into r's whole units and the edges; ok is false
// when it holds no whole unit, or when q groups by day in a zone whose
// midnights fall inside units.
func (r rollup) plan(q Query, from, to time.Time) (units [2]time.Time, edges [][2]time.Time, ok bool) {
	units, edges, ok = wholeUnits(from, to, r.grain)
	if !ok {
		return units, nil, false
	}
	for _, d := range q.Dimensions {
		if d.zone != "" && !alignedDays(d.zone, units[0], units[1], r.grain) {
			return units, nil, false
		}
	}
	return units, edges, true
}

// wholeUnits splits [from, to) into the whole units of grain it holds
// (UTC; [units[0], units[1])) and the parts before and after them, the
// edges; ok is false when it holds no whole unit.
func wholeUnits(from, to time.Time, grain time.Duration) (units [2]time.Time, edges [][2]time.Time, ok bool) {
	from, to = from.UTC(), to.UTC()
	first := from.Truncate(grain)
	if first.Before(from) {
		first = first.Add(grain)
	}
	last := to.Truncate(grain)
	if !first.Before(last) {
		return units, nil, false
	}
	if from.Before(first) {
		edges = append(edges, [2]time.Time{from, first})
	}
	if last.Before(to) {
		edges = append(edges, [2]time.Time{last, to})
	}
	return [2]time.Time{first, last}, edges, true
}

// alignedDays reports whether every start of a day of zone within (first,
// last) starts a unit of grain, so that no unit straddles two of its days.
func alignedDays(zone string, first, last time.Time, grain time.Duration) bool {
	loc, err := LoadLocation(zone)
	if err != nil {
		return false
	}
	g := int64(grain / time.Second)
	d := first.In(loc)
	for n := 1; ; n++ {
		m := startOfDay(d.Year(), d.Month(), d.Day()+n, loc)
		if !m.Before(last) {
			break
		}
		if m.Unix()%g != 0 {
			return false
		}
	}
	return true
}

// build is q read from the plan: its parts UNION ALL, each aggregated to
// partial figures (sums, visitor states), then merged; the result's columns
// are those of Query.Build.
func (p rollupPlan) build(q Query) (string, []any) {
	var parts []string
	var args []any
	for _, part := range p.parts {
		sql, partArgs := p.part(q, part)
		parts = append(parts, sql)
		args = append(args, partArgs...)
	}
	var sel, group []string
	for i := range q.Dimensions {
		sel = append(sel, fmt.Sprintf("k%d AS d%d", i, i))
		group = append(group, fmt.Sprintf("d%d", i))
	}
	for i, m := range q.Metrics {
		merge := "sum"
		if p.metric(m).uniq {
			merge = "uniqCombinedMerge(17)"
		}
		sel = append(sel, fmt.Sprintf("toFloat64(%s(v%d)) AS m%d", merge, i, i))
	}
	var b strings.Builder
	b.WriteString("SELECT " + strings.Join(sel, ", ") + " FROM (" + strings.Join(parts, " UNION ALL ") + ")")
	args = q.tail(&b, group, "live", args)
	return b.String(), args
}

// metric is m as the plan's first rollup holds it (every rollup of a plan
// holds m the same way: a sum, or visitor states).
func (p rollupPlan) metric(m Metric) rollupMetric {
	rm, _ := p.parts[0].r.metric(m)
	return rm
}

// part aggregates one part of the plan: [from, to) of a rollup or of the
// raw table; with blocks, the rollup's sums UNION ALL the blocks' visitors.
func (p rollupPlan) part(q Query, part planPart) (string, []any) {
	rolled := part.r != nil
	sel, keys, args := q.keyColumns()
	tc := timeColumn[q.Table]
	for i, m := range q.Metrics {
		rm := p.metric(m)
		if rolled {
			rm, _ = part.r.metric(m)
		}
		expr := rm.partial(q.Table, rolled)
		if rm.uniq && part.blocks != nil {
			// the blocks count the visitors: an empty state, so that the
			// visitors column is not read
			expr = "uniqCombinedStateIf(17)(site_key, 0)"
		}
		sel = append(sel, expr+fmt.Sprintf(" AS v%d", i))
	}
	table := string(q.Table)
	if q.Table == Sessions && len(keys) > 0 {
		sel = append(sel, rolledSessions.partial(q.Table, rolled)+" AS live")
	}
	if rolled {
		table = part.r.table
	}
	span, spanArgs := tc+" >= ? AND "+tc+" < ?", []any{part.from, part.to}
	if !rolled {
		span, spanArgs = timeRange(q.Table), timeArgs(q.Table, part.from, part.to)
	}
	sql := "SELECT " + strings.Join(sel, ", ") + " FROM " + table + " WHERE site_key = cityHash64(?) AND " + span
	args = append(append(args, string(q.Site)), spanArgs...)
	sql, args = q.filtered(sql, args, keys)
	if part.blocks == nil {
		return sql, args
	}
	blocks, blockArgs := p.blocksPart(q, part)
	return sql + " UNION ALL " + blocks, append(args, blockArgs...)
}

// blocksPart selects the visitor states of part's blocks, and zeros for
// the sums.
func (p rollupPlan) blocksPart(q Query, part planPart) (string, []any) {
	sel, keys, args := q.keyColumns()
	for i, m := range q.Metrics {
		expr := "toFloat64(0)"
		if rm, _ := part.r.metric(m); rm.uniq {
			expr = "uniqCombinedMergeState(17)(" + rm.column + ")"
		}
		sel = append(sel, expr+fmt.Sprintf(" AS v%d", i))
	}
	if q.Table == Sessions && len(keys) > 0 {
		sel = append(sel, "toFloat64(0) AS live")
	}
	tc := timeColumn[q.Table]
	args = append(args, string(q.Site))
	var which []string
	for _, b := range part.blocks {
		which = append(which, "(level = ? AND "+tc+" = ?)")
		args = append(args, b.level, b.start)
	}
	sql := "SELECT " + strings.Join(sel, ", ") + " FROM " + part.r.blocksTable() +
		" WHERE site_key = cityHash64(?) AND (" + strings.Join(which, " OR ") + ")"
	return q.filtered(sql, args, keys)
}

// keyColumns selects q's dimensions as a part's keys k0, k1, …, with their
// arguments.
func (q Query) keyColumns() (sel, keys []string, args []any) {
	for i, d := range q.Dimensions {
		sel = append(sel, fmt.Sprintf("toString(%s) AS k%d", d.exprs[q.Table], i))
		args = append(args, d.args...)
		keys = append(keys, fmt.Sprintf("k%d", i))
	}
	return sel, keys, args
}

// filtered appends q's filters and the grouping by keys to a part's SQL.
func (q Query) filtered(sql string, args []any, keys []string) (string, []any) {
	for _, f := range q.Filters {
		cond, condArgs := f.condition(f.Dim.exprs[q.Table])
		sql += " AND " + cond
		args = append(args, condArgs...)
	}
	if len(keys) > 0 {
		sql += " GROUP BY " + strings.Join(keys, ", ")
	}
	return sql, args
}

// blocksTable is the table of r's visitor blocks.
func (r rollup) blocksTable() string { return r.table + "_blocks" }

// partial is the metric's partial figure on the rollup (rolled) or on the
// raw table t: a Float64 sum, or a visitor state.
func (m rollupMetric) partial(t Table, rolled bool) string {
	switch {
	case m.uniq && rolled:
		return "uniqCombinedMergeState(17)(" + m.column + ")"
	case m.uniq:
		return visitorState(t)
	case rolled:
		return "toFloat64(sum(" + m.column + "))"
	default:
		return "toFloat64(" + m.metric.exprs[t] + ")"
	}
}

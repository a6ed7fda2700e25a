package stats

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tally-analytics/tally/internal/model"
)

// pageRollup reads the per-page figures of a range without filters from the
// daily rollups that materialised views keep in step with the events table
// (clickhouse/0005_page_rollups.sql): the whole UTC days of the range from
// page_days and page_visitor_days, the parts of days at either end (a range
// in another time zone starts and ends within UTC days) from events.
//
// On 10M events the 30-day top pages read ~6,000 rollup rows instead of
// ~10M events. Visitors come from uniqCombined states of PageStatePrecision.
type pageRollup struct {
	site model.SiteID
	// days are the whole UTC days [days[0], days[1]) read from the rollups.
	days [2]time.Time
	// edges are the instants [from, to) read from events.
	edges [][2]time.Time
}

// PageStatePrecision is the precision of the pages' visitor states
// (page_visitor_days, clickhouse/0011_small_granules.sql), which every
// query and rebuild of them names. Exact on small pages; on large ones 2^14
// registers: on 100M demo events over 30 days the 100 most viewed pages
// read within 2.4 % of their exact counts (18 beyond 1 %; the 12 largest
// within 1.3 %). A higher precision costs the merges: precision 15 made the
// 30-day pages report at 10M take 214 ms instead of 88, and precision 17,
// which keeps every page within 1 %, took 100–440 ms for the 100 pages'
// visitors alone, even by blocks of days, against 58–115
// (bench/results/2026-11-25-page-visitor-precision.md).
const PageStatePrecision = "14"

// newPageRollup plans the range [from, to); ok is false when it holds no
// whole UTC day, and events alone are cheaper to read.
func newPageRollup(site model.SiteID, from, to time.Time) (pageRollup, bool) {
	days, edges, ok := wholeUnits(from, to, 24*time.Hour)
	return pageRollup{site: site, days: days, edges: edges}, ok
}

// totals lists pages with pageviews in the range, by pageviews (then path):
// the path, then pageviews, the seconds spent on the page and the number of
// those stays (metrics in that order). limit 0 lists all.
func (r pageRollup) totals(limit, offset int) (string, []any, error) {
	if limit < 0 || offset < 0 || (offset > 0 && limit == 0) {
		return "", nil, errors.New("stats: bad limit or offset")
	}
	parts := []string{"SELECT pathname, pageviews, time_sum, time_count FROM page_days WHERE " + rollupDays}
	args := r.dayArgs()
	for _, e := range r.edges {
		parts = append(parts,
			"SELECT pathname, count() AS pageviews, toUInt64(0) AS time_sum, toUInt64(0) AS time_count FROM events WHERE "+
				rollupEdge+" GROUP BY pathname",
			"SELECT prev_pathname AS pathname, toUInt64(0) AS pageviews, toUInt64(sum(time_on_prev)) AS time_sum, count() AS time_count"+
				" FROM events WHERE "+rollupEdge+" AND prev_pathname != '' GROUP BY prev_pathname")
		args = append(args, r.edgeArgs(e)...)
		args = append(args, r.edgeArgs(e)...)
	}
	sql := "SELECT toString(pathname) AS d0, toFloat64(sum(pageviews)) AS m0, toFloat64(sum(time_sum)) AS m1," +
		" toFloat64(sum(time_count)) AS m2 FROM (" + strings.Join(parts, " UNION ALL ") + ")" +
		" GROUP BY d0 HAVING m0 > 0 ORDER BY m0 DESC, d0 ASC"
	if limit > 0 {
		sql += " LIMIT ? OFFSET ?"
		args = append(args, limit, offset)
	}
	return sql, args, nil
}

// visitors counts the distinct visitors of each of pages (which must not be
// empty) in the range: the path, then visitors.
func (r pageRollup) visitors(pages []string) (string, []any, error) {
	if len(pages) == 0 {
		return "", nil, errors.New("stats: visitors of no page")
	}
	set := append(Set{}, pages...)
	parts := []string{"SELECT pathname, uniqCombinedMergeState(" + PageStatePrecision + ")(visitors) AS v FROM page_visitor_days WHERE " +
		rollupDays + " AND pathname IN ? GROUP BY pathname"}
	args := append(r.dayArgs(), set)
	for _, e := range r.edges {
		parts = append(parts, "SELECT pathname, uniqCombinedState("+PageStatePrecision+")(visitor_id) AS v FROM events WHERE "+
			rollupEdge+" AND pathname IN ? GROUP BY pathname")
		args = append(append(args, r.edgeArgs(e)...), set)
	}
	return "SELECT toString(pathname) AS d0, toFloat64(uniqCombinedMerge(" + PageStatePrecision + ")(v)) AS m0 FROM (" +
		strings.Join(parts, " UNION ALL ") + ") GROUP BY d0", args, nil
}

// condition is a ClickHouse condition and the arguments of its ?
// placeholders, in order.
type condition struct {
	sql  string
	args []any
}

// goalPageviews counts the pageviews of the pages meeting each of conds
// (pageview goals' pathCondition) in the range: one row of a metric per
// condition. page_days holds a few hundred rows a site and day, summed by
// page first, so each condition is tested once per page.
func (r pageRollup) goalPageviews(conds []condition) (string, []any) {
	cols, colArgs := goalColumns(conds, "sumIf(pv, %s)")
	parts := []string{"SELECT pathname, pageviews AS pv FROM page_days WHERE " + rollupDays}
	args := r.dayArgs()
	for _, e := range r.edges {
		parts = append(parts, "SELECT pathname, count() AS pv FROM events WHERE "+rollupEdge+" GROUP BY pathname")
		args = append(args, r.edgeArgs(e)...)
	}
	return "SELECT " + cols + " FROM (SELECT pathname, sum(pv) AS pv FROM (" + strings.Join(parts, " UNION ALL ") +
		") GROUP BY pathname)", append(colArgs, args...)
}

// goalVisitors counts the distinct visitors of the pages meeting each of
// conds in the range, merging the pages' visitor states (the pages
// report's visitors, so a goal of one page shows that page's visitors).
// The days read only the states of matching pages (PREWHERE on the path):
// deserialising a state is what costs.
func (r pageRollup) goalVisitors(conds []condition) (string, []any) {
	cols, colArgs := goalColumns(conds, "uniqCombinedMergeIf("+PageStatePrecision+")(v, %s)")
	matches := make([]string, len(conds))
	for i, c := range conds {
		matches[i] = c.sql
	}
	parts := []string{"SELECT pathname, visitors AS v FROM page_visitor_days PREWHERE " + rollupDays +
		" AND (" + strings.Join(matches, " OR ") + ")"}
	args := r.dayArgs()
	for _, c := range conds {
		args = append(args, c.args...)
	}
	for _, e := range r.edges {
		parts = append(parts, "SELECT pathname, uniqCombinedState("+PageStatePrecision+")(visitor_id) AS v FROM events WHERE "+rollupEdge+
			" GROUP BY pathname")
		args = append(args, r.edgeArgs(e)...)
	}
	return "SELECT " + cols + " FROM (" + strings.Join(parts, " UNION ALL ") + ")", append(colArgs, args...)
}

// goalColumns is one metric column m0, m1, … per condition: agg, whose %s
// takes the condition, as Float64.
func goalColumns(conds []condition, agg string) (string, []any) {
	cols := make([]string, len(conds))
	var args []any
	for i, c := range conds {
		cols[i] = fmt.Sprintf("toFloat64(%s) AS m%d", fmt.Sprintf(agg, c.sql), i)
		args = append(args, c.args...)
	}
	return strings.Join(cols, ", "), args
}

// the days are bound as dates: a Date column compared with a DateTime
// would be converted row by row
const rollupDays = "site_key = cityHash64(?) AND day >= toDate(?) AND day < toDate(?)"

var rollupEdge = "site_key = cityHash64(?) AND " + timeRange(Events) + " AND is_pageview = 1"

func (r pageRollup) dayArgs() []any {
	return []any{string(r.site), r.days[0].Format(time.DateOnly), r.days[1].Format(time.DateOnly)}
}

func (r pageRollup) edgeArgs(e [2]time.Time) []any {
	return append([]any{string(r.site)}, timeArgs(Events, e[0], e[1])...)
}

// Package stats computes tally's statistics. Its SQL comes from a small pure
// builder: metrics and dimensions are values that own their ClickHouse
// expressions (vocabulary.go), a Query is a validated list of them, and Build
// appends conditions and their arguments together — no value is ever
// formatted into SQL.
package stats

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/tally-analytics/tally/internal/model"
)

// Filter restricts a query to rows whose dimension equals a value, is one
// of a set of values, contains one of a set of texts or matches one of a
// set of regular expressions — or, with Not, to the other rows.
type Filter struct {
	Dim   Dimension
	Value any
	// Not keeps the rows the filter would not: d != v, or d contains (or
	// matches) none of the texts.
	Not bool
	Set Set // for In
	// Contains keeps rows whose dimension contains one of these texts
	// (case-sensitive substrings).
	Contains []string
	// Matches keeps rows whose dimension matches one of these regular
	// expressions (RE2 syntax, anywhere in the value: CheckPattern).
	Matches []string
	// OrEmpty keeps, beside Contains or Matches, the rows whose dimension
	// is empty: a v2 dimension labels an empty value (Unknown, ZZ, (none)),
	// and its label contains (matches) one of them.
	OrEmpty bool
	// Visits keeps the rows of the visits with an event the rest of f
	// keeps (of an events' dimension), or with Without of the visits with
	// none: a visit's other events too, and for sessions the visits.
	Visits, Without bool
	// Any, when not empty, makes f a group: it keeps the rows any of these
	// filters keep (each on a dimension, none a group), and has no
	// dimension of its own.
	Any []Filter
}

// AnyOf keeps the rows any of filters keep.
func AnyOf(filters ...Filter) Filter { return Filter{Any: filters} }

// leaves are f's filters on one dimension: f, or its group's.
func (f Filter) leaves() []Filter {
	if len(f.Any) > 0 {
		return f.Any
	}
	return []Filter{f}
}

// Set is a list of values a dimension may take ("x IN ?"). The store sends
// it beside the query as a table (ClickHouse's external data), never as a
// literal list in the query's text, so no list a client can make long makes
// the query too long; x IN the table is a hash lookup per row.
type Set []string

// Eq keeps rows where d = v.
func Eq(d Dimension, v any) Filter { return Filter{Dim: d, Value: v} }

// NotEq keeps rows where d != v.
func NotEq(d Dimension, v any) Filter { return Filter{Dim: d, Value: v, Not: true} }

// In keeps rows where d is one of vs (which must not be empty).
func In(d Dimension, vs []string) Filter { return Filter{Dim: d, Set: append(Set{}, vs...)} }

// Contain keeps rows where d contains one of vs (which must not be empty).
func Contain(d Dimension, vs []string) Filter {
	return Filter{Dim: d, Contains: append([]string{}, vs...)}
}

// Match keeps rows where d matches one of the patterns (which must not be
// empty, each passing CheckPattern).
func Match(d Dimension, patterns []string) Filter {
	return Filter{Dim: d, Matches: append([]string{}, patterns...)}
}

// Negate is f keeping the rows f does not (NotEq for an Eq).
func (f Filter) Negate() Filter {
	f.Not = !f.Not
	return f
}

// OfVisits is f keeping the visits with an event f keeps (Plausible's
// has_done), or with none when without (has_not_done).
func (f Filter) OfVisits(without bool) Filter {
	f.Visits, f.Without = true, without
	return f
}

// Plain reports whether f's test is an equality with one value (Eq).
func (f Filter) Plain() bool { return !f.Not && f.Set == nil && f.Contains == nil && f.Matches == nil }

// Order sorts by a metric (descending) or a dimension (ascending).
type Order struct {
	Metric    *Metric
	Dimension *Dimension
}

// Query is one aggregate query over one table of one site.
type Query struct {
	Table      Table
	Site       model.SiteID
	From, To   time.Time // [From, To), UTC
	Filters    []Filter
	Dimensions []Dimension
	Metrics    []Metric
	Order      []Order
	Limit      int // 0 = no limit
	Offset     int
	// WithTotals adds a totals row over all groups (before LIMIT), so a
	// breakdown and its total come from one scan.
	WithTotals bool
	// SamplePercent, when 1..99, reads that share of visitors (SAMPLE BY
	// visitor_id); count metrics must then be scaled by 100/SamplePercent.
	SamplePercent int
	// Rollups lets Build read a rollup that holds the query for the whole
	// units of the range, and the table itself only for the edges
	// (rollups.go); such a query reads no sample.
	Rollups bool
	// Built tells which visitor blocks of more than a day are built
	// (blocks.go); nil: none is, and visitors are merged from single days.
	Built Built
}

// Build returns the SQL and its arguments. Result columns are the dimensions
// as strings, then the metrics as Float64, in order.
func (q Query) Build() (string, []any, error) {
	if err := q.check(); err != nil {
		return "", nil, err
	}
	if p, ok := q.rollupPlan(); ok {
		sql, args := p.build(q)
		return sql, args, nil
	}
	var sel, group []string
	var args, selArgs []any
	for i, d := range q.Dimensions {
		sel = append(sel, fmt.Sprintf("toString(%s) AS d%d", d.exprs[q.Table], i))
		selArgs = append(selArgs, d.args...)
		group = append(group, fmt.Sprintf("d%d", i))
	}
	for i, m := range q.Metrics {
		sel = append(sel, fmt.Sprintf("toFloat64(%s) AS m%d", m.exprs[q.Table], i))
		selArgs = append(selArgs, m.args...)
	}
	var b strings.Builder
	b.WriteString("SELECT " + strings.Join(sel, ", ") + " FROM " + string(q.Table))
	args = append(args, selArgs...)
	if q.sampled() {
		b.WriteString(sampleClause(q.SamplePercent))
	}
	// site_key is cityHash64(site_id), stored: a number compares far faster
	b.WriteString(" WHERE site_key = cityHash64(?) AND " + timeRange(q.Table))
	args = append(append(args, string(q.Site)), timeArgs(q.Table, q.From, q.To)...)
	args = filterConditions(&b, args, q.Table, q.Site, q.From, q.To, q.Filters)
	args = q.tail(&b, group, "sign", args)
	return b.String(), args, nil
}

// filterConditions appends to b the conditions (each after AND) of filters
// on the rows of table t of site in [from, to), and returns args with
// theirs.
func filterConditions(b *strings.Builder, args []any, t Table, site model.SiteID, from, to time.Time, filters []Filter) []any {
	for _, f := range filters {
		cond, condArgs := filterCondition(t, site, from, to, f)
		b.WriteString(" AND " + cond)
		args = append(args, condArgs...)
	}
	return args
}

// filterCondition is the condition of f on the rows of table t of site in
// [from, to), and its arguments: a group's, its filters' joined by OR.
func filterCondition(t Table, site model.SiteID, from, to time.Time, f Filter) (string, []any) {
	if len(f.Any) > 0 {
		var parts []string
		var args []any
		for _, g := range f.Any {
			cond, condArgs := filterCondition(t, site, from, to, g)
			parts = append(parts, cond)
			args = append(args, condArgs...)
		}
		return "(" + strings.Join(parts, " OR ") + ")", args
	}
	expr, ok := f.Dim.exprs[t]
	switch {
	case f.Visits:
		// a visit's events are at most sessionSpan apart: of events,
		// those of visits that started before from are read back
		lo := from
		if t != Sessions {
			lo = from.Add(-sessionSpan)
		}
		test := f
		test.Visits, test.Without = false, false
		cond, args := sessionsWith(site, lo, to.Add(sessionSpan), test)
		if f.Without {
			cond = "NOT (" + cond + ")"
		}
		if t != Sessions {
			// an event of no visit (a payment's, session 0) is of neither
			// kind: session 0 gathers them all, whatever each did
			cond = "(session_id != 0 AND " + cond + ")"
		}
		return cond, args
	case !ok || f.Dim.visit:
		// an events-only dimension (the page) filtering sessions, or a
		// prop filtering either: the sessions with such an event; a
		// session's events come at most sessionSpan after it started
		return sessionsWith(site, from, to.Add(sessionSpan), f)
	}
	return f.condition(expr)
}

// scrollDepths is the SQL of the scroll depth of each of paths in q's site
// and range: the mean, over the page's visitors who reported one, of the
// deepest scroll each reported (the tracking script's engagements), as d0
// the page, m0 the mean percent and m1 those visitors. q's filters (of
// events) keep the visitors who viewed the page under them. On a sample
// (q.SamplePercent) it reads that share of visitors: a mean needs no
// scaling back.
func (q Query) scrollDepths(paths []string) (string, []any) {
	var b strings.Builder
	b.WriteString("SELECT pathname AS d0, toFloat64(avg(depth)) AS m0, toFloat64(count()) AS m1 FROM (" +
		"SELECT pathname, visitor_id, max(scroll_depth) AS depth FROM " + string(Engagements))
	b.WriteString(sampleClause(q.SamplePercent))
	b.WriteString(" WHERE site_key = cityHash64(?) AND " + timeRange(Engagements) + " AND pathname IN ?")
	args := append(append([]any{string(q.Site)}, timeArgs(Engagements, q.From, q.To)...), Set(paths))
	if len(q.Filters) > 0 {
		b.WriteString(" AND (pathname, visitor_id) IN (SELECT pathname, visitor_id FROM " + string(Events) +
			" WHERE site_key = cityHash64(?) AND " + timeRange(Events) + " AND is_pageview = 1")
		args = append(append(args, string(q.Site)), timeArgs(Events, q.From, q.To)...)
		args = filterConditions(&b, args, Events, q.Site, q.From, q.To, q.Filters)
		b.WriteString(")")
	}
	b.WriteString(" GROUP BY pathname, visitor_id) GROUP BY d0")
	return b.String(), args
}

// sessionsWith is the condition that a row is of a session with an event
// of [from, to) that f keeps (f filters an event's dimension; negated, an
// event off its values, which is has_done of is_not: the sessions without
// such an event are Without's), and its arguments.
func sessionsWith(site model.SiteID, from, to time.Time, f Filter) (string, []any) {
	cond, condArgs := f.condition(f.Dim.exprs[Events])
	args := append(append([]any{string(site)}, timeArgs(Events, from, to)...), condArgs...)
	return "session_id IN (SELECT session_id FROM events WHERE site_key = cityHash64(?) AND " + timeRange(Events) +
		" AND " + cond + ")", args
}

// tail ends a query of q grouped by group: totals, the groups of sessions
// that hold a live one (sign is the column summing to the live sessions),
// order and page; it returns args with those of the page.
func (q Query) tail(b *strings.Builder, group []string, sign string, args []any) []any {
	if len(group) > 0 {
		b.WriteString(" GROUP BY " + strings.Join(group, ", "))
		if q.WithTotals {
			b.WriteString(" WITH TOTALS")
		}
		if q.Table == Sessions {
			// groups whose rows all cancel out hold no live session
			b.WriteString(" HAVING sum(" + sign + ") > 0")
		}
	}
	if order := q.orderBy(); order != "" {
		b.WriteString(" ORDER BY " + order)
	}
	if q.Limit > 0 {
		b.WriteString(" LIMIT ? OFFSET ?")
		args = append(args, q.Limit, q.Offset)
	}
	return args
}

// condition is f on expr, the expression of its dimension on the table read.
func (f Filter) condition(expr string) (string, []any) {
	var cond string
	args := append([]any(nil), f.Dim.args...)
	switch {
	case f.Contains != nil || f.Matches != nil:
		// position() and match() are in ClickHouse 18.16 and current
		// releases alike; the dimension's own arguments repeat with each
		// of its uses
		test, texts := "position(%s, ?) > 0", f.Contains
		if f.Matches != nil {
			test, texts = "match(%s, ?)", f.Matches
		}
		var parts []string
		args = nil
		if f.OrEmpty {
			parts = append(parts, expr+" = ?")
			args = append(append(args, f.Dim.args...), "")
		}
		for _, v := range texts {
			if f.Matches != nil {
				v = matchPattern(v)
			}
			parts = append(parts, fmt.Sprintf(test, expr))
			args = append(append(args, f.Dim.args...), v)
		}
		cond = "(" + strings.Join(parts, " OR ") + ")"
	case f.Set != nil:
		cond, args = expr+" IN ?", append(args, f.Set)
	case f.Not:
		return expr + " != ?", append(args, f.Value)
	default:
		return expr + " = ?", append(args, f.Value)
	}
	if f.Not {
		cond = "NOT (" + cond + ")"
	}
	return cond, args
}

// fits reports why f, a filter on one dimension, cannot filter the rows
// of table t, or nil.
func (f Filter) fits(t Table) error {
	_, onEvents := f.Dim.exprs[Events]
	switch _, ok := f.Dim.exprs[t]; {
	case f.Set != nil && len(f.Set) == 0 || f.Contains != nil && len(f.Contains) == 0 || f.Matches != nil && len(f.Matches) == 0:
		return errors.New("stats: an In, Contain or Match filter needs at least one value")
	case f.Dim.visit && !f.Plain():
		return fmt.Errorf("stats: %s selects visits by one value only", f.Dim.Name)
	case f.Visits && !onEvents:
		return fmt.Errorf("stats: %s is no event's dimension to select visits by", f.Dim.Name)
	case ok || f.Visits:
		return nil
	case !onEvents || t != Sessions || f.Not:
		return fmt.Errorf("stats: %s cannot filter %s", f.Dim.Name, t)
	}
	return nil
}

// sessionSpan is the longest a session lasts (the session rule's maximum).
const sessionSpan = 24 * time.Hour

// sampled reports whether the query reads a sample.
// sampleClause is the SAMPLE clause of a read of percent of the visitors
// (1 to 99), or "" for all of them. SAMPLE takes only a literal: the one
// number written into the SQL, an int the service computed itself.
func sampleClause(percent int) string {
	if percent <= 0 || percent >= 100 {
		return ""
	}
	return " SAMPLE " + strconv.Itoa(percent) + "/100"
}

func (q Query) sampled() bool {
	if q.SamplePercent <= 0 || q.SamplePercent >= 100 || (q.Table != Events && q.Table != Sessions) {
		return false
	}
	_, rolled := q.rollupPlan()
	return !rolled
}

// Scale is the factor that turns a count on the sample into an estimate.
func (q Query) Scale() float64 {
	if !q.sampled() {
		return 1
	}
	return 100 / float64(q.SamplePercent)
}

func (q Query) check() error {
	if _, ok := timeColumn[q.Table]; !ok {
		return fmt.Errorf("stats: unknown table %q", q.Table)
	}
	if q.Site == "" || !q.From.Before(q.To) {
		return errors.New("stats: a query needs a site and a non-empty time range")
	}
	if len(q.Metrics) == 0 {
		return errors.New("stats: a query needs at least one metric")
	}
	for _, m := range q.Metrics {
		if _, ok := m.exprs[q.Table]; !ok {
			return fmt.Errorf("stats: metric %s is not defined on %s", m.Name, q.Table)
		}
	}
	mutable := false
	for _, d := range q.Dimensions {
		if _, ok := d.exprs[q.Table]; !ok {
			return fmt.Errorf("stats: dimension %s is not defined on %s", d.Name, q.Table)
		}
		mutable = mutable || d.mutable
	}
	for _, g := range q.Filters {
		for _, f := range g.leaves() {
			if len(f.Any) > 0 {
				return errors.New("stats: a group of filters holds a group")
			}
			if err := f.fits(q.Table); err != nil {
				return err
			}
		}
	}
	for _, m := range q.Metrics {
		if mutable && q.Table == Sessions && m.Name == Visitors.Name {
			return errors.New("stats: visitors cannot be counted per exit page from session rows")
		}
	}
	for _, o := range q.Order {
		if (o.Metric == nil) == (o.Dimension == nil) {
			return errors.New("stats: an order names exactly one metric or dimension")
		}
		if o.Metric != nil && q.metricIndex(*o.Metric) < 0 || o.Dimension != nil && q.dimensionIndex(*o.Dimension) < 0 {
			return errors.New("stats: can only order by a selected metric or dimension")
		}
	}
	if q.WithTotals && len(q.Dimensions) == 0 {
		return errors.New("stats: totals need dimensions to total over")
	}
	if q.Limit < 0 || q.Offset < 0 || (q.Offset > 0 && q.Limit == 0) {
		return errors.New("stats: bad limit or offset")
	}
	return nil
}

func (q Query) orderBy() string {
	var parts []string
	for _, o := range q.Order {
		if o.Metric != nil {
			parts = append(parts, fmt.Sprintf("m%d DESC", q.metricIndex(*o.Metric)))
		} else {
			parts = append(parts, fmt.Sprintf("d%d ASC", q.dimensionIndex(*o.Dimension)))
		}
	}
	return strings.Join(parts, ", ")
}

func (q Query) metricIndex(m Metric) int {
	for i, x := range q.Metrics {
		if x.Name == m.Name {
			return i
		}
	}
	return -1
}

func (q Query) dimensionIndex(d Dimension) int {
	for i, x := range q.Dimensions {
		if x.Name == d.Name {
			return i
		}
	}
	return -1
}

// ByMetric orders by m descending.
func ByMetric(m Metric) Order { return Order{Metric: &m} }

// ByDimension orders by d ascending.
func ByDimension(d Dimension) Order { return Order{Dimension: &d} }

// Row is one result row: dimension values, then metric values, in query order.
type Row struct {
	Dims    []string
	Metrics []float64
}

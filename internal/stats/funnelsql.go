package stats

import (
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tally-analytics/tally/internal/model"
)

// FunnelQuery is the one ClickHouse query of a funnel report. It reads the
// events of the range (and of the window after it) that complete any step,
// gathers each visitor's into one array beside their net revenue of the
// range, and walks the steps over the sorted array with array functions only
// (ClickHouse 18.16 has no window functions and no arrayFold, and
// windowFunnel gives the level but not the times of the steps).
//
// Per visitor, with the events sorted by time (and, within a second, by the
// steps they complete, lowest first), level k keeps for each position the
// latest start (time of step 1) of a chain that reached step k by then:
// step k at position j extends the latest level-(k-1) start of the
// positions before j when it lies within the window of that start. The latest
// start is the best one to extend, so the deepest level any chain reaches is
// found in one pass per step. The visitor's times are those of the chain
// from the latest start that reached the deepest level, taking each next
// step at its first occurrence after the previous one.
//
// Result columns, all Float64, per step k: visitors, median seconds from
// step k-1 (meaningless for step 1 and for steps nobody reached), net revenue.
type FunnelQuery struct {
	Site     model.SiteID
	From, To time.Time // step 1 in [From, To), UTC
	Steps    []model.FunnelStep
	Window   time.Duration
	Filters  []Filter
	// SamplePercent, when 1..99, reads that share of visitors; visitors and
	// revenue must then be scaled by 100/SamplePercent.
	SamplePercent int
	// BaseCurrency is the site's: payments converted into another (before a
	// change of the base currency) are left out, as the revenue report does.
	BaseCurrency string
	// ClientRevenue counts the revenue the tracking script reported, as the
	// revenue report does when the site includes it.
	ClientRevenue bool
}

// maxFunnelSteps is the most steps a query handles: a step is a bit of a
// byte in the sort key of an event.
const maxFunnelSteps = 8

// FunnelColumns is the number of result columns of a funnel of n steps.
func FunnelColumns(n int) int { return 3 * n }

// sqlb appends SQL and its arguments together.
type sqlb struct {
	b    strings.Builder
	args []any
}

func (s *sqlb) add(sql string, args ...any) *sqlb {
	s.b.WriteString(sql)
	s.args = append(s.args, args...)
	return s
}

// wrap puts inner into a query: prefix, inner, suffix, their arguments in
// the same order.
func wrap(prefix string, prefixArgs []any, inner *sqlb, suffix string) *sqlb {
	var out sqlb
	out.add(prefix, prefixArgs...)
	out.add(inner.b.String(), inner.args...)
	out.add(suffix)
	return &out
}

// Build returns the SQL and its arguments. A step's path (itself, or its
// regular expression when it has a wildcard) and event name are bound
// arguments, which the driver writes into the query as quoted literals, and
// its props are compared by their MD5 digests: a funnel's values make its
// query at most about 26 KiB longer (8 steps of a 1,024-character path, at
// most 3 bytes a character once escaped; names of 120 characters, twice;
// 10 digests a step), far below ClickHouse's max_query_size (256 KiB),
// whatever the client put in them.
// No scalar subquery reads them from external data: on a ClickHouse 18.16
// cluster a Distributed table's shards receive such a subquery's value as a
// literal under another column name, and the query fails (code 10, "Not
// found column … in block").
//
// Most visitors of a big site never do step 2 (on 10M demo events, 82 % of
// those who did step 1): they stop at step 1, so they are counted (and
// their revenue added) in one row before the walk, and only the visitors
// who did step 2 go through the arrays, a row each. The walk's array
// functions cost per row far more than per element (on those 10M events,
// 1.2 s for 908k visitors against 0.3 s for the 164k who did step 2).
//
// Each level is a subquery of its own: ClickHouse expands aliases before it
// runs a query, and a level refers to the one before it three times, so
// eight levels of aliases in one SELECT would make an expression tree of
// thousands of copies (past max_expanded_ast_elements); a subquery's
// columns are not expanded.
func (q FunnelQuery) Build() (string, []any, error) {
	n := len(q.Steps)
	if n < 2 || n > maxFunnelSteps {
		return "", nil, fmt.Errorf("stats: a funnel query needs 2 to %d steps", maxFunnelSteps)
	}
	if q.Site == "" || !q.From.Before(q.To) || q.Window <= 0 {
		return "", nil, errors.New("stats: a funnel query needs a site, a non-empty time range and a window")
	}
	win := int64(q.Window / time.Second)
	var rows sqlb
	if err := q.rows(&rows); err != nil {
		return "", nil, err
	}
	// per visitor who did step 1: the steps their events complete (bits),
	// the events, the net revenue
	cur := wrap("SELECT visitor_id, groupBitOr(e % 256) AS bits, groupArray(e) AS ev, sum(net) AS net FROM (", nil, &rows,
		") GROUP BY visitor_id HAVING bitAnd(bits, 1) != 0")
	// all of them counted at once (v1, r1); the events and revenue of those
	// who did step 2, a row each (one row of empty arrays when nobody did)
	cur = wrap("SELECT v1, r1, hev AS ev, hnet AS net FROM (SELECT count() AS v1, sum(net) AS r1, "+
		"groupArrayIf(ev, bitAnd(bits, 2) != 0) AS hev, groupArrayIf(net, bitAnd(bits, 2) != 0) AS hnet FROM (", nil, cur,
		")) LEFT ARRAY JOIN hev, hnet")
	// their events as times (t) and step bits (m), sorted
	cur = wrap("SELECT v1, r1, net, arraySort(ev) AS evs, arrayMap(x -> intDiv(x, 256), evs) AS t, arrayMap(x -> x % 256, evs) AS m FROM (",
		nil, cur, ")")
	// level 1: the latest step-1 time so far (a1), shifted to "before this
	// position" (p1)
	cur = wrap("SELECT v1, r1, net, t, m, arrayMap(x -> bitAnd(x, 1) != 0, m) AS ok1, arrayFilter((x, o) -> o, t, ok1) AS s1, "+
		"arrayMap(c -> s1[c], arrayCumSum(ok1)) AS a1, arrayPopBack(arrayPushFront(a1, 0)) AS p1, a1[-1] AS last1 FROM (", nil, cur, ")")
	// level k extends level k-1's latest start before each position
	keep := "v1, r1, net, t, m, last1"
	for k := 2; k <= n; k++ {
		cur = wrap(fmt.Sprintf("SELECT %[1]s, arrayMap((x, st, y) -> bitAnd(x, %[2]d) != 0 AND st > 0 AND y <= st + ?, m, p%[3]d, t) AS ok%[4]d, "+
			"arrayFilter((st, o) -> o, p%[3]d, ok%[4]d) AS s%[4]d, arrayMap(c -> s%[4]d[c], arrayCumSum(ok%[4]d)) AS a%[4]d, "+
			"arrayPopBack(arrayPushFront(a%[4]d, 0)) AS p%[4]d, a%[4]d[-1] AS last%[4]d FROM (", keep, 1<<(k-1), k-1, k), []any{win}, cur, ")")
		keep += fmt.Sprintf(", last%d", k)
	}
	// the deepest level, the latest start that reached it, and the chain from
	// that start: each step at its first occurrence after the previous one
	var level, start []string
	for k := 1; k <= n; k++ {
		level = append(level, fmt.Sprintf("(last%d > 0)", k))
	}
	for k := n; k >= 2; k-- {
		start = append(start, fmt.Sprintf("level = %d, last%d", k, k))
	}
	chain := "SELECT v1, r1, net, " + strings.Join(level, " + ") + " AS level, multiIf(" + strings.Join(start, ", ") + ", last1) AS start, " +
		"arrayFirstIndex((x, y) -> bitAnd(x, 1) != 0 AND y = start, m, t) AS i1"
	var chainArgs []any
	for k := 2; k <= n; k++ {
		chain += fmt.Sprintf(", arrayFirstIndex((x, y, j) -> j > i%[1]d AND bitAnd(x, %[2]d) != 0 AND y <= start + ?, m, t, arrayEnumerate(t)) AS i%[3]d"+
			", toInt64(t[i%[3]d]) - toInt64(t[i%[1]d]) AS d%[3]d", k-1, 1<<(k-1), k)
		chainArgs = append(chainArgs, win)
	}
	cur = wrap(chain+" FROM (", chainArgs, cur, ")")
	// per step: visitors, median seconds from the previous step, revenue
	cols := []string{"toFloat64(any(v1)) AS v1", "toFloat64(0) AS med1", "toFloat64(any(r1)) AS rev1"}
	for k := 2; k <= n; k++ {
		reached := fmt.Sprintf("level >= %d", k)
		// the median of an even count is the mean of the middle two: the
		// upper middle of d and of -d (quantileExact takes the upper one)
		med := fmt.Sprintf("(quantileExactIf(0.5)(d%[1]d, %[2]s) - quantileExactIf(0.5)(-d%[1]d, %[2]s)) / 2", k, reached)
		cols = append(cols, fmt.Sprintf("toFloat64(countIf(%s)) AS v%d", reached, k),
			fmt.Sprintf("toFloat64(%s) AS med%d", med, k), fmt.Sprintf("toFloat64(sumIf(net, %s)) AS rev%d", reached, k))
	}
	out := wrap("SELECT "+strings.Join(cols, ", ")+" FROM (", nil, cur, ")")
	return out.b.String(), out.args, nil
}

// rows adds the subquery of the rows a funnel reads: the events that
// complete a step, each with its time and the bits of the steps it completes
// in one sort key (e), and each visitor's net revenue of the range (net).
// Pageviews and custom events are read apart, so that each reads only the
// columns its steps test.
func (q FunnelQuery) rows(s *sqlb) error {
	for _, pageviews := range []bool{true, false} {
		var steps []int
		for k, step := range q.Steps {
			if (step.Type == model.GoalPageview) == pageviews {
				steps = append(steps, k)
			}
		}
		if len(steps) == 0 {
			continue
		}
		if err := q.events(s, pageviews, steps); err != nil {
			return err
		}
		s.add(" UNION ALL ")
	}
	q.payments(s)
	return nil
}

// events adds the events of one kind (pageviews or custom events) that
// complete one of steps.
func (q FunnelQuery) events(s *sqlb, pageviews bool, steps []int) error {
	s.add("SELECT visitor_id, toUInt64(ts) * 256")
	for _, k := range steps {
		s.add(" + (")
		stepCondition(s, q.Steps[k])
		if k == 0 {
			s.add(" AND ts < ?", q.To.UTC()) // step 1 lies in the range; later steps may follow it past the end
		}
		s.add(fmt.Sprintf(") * %d", 1<<k))
	}
	s.add(" AS e, toInt64(0) AS net FROM events")
	if q.SamplePercent > 0 && q.SamplePercent < 100 {
		// SAMPLE takes only a literal: an int the service computed itself
		s.add(" SAMPLE " + strconv.Itoa(q.SamplePercent) + "/100")
	}
	// the days too: ClickHouse 18.16 narrows the key's toDate(ts) down by
	// days, not by times (a 7-day range read all 30 days)
	end := q.To.Add(q.Window).UTC()
	s.add(" WHERE site_key = cityHash64(?) AND toDate(ts) >= toDate(?) AND toDate(ts) <= toDate(?) AND ts >= ? AND ts < ?",
		string(q.Site), q.From.UTC(), end, q.From.UTC(), end)
	// by name, which the table's key holds: the custom events' steps read
	// only their names' rows (on 10M demo events over 30 days, half the
	// rows the query read were pageviews this branch then dropped)
	if pageviews {
		s.add(" AND name = ?", model.PageviewName)
	} else {
		// at most 8 names of 120 characters, each bound on its own; none is
		// the pageviews' (goals.ValidateEventName refuses it for a step)
		s.add(" AND name IN (")
		for i, k := range steps {
			if i > 0 {
				s.add(", ")
			}
			s.add("?", q.Steps[k].EventName)
		}
		s.add(")")
	}
	for _, f := range q.Filters {
		expr, ok := f.Dim.exprs[Events]
		if !ok {
			return fmt.Errorf("stats: %s cannot filter a funnel", f.Dim.Name)
		}
		switch {
		case f.Set != nil:
			s.add(" AND "+expr+" IN ?", append(append([]any{}, f.Dim.args...), f.Set)...)
		case f.Not:
			s.add(" AND "+expr+" != ?", append(append([]any{}, f.Dim.args...), f.Value)...)
		default:
			s.add(" AND "+expr+" = ?", append(append([]any{}, f.Dim.args...), f.Value)...)
		}
	}
	s.add(" AND e % 256 != 0")
	return nil
}

// stepCondition adds the condition an event of the step's kind (pageview or
// custom event) meets when it completes step.
func stepCondition(s *sqlb, step model.FunnelStep) {
	if step.Type == model.GoalPageview {
		cond, arg := pathCondition(step.PagePath)
		s.add(cond, arg)
		return
	}
	s.add("name = ?", step.EventName)
	if len(step.Props) > 0 {
		// each prop as its key's length, a colon, the key and the value
		// (unambiguous whatever the key and value hold), compared by digest:
		// 32 characters a prop in the query, however long the value
		s.add(" AND hasAll(arrayMap((k, x) -> hex(MD5(concat(toString(length(k)), ':', k, x))), props_keys, props_values), ?)",
			propDigests(step.Props))
	}
}

// propDigests encodes props as stepCondition compares them: the upper-case
// hex MD5 (ClickHouse's hex(MD5(…))) of each prop's length-prefixed pair.
func propDigests(props map[string]string) []string {
	out := make([]string, 0, len(props))
	for k, v := range props {
		sum := md5.Sum([]byte(strconv.Itoa(len(k)) + ":" + k + v))
		out = append(out, strings.ToUpper(hex.EncodeToString(sum[:])))
	}
	sort.Strings(out)
	return out
}

// payments adds each visitor's net revenue of the range (in the base
// currency), following the revenue report's rule on client-reported revenue,
// as a row of no event: its e of 0 sorts first in the visitor's array and
// completes no step.
func (q FunnelQuery) payments(s *sqlb) {
	m := revenueMetrics(q.ClientRevenue) // revenue, then refunds
	s.add("SELECT visitor_id, toUInt64(0) AS e, toInt64("+m[0].exprs[Payments]+" - "+m[1].exprs[Payments]+") AS net FROM payments"+
		" WHERE site_key = cityHash64(?) AND ts >= ? AND ts < ? AND base_currency = ? AND visitor_id != 0 GROUP BY visitor_id",
		string(q.Site), q.From.UTC(), q.To.UTC(), q.BaseCurrency)
}

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

// FunnelQuery is the ClickHouse query of a funnel report: the events of the
// range (and of the window after it) that complete any step, each as its
// visitor, its time and the steps it completes in one sort key (e), and
// each visitor's net revenue of the range, sorted by visitor and key. The
// report walks them visitor by visitor (funnelWalk): the walk over each
// visitor's events, which ClickHouse 18.16 can only do with one array
// function after another (no window functions, no arrayFold), took 0.3 s of
// a 0.35 s query on 10M demo events over 30 days, and the rows, sorted and
// sent, take 0.1 s.
//
// Result columns: visitor_id UInt64, e UInt64, net Int64.
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

// eventsByPath is the events' copy ordered by name and page
// (clickhouse/0014_events_by_path.sql), which a funnel without filters
// reads: a step reads its page's or its event's rows only. Its columns are
// those a step tests.
const (
	eventsByPath        = "events_by_path"
	eventsByPathColumns = "site_key, ts, name, pathname, visitor_id, props_keys, props_values"
)

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

// Build returns the SQL and its arguments. A step's page (pathCondition:
// the path, or its regular expression when it has a wildcard, and its
// range of rows in events_by_path) and event name are bound arguments,
// which the driver writes into the query as quoted literals, and its props
// are compared by their MD5 digests: a funnel's values make its query at
// most about 90 KiB longer (8 steps of a 1,024-character pattern, at most
// 4.6 KiB a condition once escaped and 6.2 KiB a range; names of 120
// characters, twice; 10 digests a step), far below ClickHouse's
// max_query_size (256 KiB), whatever the client put in them.
// No scalar subquery reads them from external data: on a ClickHouse 18.16
// cluster a Distributed table's shards receive such a subquery's value as a
// literal under another column name, and the query fails (code 10, "Not
// found column … in block").
func (q FunnelQuery) Build() (string, []any, error) {
	n := len(q.Steps)
	if n < 2 || n > maxFunnelSteps {
		return "", nil, fmt.Errorf("stats: a funnel query needs 2 to %d steps", maxFunnelSteps)
	}
	if q.Site == "" || !q.From.Before(q.To) || q.Window <= 0 {
		return "", nil, errors.New("stats: a funnel query needs a site, a non-empty time range and a window")
	}
	var s sqlb
	s.add("SELECT visitor_id, e, net FROM (")
	if err := q.rows(&s); err != nil {
		return "", nil, err
	}
	s.add(") ORDER BY visitor_id, e")
	return s.b.String(), s.args, nil
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
	byPath := len(q.Filters) == 0 // the filters' columns are in events only
	table := "events"
	if byPath {
		table = eventsByPath
	}
	s.add(" AS e, toInt64(0) AS net FROM " + table)
	s.add(sampleClause(q.SamplePercent))
	end := q.To.Add(q.Window).UTC()
	s.add(" WHERE site_key = cityHash64(?)", string(q.Site))
	if !byPath {
		// the days too: ClickHouse 18.16 narrows the key's toDate(ts) down
		// by days, not by times (a 7-day range read all 30 days)
		s.add(" AND toDate(ts) >= toDate(?) AND toDate(ts) <= toDate(?)", q.From.UTC(), end)
	}
	// nobody's events (knownVisitor) enter no funnel
	s.add(" AND ts >= ? AND ts < ? AND "+knownVisitor, q.From.UTC(), end)
	// by name, which both tables' keys hold: the custom events' steps read
	// only their names' rows (on 10M demo events over 30 days, half the
	// rows the query read were pageviews this branch then dropped)
	if pageviews {
		s.add(" AND name = ?", model.PageviewName)
		if byPath {
			// and by page, which events_by_path's key holds next: the
			// pages each step's pattern may match (pathKeyCondition)
			s.add(" AND (")
			for i, k := range steps {
				if i > 0 {
					s.add(" OR ")
				}
				cond, args := pathKeyCondition(q.Steps[k].PagePath)
				s.add(cond, args...)
			}
			s.add(")")
		}
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
		cond, args := f.condition(expr)
		s.add(" AND "+cond, args...)
	}
	s.add(" AND e % 256 != 0")
	return nil
}

// stepCondition adds the condition an event of the step's kind (pageview or
// custom event) meets when it completes step.
func stepCondition(s *sqlb, step model.FunnelStep) {
	if step.Type == model.GoalPageview {
		cond, args := pathCondition(step.PagePath)
		s.add(cond, args...)
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
		" WHERE site_key = cityHash64(?) AND ts >= ? AND ts < ? AND base_currency = ? AND "+knownVisitor+" GROUP BY visitor_id",
		string(q.Site), q.From.UTC(), q.To.UTC(), q.BaseCurrency)
}

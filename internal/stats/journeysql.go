package stats

import (
	"errors"
	"fmt"
	"time"

	"github.com/tally-analytics/tally/internal/model"
)

// JourneyQuery is the ClickHouse query of the journeys report. A session's
// path is its pageviews in the order of their times (pageviews of one
// second in the order of their pages: the events hold no finer time), with
// each run of views of one page (reloads, a page that reports itself twice)
// made one step. Of that path the report counts one part per session:
//
//   - without Start or End: its first Steps pages, from the entry page;
//   - with Start: from the session's first view of Start, Steps pages;
//   - with End: the Steps pages up to its first view of End, End the last;
//   - with both: from its first view of Start to the first view of End after
//     it, when that path has at most Steps pages (Start = End is a return to
//     the page).
//
// A session shorter than Steps counts its shorter path. A part of one page
// is no journey (a bounce; a session that left at Start, or reached End as
// its entry page) and is left out, as are sessions without Start or End.
// Only pageviews are read, so bots (whose events never reach the events
// table) and custom events take no step.
//
// Rows are the Limit most common parts, by sessions, then visitors, then
// their pages in order (deterministic), with a WITH TOTALS row over every
// part. Result columns: path Array(String), sessions UInt64, visitors
// UInt64.
type JourneyQuery struct {
	Site       model.SiteID
	From, To   time.Time // [From, To), UTC
	Steps      int
	Start, End string
	Filters    []Filter
	// SamplePercent, when 1..99, reads that share of visitors; counts must
	// then be scaled by 100/SamplePercent.
	SamplePercent int
	Limit         int
}

// Build returns the SQL and its arguments (the pages and the numbers are
// bound, never formatted into the SQL).
func (q JourneyQuery) Build() (string, []any, error) {
	if q.Steps < MinJourneySteps || q.Steps > MaxJourneySteps || q.Limit <= 0 {
		return "", nil, fmt.Errorf("stats: a journeys query needs %d to %d steps and a limit", MinJourneySteps, MaxJourneySteps)
	}
	if q.Site == "" || !q.From.Before(q.To) {
		return "", nil, errors.New("stats: a journeys query needs a site and a non-empty time range")
	}
	var s sqlb
	s.add("SELECT path, count() AS sessions, uniqCombined(visitor_id) AS visitors FROM (SELECT visitor_id, ")
	q.part(&s)
	// c: the path with each run of one page made one step (a page is
	// never "", which the first page is compared with)
	s.add(" AS path FROM (SELECT visitor_id, arrayFilter((p, prev) -> p != prev, ps, arrayPushFront(arrayPopBack(ps), '')) AS c" +
		" FROM (SELECT visitor_id, arraySort((p, t) -> (t, p), groupArray(pathname), groupArray(ts)) AS ps FROM events")
	s.add(sampleClause(q.SamplePercent))
	s.add(" WHERE site_key = cityHash64(?) AND "+timeRange(Events), append([]any{string(q.Site)}, timeArgs(Events, q.From, q.To)...)...)
	// by name, which the sort key holds after the day (the funnel's
	// pageviews do the same)
	s.add(" AND name = ? AND "+knownVisitor, model.PageviewName)
	if err := q.filters(&s); err != nil {
		return "", nil, err
	}
	s.add(" GROUP BY visitor_id, session_id))) WHERE length(path) >= 2"+
		" GROUP BY path WITH TOTALS ORDER BY sessions DESC, visitors DESC, path ASC LIMIT ?", q.Limit)
	return s.b.String(), s.args, nil
}

// part adds the expression of the part of a session's path c that counts
// (see JourneyQuery); an empty array when none does.
func (q JourneyQuery) part(s *sqlb) {
	switch {
	case q.Start != "" && q.End != "":
		// i: the first view of Start; k: the first view of End after it,
		// counted from i (the part has k + 1 pages)
		s.add("indexOf(c, ?) AS i, indexOf(arraySlice(c, i + 1), ?) AS k, arraySlice(c, i, if(i > 0 AND k > 0 AND k + 1 <= ?, k + 1, 0))",
			q.Start, q.End, q.Steps)
	case q.Start != "":
		s.add("arraySlice(c, indexOf(c, ?), ?)", q.Start, q.Steps) // offset 0 (no view of Start) is []
	case q.End != "":
		s.add("toInt64(indexOf(c, ?)) AS j, arraySlice(c, greatest(j - ? + 1, 1), least(j, ?))", q.End, q.Steps, q.Steps)
	default:
		s.add("arraySlice(c, 1, ?)", q.Steps)
	}
}

// filters adds the report's filters: a session's dimensions on its
// pageviews' rows, which carry them; a page, a host or a prop as the
// sessions with an event that has it (sessionsWith), since a path holds
// other pages, on other hosts.
func (q JourneyQuery) filters(s *sqlb) error {
	for _, f := range q.Filters {
		expr, ok := f.Dim.exprs[Events]
		if !ok {
			return fmt.Errorf("stats: %s cannot filter journeys", f.Dim.Name)
		}
		if f.Dim.visit || f.Dim.ofEvent() {
			if f.Set != nil || f.Not {
				return fmt.Errorf("stats: journeys take %s as one value", f.Dim.Name)
			}
			cond, args := sessionsWith(q.Site, q.From, q.To, f)
			s.add(" AND "+cond, args...)
			continue
		}
		cond, args := f.condition(expr)
		s.add(" AND "+cond, args...)
	}
	return nil
}

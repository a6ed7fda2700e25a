package stats

import (
	"cmp"
	"context"
	"errors"
	"strings"
	"time"

	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/model"
)

// DefaultRetentionInterval is the unit of a retention report whose request
// names none: a week evens out the days of the week, which a cohort of a
// day does not.
const DefaultRetentionInterval = IntervalWeek

// MaxCohorts is the most cohorts a retention report holds: 90 days, 90
// weeks, or every month of the longest range. Its table has a cell for
// each cohort and each later interval, about 4,100 at 90.
const MaxCohorts = 90

// CohortsOf is how many cohorts a retention report by interval (day,
// week or month) has over the inclusive dates from..to: the intervals they
// touch.
func CohortsOf(interval string, from, to time.Time) int {
	return len(buckets(interval, from, to, time.Time{}, time.Time{}, time.UTC))
}

// RetentionIntervalFor is the interval of the retention table that the
// dashboard shows (and its download holds) for the inclusive dates
// from..to: days up to two weeks, weeks up to 26 of them, months beyond,
// so that the table stays a few columns wide.
func RetentionIntervalFor(from, to time.Time) string {
	switch {
	case CohortsOf(IntervalDay, from, to) <= 14:
		return IntervalDay
	case CohortsOf(IntervalWeek, from, to) <= 26:
		return IntervalWeek
	}
	return IntervalMonth
}

// parseRetentionInterval reads the unit of a retention report's cohorts
// over the inclusive dates from..to: a day, a week (from Monday) or a month,
// DefaultRetentionInterval when empty; at most MaxCohorts of them.
func parseRetentionInterval(s string, from, to time.Time) (string, error) {
	switch s {
	case "":
		s = DefaultRetentionInterval
	case IntervalDay, IntervalWeek, IntervalMonth:
	default:
		return "", errs.InvalidField("interval", "must be day, week or month")
	}
	if n := CohortsOf(s, from, to); n > MaxCohorts {
		return "", errs.E(errs.Invalid, "invalid_date_range",
			"a retention report by the %s holds at most %d cohorts and this range has %d: shorten it or choose a longer interval",
			s, MaxCohorts, n).WithField("date_to")
	}
	return s, nil
}

// Retention is the retention report: a cohort per interval of the range,
// of the visitors whose first visit in the range fell in it, and how many
// of them came back in each later interval of the range.
type Retention struct {
	Meta     Meta
	Interval string
	Cohorts  []Cohort
}

// Cohort is the visitors first seen in the interval that starts on Date (a
// day, a Monday or a first of the month in the range's zone; the range may
// cut the first and the last). Returns[k] is those of them seen in the
// interval k after it, Returns[0] being the cohort itself: one entry per
// interval from the cohort's to the range's last.
type Cohort struct {
	Date     time.Time
	Visitors int64
	Returns  []Return
}

// Return is how many visitors of a cohort were seen in an interval, and
// their share of the cohort (0–100, one decimal).
type Return struct {
	Visitors   int64
	Percentage float64
}

// Retention reports, for each interval of the range (r.Interval), the
// visitors whose first visit in the range fell in it and how many of them
// came back in each later interval (RetentionQuery says whom it counts).
// The filters select visits as for the other reports: a cohort is the
// visitors first seen in a matching visit, and a return is a later matching
// visit. It reads raw events, sampled past groupSampleRate's threshold.
func (s *Service) Retention(ctx context.Context, p auth.Principal, r Request) (Retention, error) {
	var res Retention
	r.Interval = cmp.Or(r.Interval, DefaultRetentionInterval)
	sc, err := s.access(ctx, p, r)
	if err != nil {
		return res, err
	}
	if sc.sample, err = s.groupSampleRate(ctx, sc); err != nil {
		return res, err
	}
	q := RetentionQuery{Site: sc.site.ID, From: sc.from, To: sc.to, Interval: r.Interval, Timezone: sc.tz,
		Filters: sc.req.Filters, SamplePercent: sc.sample}
	sql, args, err := q.Build()
	if err != nil {
		return res, err
	}
	rows, err := s.runSQL(ctx, sql, args, 2, 1)
	if err != nil {
		return res, err
	}
	res, err = retentionReport(buckets(r.Interval, r.DateFrom, r.DateTo, time.Time{}, time.Time{}, time.UTC), rows.Rows, sc.rawScale())
	res.Interval, res.Meta = r.Interval, sc.meta()
	return res, err
}

// retentionReport lays the query's rows (cohort, interval, visitors) out
// on the range's intervals: every cohort, empty ones too, with an entry for
// each interval from its own to the last.
func retentionReport(units []bucket, rows []Row, scale float64) (Retention, error) {
	at := make(map[string]int, len(units))
	res := Retention{Cohorts: make([]Cohort, len(units))}
	for i, u := range units {
		at[u.key] = i
		res.Cohorts[i] = Cohort{Date: u.start, Returns: make([]Return, len(units)-i)}
	}
	for _, row := range rows {
		c, okC := at[row.Dims[0]]
		k, okK := at[row.Dims[1]]
		if !okC || !okK || k < c {
			return res, errors.New("stats: a retention row outside the range's intervals: " + row.Dims[0] + " " + row.Dims[1])
		}
		res.Cohorts[c].Returns[k-c].Visitors = count(row.Metrics[0] * scale)
	}
	for i := range res.Cohorts {
		c := &res.Cohorts[i]
		c.Visitors = c.Returns[0].Visitors
		for k := range c.Returns {
			c.Returns[k].Percentage = percent(float64(c.Returns[k].Visitors), float64(c.Visitors))
		}
	}
	return res, nil
}

// RetentionQuery is the ClickHouse query of a retention report. It counts
// the visitors of a stable id (stable_visitor: the tracker's analytics_vid
// or a sender's visitor_id), since an id made of the day's salt changes
// every day and could never come back; nobody (visitor 0, a payment's) is
// no visitor either. Bots never reach the events. Each visitor's cohort is
// the interval of their first event in the range, and they count once in
// every interval of the range they have an event in.
//
// Result columns: the cohort's and the interval's first days (YYYY-MM-DD),
// then their visitors as Float64.
type RetentionQuery struct {
	Site     model.SiteID
	From, To time.Time // [From, To), UTC
	// Interval is IntervalDay, IntervalWeek or IntervalMonth, of the days
	// of Timezone.
	Interval, Timezone string
	Filters            []Filter
	// SamplePercent, when 1..99, reads that share of visitors; visitors must
	// then be scaled by 100/SamplePercent.
	SamplePercent int
}

// Build returns the SQL and its arguments: each visitor's intervals
// (grouped by visitor and interval), their first one as the cohort, then
// the visitors of each cohort and interval. ClickHouse 18.16 has no window
// functions: the cohort is the visitor's min() and the intervals an array
// joined back.
func (q RetentionQuery) Build() (string, []any, error) {
	if q.Site == "" || !q.From.Before(q.To) {
		return "", nil, errors.New("stats: a retention query needs a site and a non-empty time range")
	}
	if q.Interval == IntervalHour {
		return "", nil, errors.New("stats: a retention query takes days, weeks or months")
	}
	unit := Bucket(q.Interval, q.Timezone)
	var b strings.Builder
	args := append([]any(nil), unit.args...)
	b.WriteString("SELECT toString(c) AS d0, toString(p) AS d1, toFloat64(count()) AS m0 FROM (" +
		"SELECT visitor_id, min(p) AS c, groupArray(p) AS ps FROM (" +
		"SELECT visitor_id, " + unit.exprs[Events] + " AS p FROM events")
	b.WriteString(sampleClause(q.SamplePercent))
	b.WriteString(" WHERE site_key = cityHash64(?) AND " + timeRange(Events) + " AND " + knownVisitor + " AND stable_visitor = 1")
	args = append(append(args, string(q.Site)), timeArgs(Events, q.From, q.To)...)
	args = filterConditions(&b, args, Events, q.Site, q.From, q.To, q.Filters)
	b.WriteString(" GROUP BY visitor_id, p) GROUP BY visitor_id) ARRAY JOIN ps AS p GROUP BY c, p ORDER BY c, p")
	return b.String(), args, nil
}

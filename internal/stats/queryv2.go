package stats

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/errs"
)

// queryPart is one table a v2 query reads and the v2 metrics it counts
// there (plan).
type queryPart struct {
	table   Table
	metrics []string
}

// plan decides which tables answer q, and refuses what no table can
// group correctly:
//
//   - with an event dimension (event:page, event:name, event:props:*) the
//     events are grouped, visit dimensions being their session's columns
//     (the entry and exit pages are the session's alone: refused); the
//     visit metrics (visits, bounce_rate, visit_duration, views_per_visit)
//     are sessions' figures and are refused;
//   - with visit dimensions only, the sessions are grouped, as the v1
//     breakdowns do (sources, devices, countries…): events, which sessions
//     do not hold, is refused; a session's unit of time is the one it
//     started in;
//   - with no dimension or time alone, visitors, pageviews and events come
//     from the events and the visit metrics from the sessions, as the
//     overview has them.
//
// A filter on an event's dimension selects, for sessions, the visits with
// such an event: by is, contains or matches, not their negations.
func (q *V2Query) plan() error {
	if err := q.planGoals(); q.goals || err != nil {
		return err
	}
	for _, m := range q.Metrics {
		if pageMetrics[m] && (len(q.dims) != 1 || q.dims[0].name != "event:page") {
			return errs.InvalidField("metrics", "%s is a page's figure: it needs the dimension event:page, alone", m)
		}
	}
	var event, visit bool
	for _, d := range q.dims {
		switch d.kind {
		case eventDim:
			event = true
		case visitDim:
			visit = true
		}
	}
	var visitMs, eventMs []string
	for _, m := range q.Metrics {
		if visitMetrics[m] {
			visitMs = append(visitMs, m)
		} else {
			eventMs = append(eventMs, m)
		}
	}
	switch {
	case event:
		if len(visitMs) > 0 {
			return errs.InvalidField("metrics", "%s is a visit's figure (its session's) and cannot be grouped by an event dimension", visitMs[0])
		}
		for _, d := range q.dims {
			if _, ok := d.dim.exprs[Events]; !ok && d.kind == visitDim {
				return errs.InvalidField("dimensions", "%s is a session's and cannot be grouped with an event dimension", d.name)
			}
		}
		q.parts = []queryPart{{Events, q.Metrics}}
	case visit:
		if contains(q.Metrics, "events") {
			return errs.InvalidField("metrics", "events cannot be grouped by visit dimensions (sessions do not hold events); group by event:name")
		}
		for _, d := range q.dims {
			if d.dim.mutable && (contains(q.Metrics, "visitors") || contains(q.Metrics, "percentage")) {
				return errs.InvalidField("metrics", "visitors cannot be counted by %s (a session's exit page changes as it goes on); ask for visits", d.name)
			}
		}
		q.parts = []queryPart{{Sessions, q.Metrics}}
	default:
		if len(eventMs) > 0 {
			q.parts = append(q.parts, queryPart{Events, eventMs})
		}
		if len(visitMs) > 0 {
			q.parts = append(q.parts, queryPart{Sessions, visitMs})
		}
	}
	for _, part := range q.parts {
		for _, qf := range q.filters {
			if err := filterFits(qf.filter, part.table, qf.index); err != nil {
				return err
			}
		}
	}
	return nil
}

// planGoals decides whether q is by event:goal: the goal dimension alone,
// with the goals' metrics; conversion_rate needs it. The goals count
// events, which every filter fits.
func (q *V2Query) planGoals() error {
	for _, d := range q.dims {
		q.goals = q.goals || d.kind == goalDim
	}
	if !q.goals {
		if contains(q.Metrics, "conversion_rate") {
			return errs.InvalidField("metrics", "conversion_rate needs the dimension event:goal")
		}
		return nil
	}
	if len(q.dims) > 1 {
		return errs.InvalidField("dimensions", "event:goal goes alone")
	}
	for _, m := range q.Metrics {
		if !contains(goalMetrics, m) {
			return errs.InvalidField("metrics", "a goal has %s only", strings.Join(goalMetrics, ", "))
		}
	}
	return nil
}

// filterFits refuses a filter the table cannot apply (Query.check's rule,
// as a 400 naming the filter).
func filterFits(g Filter, t Table, index int) error {
	for _, f := range g.leaves() {
		if _, ok := f.Dim.exprs[t]; ok && !f.Dim.visit || f.Visits {
			continue
		}
		if f.Not {
			return errs.InvalidField(fmt.Sprintf("filters.%d", index), "an event's dimension selects the visits with such an event "+
				"when the query counts visits: it takes is, contains or matches, not their negations")
		}
	}
	return nil
}

// raw reports whether q reads what no rollup holds, and so samples from
// the lower threshold as the v1 reports of these do (rawScope): the
// channel, the versions and the host.
func (q V2Query) raw() bool {
	for _, d := range q.dims {
		switch d.dim.Name {
		case Channel.Name, BrowserVersion.Name, OSVersion.Name, Hostname.Name:
			return true
		}
	}
	return false
}

// V2Result is the answer to a v2 query: a page of its rows, how many rows
// it has in all, its range ([From, To) in the site's time zone) and
// whether it read a sample.
type V2Result struct {
	Query     V2Query
	Rows      []Row
	TotalRows int
	// TimeLabels are the labels of every unit of the time dimension the
	// range touches, rows or none, when the query asked for them.
	TimeLabels []string
	From, To   time.Time
	Timezone   string
	Sampled    bool
	// Order is the order applied (the query's, else the default).
	Order []QueryOrder
}

// Query answers a v2 query (POST /api/v2/query) with the reports' rules:
// access, the site's time zone, sampling, rollups and filters.
func (s *Service) Query(ctx context.Context, p auth.Principal, q V2Query) (V2Result, error) {
	r := Request{SiteID: q.Site, Segment: q.Segment}
	for _, qf := range q.filters {
		r.Filters = append(r.Filters, qf.filter)
	}
	sc, err := s.access(ctx, p, r)
	var e *errs.Error
	if errors.As(err, &e) && e.Field == SegmentParam {
		// the segment is a filter of the body here
		return V2Result{}, e.WithField(q.segmentField)
	}
	if err != nil {
		return V2Result{}, err
	}
	first, last := q.First, q.Last
	if q.Relative != "" {
		y, m, d := s.now().In(sc.loc).Date()
		first, last = RelativeRange(q.Relative, time.Date(y, m, d, 0, 0, 0, 0, time.UTC))
	}
	dims := make([]Dimension, len(q.dims))
	for i, d := range q.dims {
		dims[i] = d.dim
		if d.kind == timeDim {
			if _, err := ParseInterval(d.interval, first, last); err != nil {
				return V2Result{}, errs.InvalidField("dimensions", "time:hour spans at most %d days", MaxHourlyDays)
			}
			dims[i] = Bucket(d.interval, sc.tz)
		}
	}
	sc.req.DateFrom, sc.req.DateTo = first, last
	sc.from, sc.to = sc.bounds(first, last)
	sc.sampled = new(atomic.Bool)
	if q.raw() {
		sc.sample, err = s.rawSampleRate(ctx, sc)
	} else {
		sc.sample, err = s.sampleRate(ctx, sc)
	}
	if err != nil {
		return V2Result{}, err
	}
	var rows []Row
	if q.goals {
		rows, err = s.goalRows(ctx, sc, q, first, last)
	} else {
		rows, err = s.queryRows(ctx, sc, q, dims)
	}
	if err != nil {
		return V2Result{}, err
	}
	order := q.sortRows(rows)
	res := V2Result{Query: q, TotalRows: len(rows), From: sc.from.In(sc.loc), To: sc.to.In(sc.loc), Timezone: sc.tz,
		Sampled: sc.readSample(), Order: order}
	if q.Offset < len(rows) {
		res.Rows = rows[q.Offset:min(len(rows), q.Offset+q.Limit)]
	}
	for i := range res.Rows {
		res.Rows[i].Dims = q.labels(res.Rows[i].Dims, sc.loc)
	}
	if q.TimeLabels {
		d := q.dims[q.timeIndex()]
		for _, b := range buckets(d.interval, first, last, sc.from, sc.to, sc.loc) {
			res.TimeLabels = append(res.TimeLabels, d.label(b.key, sc.loc))
		}
	}
	return res, nil
}

// baseMetrics are the metrics a v2 metric is worked out of.
var baseMetrics = map[string][]Metric{
	"visitors":        {Visitors},
	"pageviews":       {Pageviews},
	"events":          {EventCount},
	"visits":          {SessionCount},
	"bounce_rate":     {SessionCount, Bounces},
	"visit_duration":  {SessionCount, DurationSum},
	"views_per_visit": {SessionCount, Pageviews},
	"percentage":      {Visitors},
}

// QueryMaxGroups is the most rows a v2 query may have before its page is
// taken: they are sorted in Go, as the order may be by a rate, which no
// column holds.
const QueryMaxGroups = 100_000

// queryRows runs q's parts and puts their rows together by their
// dimensions' values: a row per group, its metrics in q's order.
func (s *Service) queryRows(ctx context.Context, sc scope, q V2Query, dims []Dimension) ([]Row, error) {
	byKey := map[string]*Row{}
	var keys []string
	row := func(d []string) *Row {
		k := strings.Join(d, "\x00")
		if r, ok := byKey[k]; ok {
			return r
		}
		r := &Row{Dims: d, Metrics: make([]float64, len(q.Metrics))}
		byKey[k] = r
		keys = append(keys, k)
		return r
	}
	if len(dims) == 0 {
		row(nil)
	}
	results := make([]Result, len(q.parts))
	queries := make([]Query, len(q.parts))
	fns := make([]func(context.Context) error, len(q.parts))
	for i, part := range q.parts {
		var metrics []Metric
		for _, m := range part.metrics {
			for _, b := range baseMetrics[m] {
				if !hasMetric(metrics, b) {
					metrics = append(metrics, b)
				}
			}
		}
		if len(metrics) == 0 {
			metrics = []Metric{Pageviews} // page metrics alone: the pages' rows
		}
		queries[i] = sc.query(part.table, dims, metrics)
		queries[i].WithTotals = len(dims) > 0
		if len(dims) > 0 {
			// one group more than the most a query sorts in Go tells that
			// there are too many, rather than a page of some of them
			queries[i].Limit = QueryMaxGroups + 1
		}
		fns[i] = func(ctx context.Context) (err error) { results[i], err = s.run(ctx, queries[i]); return err }
	}
	if err := parallel(ctx, fns...); err != nil {
		return nil, err
	}
	for i, part := range q.parts {
		res, qq := results[i], queries[i]
		if len(res.Rows) > QueryMaxGroups {
			return nil, errs.InvalidField("dimensions", "the query has more than %d rows; narrow it with filters or a shorter date_range",
				QueryMaxGroups)
		}
		if len(dims) == 0 && len(res.Rows) == 0 {
			res.Rows = []Row{{Metrics: make([]float64, len(qq.Metrics))}}
		}
		for _, r := range res.Rows {
			out := row(r.Dims)
			for _, m := range part.metrics {
				if !pageMetrics[m] {
					out.Metrics[indexOf(q.Metrics, m)] = v2Metric(m, qq, r.Metrics, res.Totals)
				}
			}
		}
	}
	rows := make([]Row, len(keys))
	for i, k := range keys {
		rows[i] = *byKey[k]
	}
	return rows, s.fillPageMetrics(ctx, sc, q, rows)
}

// fillPageMetrics sets the page metrics of rows by event:page as the pages
// report has them: time_on_page the mean seconds of a stay on the page (of
// the pages with the most stays, perPageRows), scroll_depth the mean of
// its visitors' deepest scroll in percent; NaN (null) where none was
// measured.
func (s *Service) fillPageMetrics(ctx context.Context, sc scope, q V2Query, rows []Row) error {
	timeAt, depthAt := indexOf(q.Metrics, "time_on_page"), indexOf(q.Metrics, "scroll_depth")
	if (timeAt < 0 && depthAt < 0) || len(rows) == 0 {
		return nil
	}
	paths := make([]string, len(rows))
	for i, r := range rows {
		paths[i] = r.Dims[0]
	}
	var times, depths map[string][]float64
	var fns []func(context.Context) error
	if timeAt >= 0 {
		fns = append(fns, func(ctx context.Context) (err error) { times, err = s.pageTimes(ctx, sc); return err })
	}
	if depthAt >= 0 {
		fns = append(fns, func(ctx context.Context) (err error) { depths, err = s.scrollDepths(ctx, sc, paths); return err })
	}
	if err := parallel(ctx, fns...); err != nil {
		return err
	}
	for i, r := range rows {
		if timeAt >= 0 {
			rows[i].Metrics[timeAt] = math.NaN()
			if t, ok := times[r.Dims[0]]; ok {
				rows[i].Metrics[timeAt] = meanSeconds(t[0], t[1])
			}
		}
		if depthAt >= 0 {
			rows[i].Metrics[depthAt] = math.NaN()
			if d, ok := depths[r.Dims[0]]; ok {
				rows[i].Metrics[depthAt] = math.Round(d[0])
			}
		}
	}
	return nil
}

// goalRows are the site's goals completed in the inclusive dates
// first..last, by name, counted as the conversions report counts them
// (goalCounts): visitors are the goal's converters, events its
// completions, conversion_rate converters ÷ the range's visitors × 100 (the
// report's visitor_conversion_rate, Plausible's conversion rate).
func (s *Service) goalRows(ctx context.Context, sc scope, q V2Query, first, last time.Time) ([]Row, error) {
	goals, err := s.goals.GoalsBySite(ctx, sc.site.ID)
	if err != nil || len(goals) == 0 {
		return nil, err
	}
	f, err := s.goalCounts(ctx, sc, goals, first, last, true)
	if err != nil {
		return nil, err
	}
	var rows []Row
	for i, g := range goals {
		if count(f.completions[i]) == 0 {
			continue
		}
		row := Row{Dims: []string{g.Name}, Metrics: make([]float64, len(q.Metrics))}
		for j, m := range q.Metrics {
			switch m {
			case "visitors":
				row.Metrics[j] = float64(count(f.converters[i]))
			case "events":
				row.Metrics[j] = float64(count(f.completions[i]))
			case "conversion_rate":
				row.Metrics[j] = percent(f.converters[i], f.visitors)
			}
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// v2Metric is the v2 metric m of a row of q (vals), with the totals of
// q's groups (the whole of a percentage), by tally's rules.
func v2Metric(m string, q Query, vals, totals []float64) float64 {
	v := func(b Metric) float64 { return vals[q.metricIndex(b)] }
	switch m {
	case "bounce_rate":
		return bounceRate(v(SessionCount), v(Bounces))
	case "visit_duration":
		return meanSeconds(v(DurationSum), v(SessionCount))
	case "views_per_visit":
		return viewsPerVisit(v(Pageviews), v(SessionCount))
	case "percentage":
		return percent(v(Visitors), totals[q.metricIndex(Visitors)])
	}
	return float64(count(v(baseMetrics[m][0])))
}

func hasMetric(ms []Metric, m Metric) bool {
	for _, x := range ms {
		if x.Name == m.Name {
			return true
		}
	}
	return false
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

// sortRows sorts rows by q's order, else by the time dimension (ascending)
// or the first metric (descending); ties go by the dimensions, ascending.
// It returns the order applied.
func (q V2Query) sortRows(rows []Row) []QueryOrder {
	order := q.Order
	if len(order) == 0 {
		order = []QueryOrder{{Key: q.Metrics[0], Desc: true}}
		for _, d := range q.dims {
			if d.kind == timeDim {
				order = []QueryOrder{{Key: d.name}}
			}
		}
	}
	less := func(a, b Row) int {
		for _, o := range order {
			c := 0
			if i := indexOf(q.Metrics, o.Key); i >= 0 {
				c = cmp.Compare(a.Metrics[i], b.Metrics[i]) // a figure not measured (NaN) first
			} else {
				c = q.compareDim(indexOf(q.DimNames, o.Key), a, b)
			}
			if o.Desc {
				c = -c
			}
			if c != 0 {
				return c
			}
		}
		for i := range q.dims {
			if c := q.compareDim(i, a, b); c != 0 {
				return c
			}
		}
		return 0
	}
	sort.SliceStable(rows, func(i, j int) bool { return less(rows[i], rows[j]) < 0 })
	return order
}

// compareDim compares the values of dimension i of two rows: hours by
// their instant, days as dates, other values as text.
func (q V2Query) compareDim(i int, a, b Row) int {
	if q.dims[i].interval == IntervalHour {
		x, _ := strconv.ParseInt(a.Dims[i], 10, 64)
		y, _ := strconv.ParseInt(b.Dims[i], 10, 64)
		return cmp.Compare(x, y)
	}
	return strings.Compare(a.Dims[i], b.Dims[i])
}

// labels writes a row's values as the answer has them: an hour as its
// local time (YYYY-MM-DD HH:MM:SS, as Plausible's), an empty value as its
// dimension labels one (Unknown, ZZ, (none)).
func (q V2Query) labels(vals []string, loc *time.Location) []string {
	out := make([]string, len(vals))
	for i, v := range vals {
		out[i] = q.dims[i].label(v, loc)
	}
	return out
}

// label is a value of d as the answer shows it: an hour (the instant it
// starts, in Unix seconds) as its local time, an empty value as d's label
// of none.
func (d queryDim) label(v string, loc *time.Location) string {
	switch {
	case d.interval == IntervalHour:
		sec, _ := strconv.ParseInt(v, 10, 64)
		return time.Unix(sec, 0).In(loc).Format(time.DateTime)
	case v == "" && d.empty != "":
		return d.empty
	}
	return v
}

// timeIndex is the index of q's time dimension, or -1.
func (q V2Query) timeIndex() int {
	for i, d := range q.dims {
		if d.kind == timeDim {
			return i
		}
	}
	return -1
}

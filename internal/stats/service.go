package stats

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/tally-analytics/tally/internal/accounts"
	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/model"
)

// Store runs built queries; chstore implements it.
type Store interface {
	Rows(ctx context.Context, query string, args []any, dims, metrics int) (Result, error)
	// Each runs a query and calls row after scanning each of its rows into
	// dest (pointers of the columns' types), in the order they arrive; a
	// query WITH TOTALS scans its totals row into totals, when given.
	Each(ctx context.Context, query string, args []any, dest []any, row func(), totals ...any) error
}

// Result is what a query returned.
type Result struct {
	Rows []Row
	// Totals is the WITH TOTALS row's metrics; nil when the query has none.
	Totals []float64
	// RowsBeforeLimit is the number of rows the query had before its LIMIT
	// (with GROUP BY: the number of groups), as ClickHouse reports it.
	RowsBeforeLimit int64
}

// Sites answers whether a principal may do an action to a site (the
// accounts' guard).
type Sites interface {
	Check(ctx context.Context, p auth.Principal, id model.SiteID, a accounts.Action) (model.Site, model.Role, error)
}

// RealtimeSource reports who is on a site right now.
type RealtimeSource interface {
	Active(ctx context.Context, site model.SiteID, now time.Time) (model.Realtime, error)
	// AtMost bounds Active's count from above, reading no visitor.
	AtMost(ctx context.Context, site model.SiteID, now time.Time) (int64, error)
}

// Service answers the stats endpoints.
type Service struct {
	store    Store
	sites    Sites
	goals    GoalLister
	funnels  FunnelSource
	segments SegmentSource
	pending  PendingCounter
	realtime RealtimeSource
	now      func() time.Time
	log      *slog.Logger
	// sampleAbove is the number of events in a range above which queries
	// run on a sample of visitors; 0 disables sampling.
	sampleAbove int64
	// funnelSampleAbove is the funnels' own threshold (see Options).
	funnelSampleAbove int64
	// groupSampleAbove is the grouping reports' threshold (see Options).
	groupSampleAbove int64
	// pageRollups lets page reports read the daily per-page rollups.
	pageRollups bool
	// rollups lets every query read the rollups that hold it (rollups.go).
	rollups bool
	counts  eventCounts
	// built caches which visitor blocks are built (blocks.go).
	built builtCache
}

// Options tune how the statistics are read.
type Options struct {
	// SampleAboveEvents is the number of events in a range above which
	// queries run on a sample of visitors; 0 disables sampling.
	SampleAboveEvents int64
	// FunnelSampleAboveEvents is the funnel report's threshold, the lower
	// of the two applying; 0 leaves funnels to SampleAboveEvents. No
	// rollup holds a funnel (its steps are a visitor's sequence), so it reads
	// every event of its range that completes a step and gathers them by
	// visitor: on 100M events over 30 days, 35 s for the whole range
	// against 0.6 s on a 2 % sample (0.9 s through the API).
	FunnelSampleAboveEvents int64
	// GroupSampleAboveEvents is the threshold of the reports that group raw
	// rows by visitor or session (groupSampleRate), the lowest of the three
	// applying; 0 leaves them to the funnel's.
	GroupSampleAboveEvents int64
	// PageRollups lets the pages reports read the daily per-page rollups
	// when a range has no filters (see pageRollup).
	PageRollups bool
	// Rollups lets every report read the rollups that hold its queries
	// (rollups.go): unfiltered ranges, and filters on what a rollup holds.
	Rollups bool
	// Funnels finds the funnel of a funnel report.
	Funnels FunnelSource
	// Segments finds the segment a request applies (segment=).
	Segments SegmentSource
}

// eventCounts remembers how many events a site's range holds for a minute:
// the sampling decision needs the number, not its last digit, and counting
// costs a scan of the range.
type eventCounts struct {
	mu sync.Mutex
	m  map[countKey]countEntry
}

type countKey struct {
	site     model.SiteID
	from, to int64
}

type countEntry struct {
	n  float64
	at time.Time
}

const countTTL = time.Minute

func (c *eventCounts) get(k countKey, now time.Time) (float64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[k]
	if !ok || now.Sub(e.at) > countTTL {
		return 0, false
	}
	return e.n, true
}

func (c *eventCounts) put(k countKey, n float64, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) > 10_000 {
		c.m = map[countKey]countEntry{}
	}
	c.m[k] = countEntry{n: n, at: now}
}

// NewService wires the stats service.
func NewService(store Store, sites Sites, goals GoalLister, pending PendingCounter, realtime RealtimeSource,
	opts Options, now func() time.Time, log *slog.Logger) *Service {
	return &Service{store: store, sites: sites, goals: goals, pending: pending, realtime: realtime,
		sampleAbove: opts.SampleAboveEvents, funnelSampleAbove: opts.FunnelSampleAboveEvents,
		groupSampleAbove: opts.GroupSampleAboveEvents, pageRollups: opts.PageRollups,
		rollups: opts.Rollups, funnels: opts.Funnels, segments: opts.Segments, now: now, log: log}
}

// UnknownLabel names rows whose value is unknown (device, browser, country...).
const UnknownLabel = "Unknown"

// maxRows caps the breakdown lists that have no paging.
const maxRows = 1000

// scope is a resolved request: the site, the UTC bounds and the sample rate.
type scope struct {
	req      Request
	site     model.Site
	tz       string
	loc      *time.Location
	from, to time.Time
	sample   int // percent of visitors read; 0 = all
	// rollups lets the scope's queries read rollups (they then read no sample).
	rollups bool
	// built tells which visitor blocks the rollups' queries may read.
	built Built
	// sampled is set when one of the report's queries read a sample; nil
	// for a report that samples by itself, whose meta says sample > 0.
	sampled *atomic.Bool
}

func (s *Service) resolve(ctx context.Context, p auth.Principal, r Request) (scope, error) {
	sc, err := s.access(ctx, p, r)
	if err != nil || r.DateFrom.IsZero() {
		return sc, err
	}
	sc.sampled = new(atomic.Bool)
	sc.sample, err = s.sampleRate(ctx, sc)
	return sc, err
}

// access is who may read what, for every report and the raw export: the
// caller needs stats:read and a role on the site (viewers included; another
// account's site is site_not_found), and the dates are days of the
// request's time zone, else the site's. The scope's filters are the
// request's and its segment's (a segment of another site is
// segment_not_found). Its queries may read the rollups, which are exact;
// resolve adds the sample.
func (s *Service) access(ctx context.Context, p auth.Principal, r Request) (scope, error) {
	site, _, err := s.sites.Check(ctx, p, r.SiteID, accounts.ReadStats)
	if err != nil {
		return scope{}, err
	}
	sc := scopeOf(site, r)
	if err := s.settleFilters(ctx, &sc); err != nil {
		return scope{}, err
	}
	sc.rollups = s.rollups
	if s.rollups {
		sc.built = s.builtBlocks(ctx)
	}
	return sc, nil
}

// scopeOf places r's dates in its time zone (the site's when r names none;
// UTC when the site's is unknown to this machine).
func scopeOf(site model.Site, r Request) scope {
	sc := scope{req: r, site: site, tz: r.Timezone}
	if sc.tz == "" {
		sc.tz = site.Timezone
	}
	loc, err := LoadLocation(sc.tz)
	if err != nil {
		sc.tz, loc = "UTC", time.UTC
	}
	sc.loc = loc
	if !r.DateFrom.IsZero() {
		sc.from, sc.to = sc.bounds(r.DateFrom, r.DateTo)
	}
	return sc
}

// Range is a request's site and its dates as UTC instants.
type Range struct {
	Site model.Site
	// Timezone is the zone whose days the dates are.
	Timezone string
	// From and To bound the range: [From, To), UTC.
	From, To time.Time
}

// Range resolves r as the reports do (scope, site access, time zone)
// without reading any statistics: the raw export's range.
func (s *Service) Range(ctx context.Context, p auth.Principal, r Request) (Range, error) {
	sc, err := s.access(ctx, p, r)
	if err != nil {
		return Range{}, err
	}
	return sc.span(), nil
}

// RangeOf is r's range on site for a caller whose access is not in
// question (the command line, which reads the stores with the server's
// configuration).
func RangeOf(site model.Site, r Request) Range { return scopeOf(site, r).span() }

func (sc scope) span() Range {
	return Range{Site: sc.site, Timezone: sc.tz, From: sc.from, To: sc.to}
}

// bounds turns inclusive dates into the UTC instants [first 00:00, last+1 00:00)
// of the scope's time zone (a day whose midnight a clock change skips starts
// at that change).
func (sc scope) bounds(first, last time.Time) (time.Time, time.Time) {
	start := startOfDay(first.Year(), first.Month(), first.Day(), sc.loc)
	end := startOfDay(last.Year(), last.Month(), last.Day()+1, sc.loc)
	return start.UTC(), end.UTC()
}

// startOfDay is the first instant of the day y-m-d in loc: its midnight, or,
// when a clock change skips midnight, the transition that starts the day
// (time.Date then normalises to the previous day's last hour).
func startOfDay(y int, m time.Month, d int, loc *time.Location) time.Time {
	t := time.Date(y, m, d, 0, 0, 0, 0, loc)
	want := time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	for i := 0; i < 4; i++ {
		ty, tm, td := t.Date()
		if !time.Date(ty, tm, td, 0, 0, 0, 0, time.UTC).Before(want) {
			break
		}
		_, end := t.ZoneBounds()
		if end.IsZero() {
			break
		}
		t = end
	}
	return t
}

// sampleRate decides whether the range is large enough to sample, and which
// percentage of visitors to read.
func (s *Service) sampleRate(ctx context.Context, sc scope) (int, error) {
	return s.sampleRateAbove(ctx, sc, s.sampleAbove)
}

// rawSampleRate is sampleRate under the lower of the two thresholds, for
// the reports that no rollup holds and that read raw rows whatever the
// range: the funnel, and browser and system versions.
func (s *Service) rawSampleRate(ctx context.Context, sc scope) (int, error) {
	return s.sampleRateAbove(ctx, sc, lowestThreshold(s.sampleAbove, s.funnelSampleAbove))
}

// groupSampleRate is sampleRateAbove under the lowest of the thresholds
// (Options.GroupSampleAboveEvents), for the reports that group raw rows by
// visitor or by session: the journeys (a path per session), retention (each
// visitor's intervals) and the pages' scroll depths (each visitor's deepest
// scroll of a page). A group is a hash table entry per visitor or session,
// 1–2 µs an event here: on 10M demo events the journeys took 4.1–4.6 s and
// retention 1.7–2.4 s under the funnel's threshold alone (2M events read),
// and 30 days of scroll depths 10 s unsampled
// (bench/results/2026-11-29-queries-grouped.md). Their figures are shares
// and means, which a sample of visitors keeps.
func (s *Service) groupSampleRate(ctx context.Context, sc scope) (int, error) {
	return s.sampleRateAbove(ctx, sc, lowestThreshold(s.sampleAbove, s.funnelSampleAbove, s.groupSampleAbove))
}

// lowestThreshold is the lowest of the sampling thresholds set (0 = not
// set); 0, never sampling, when none is.
func lowestThreshold(thresholds ...int64) int64 {
	var lowest int64
	for _, t := range thresholds {
		if t > 0 && (lowest == 0 || t < lowest) {
			lowest = t
		}
	}
	return lowest
}

// sampleRateAbove is the percentage of visitors to read when the range
// holds more than above events (0 = never sample): about above/2 events.
func (s *Service) sampleRateAbove(ctx context.Context, sc scope, above int64) (int, error) {
	if above <= 0 {
		return 0, nil
	}
	key := countKey{sc.site.ID, sc.from.Unix(), sc.to.Unix()}
	n, ok := s.counts.get(key, time.Now())
	if !ok {
		total, err := s.total(ctx, Query{Table: Events, Site: sc.site.ID, From: sc.from, To: sc.to, Metrics: []Metric{EventCount},
			Rollups: s.rollups})
		if err != nil {
			return 0, err
		}
		n = total[0]
		s.counts.put(key, n, time.Now())
	}
	if n <= float64(above) {
		return 0, nil
	}
	// read about half the threshold's worth of events
	return max(1, int(float64(above)/2/n*100)), nil
}

// query starts a query on the scope with its filters and sample (none when
// it reads a rollup).
func (sc scope) query(t Table, dims []Dimension, metrics []Metric, filters ...Filter) Query {
	q := Query{Table: t, Site: sc.site.ID, From: sc.from, To: sc.to, Dimensions: dims, Metrics: metrics,
		Filters: append(append([]Filter(nil), sc.req.Filters...), filters...), SamplePercent: sc.sample, Rollups: sc.rollups, Built: sc.built}
	if sc.sampled != nil && q.Scale() != 1 {
		sc.sampled.Store(true)
	}
	return q
}

// rows runs q and scales count metrics back when it ran on a sample.
func (s *Service) rows(ctx context.Context, q Query) ([]Row, error) {
	res, err := s.run(ctx, q)
	return res.Rows, err
}

// rowsAndTotals runs q (WithTotals set) and returns its rows and totals; the
// totals are zeros when no row matched.
func (s *Service) rowsAndTotals(ctx context.Context, q Query) ([]Row, []float64, error) {
	res, err := s.run(ctx, q)
	return res.Rows, res.Totals, err
}

// run runs q, scaling count metrics back when it ran on a sample.
func (s *Service) run(ctx context.Context, q Query) (Result, error) {
	sql, args, err := q.Build()
	if err != nil {
		return Result{}, err
	}
	res, err := s.runSQL(ctx, sql, args, len(q.Dimensions), len(q.Metrics))
	if err != nil {
		return Result{}, err
	}
	if res.Totals == nil {
		res.Totals = make([]float64, len(q.Metrics))
	}
	if scale := q.Scale(); scale != 1 {
		for _, vals := range append([][]float64{res.Totals}, metricsOf(res.Rows)...) {
			for i, m := range q.Metrics {
				if m.count {
					vals[i] *= scale
				}
			}
		}
	}
	return res, nil
}

// runSQL runs built SQL returning dims dimensions and metrics metrics.
func (s *Service) runSQL(ctx context.Context, sql string, args []any, dims, metrics int) (Result, error) {
	res, err := s.store.Rows(ctx, sql, args, dims, metrics)
	if err != nil {
		return Result{}, queryError(err)
	}
	return res, nil
}

// queryError is the error of a query that failed: a 4xx when the request
// is why.
func queryError(err error) error {
	if strings.Contains(err.Error(), "Cannot load time zone") {
		return errs.InvalidField("timezone", "this time zone is not known to the database")
	}
	if strings.Contains(err.Error(), "Max query size exceeded") {
		// lists travel beside queries, so this is a limit a request found
		return errs.E(errs.Invalid, "invalid_request", "the request needs a query larger than the database takes; narrow it").Wrap(err)
	}
	return fmt.Errorf("stats: %w", err)
}

func metricsOf(rows []Row) [][]float64 {
	out := make([][]float64, len(rows))
	for i, r := range rows {
		out[i] = r.Metrics
	}
	return out
}

// total runs a query without dimensions and returns its metrics (zeros when empty).
func (s *Service) total(ctx context.Context, q Query) ([]float64, error) {
	rows, err := s.rows(ctx, q)
	if err != nil {
		return nil, err
	}
	return firstMetrics(rows, len(q.Metrics)), nil
}

// visitors counts the visitors of the scope's range: of every event,
// filtered as the report is (the whole of a conversion rate).
func (s *Service) visitors(ctx context.Context, sc scope) (float64, error) {
	total, err := s.total(ctx, sc.query(Events, nil, []Metric{Visitors}))
	if err != nil {
		return 0, err
	}
	return total[0], nil
}

// rowsAndVisitors runs q beside the count of the scope's visitors.
func (s *Service) rowsAndVisitors(ctx context.Context, sc scope, q Query) (rows []Row, visitors float64, err error) {
	err = parallel(ctx,
		func(ctx context.Context) (err error) { rows, err = s.rows(ctx, q); return err },
		func(ctx context.Context) (err error) { visitors, err = s.visitors(ctx, sc); return err })
	return rows, visitors, err
}

// firstMetrics are the metrics of a total's one row: n zeros when no row
// matched.
func firstMetrics(rows []Row, n int) []float64 {
	if len(rows) == 0 {
		return make([]float64, n)
	}
	return rows[0].Metrics
}

func (sc scope) meta() Meta {
	return Meta{Site: sc.site.ID, From: sc.req.DateFrom, To: sc.req.DateTo, Timezone: sc.tz, Sampled: sc.readSample()}
}

// rawScale is the factor that turns a count on the scope's sample back into
// an estimate, for the reports that sample by themselves (sc.sample, no
// Query): 1 when they read every visitor.
func (sc scope) rawScale() float64 {
	if sc.sample > 0 && sc.sample < 100 {
		return 100 / float64(sc.sample)
	}
	return 1
}

// readSample reports whether the report read a sample.
func (sc scope) readSample() bool {
	if sc.sampled == nil {
		return sc.sample > 0
	}
	return sc.sampled.Load()
}

// round1 rounds to one decimal, as every rate and duration is reported.
func round1(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0
	}
	return math.Round(x*10) / 10
}

// percent is part/whole × 100 with one decimal; 0 when whole is 0.
func percent(part, whole float64) float64 {
	if whole <= 0 {
		return 0
	}
	return round1(part / whole * 100)
}

// conversionRate is the rule of every conversion rate: how often an event
// (or a goal) happened ÷ all visitors of the range × 100, one decimal (it
// passes 100 when visitors repeat it; 0 without visitors).
func conversionRate(completions, visitors float64) float64 { return percent(completions, visitors) }

// percentChange is the percent change from prev to cur, one decimal; nil
// when prev is 0 (there is nothing to compare with).
func percentChange(cur, prev float64) *float64 {
	if prev == 0 {
		return nil
	}
	v := round1((cur - prev) / prev * 100)
	return &v
}

// meanSeconds is sum ÷ n seconds, one decimal (0 when n is 0): a visit's
// duration, a page's time.
func meanSeconds(sum, n float64) float64 { return round1(ratio(sum, n)) }

// viewsPerVisit is the pageviews of sessions divided by their count, with
// two decimals.
func viewsPerVisit(pageviews, sessions float64) float64 {
	return math.Round(ratio(pageviews, sessions)*100) / 100
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// bounceShare is the rule of every bounce rate: the share of sessions (of a
// range, a source, an entry page) that bounced (model.Bounce), in percent,
// unrounded (0 without sessions).
func bounceShare(sessions, bounces float64) float64 {
	if sessions <= 0 {
		return 0
	}
	return bounces / sessions * 100
}

// bounceRate is a bounce rate as reported: bounceShare with one decimal.
func bounceRate(sessions, bounces float64) float64 { return round1(bounceShare(sessions, bounces)) }

func count(x float64) int64 { return int64(math.Round(x)) }

func labelOr(v, fallback string) string {
	if v == "" {
		return fallback
	}
	return v
}

// parallel runs fns concurrently and returns the first error.
func parallel(ctx context.Context, fns ...func(context.Context) error) error {
	g, gctx := errgroup.WithContext(ctx)
	for _, fn := range fns {
		g.Go(func() error { return fn(gctx) })
	}
	return g.Wait()
}

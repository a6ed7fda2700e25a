package stats

import (
	"context"
	"sort"
	"sync/atomic"
	"time"

	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/ingest/geo"
)

// Sources lists where sessions came from (fixed when a session starts).
func (s *Service) Sources(ctx context.Context, p auth.Principal, r Request) (List[SourceRow], error) {
	var res List[SourceRow]
	sc, err := s.resolve(ctx, p, r)
	if err != nil {
		return res, err
	}
	q := sc.query(Sessions, []Dimension{Source, SourceType}, []Metric{Visitors, Pageviews, SessionCount, Bounces})
	q.Order, q.Limit = []Order{ByMetric(Visitors), ByDimension(Source)}, maxRows
	rows, err := s.rows(ctx, q)
	if err != nil {
		return res, err
	}
	res.Rows = make([]SourceRow, len(rows))
	for i, row := range rows {
		res.Rows[i] = SourceRow{Source: row.Dims[0], Type: row.Dims[1], Visitors: count(row.Metrics[0]),
			Pageviews: count(row.Metrics[1]), BounceRate: bounceRate(row.Metrics[2], row.Metrics[3])}
	}
	res.Meta = sc.meta()
	return res, nil
}

// Campaigns lists the visits that came with a UTM parameter, by its value
// (utm_campaign unless the request names another): their visitors and
// share of those visitors, pageviews and bounce rate, as the sources report
// has them.
func (s *Service) Campaigns(ctx context.Context, p auth.Principal, r Request) (Campaigns, error) {
	res := Campaigns{By: r.UTMBy}
	sc, err := s.resolve(ctx, p, r)
	if err != nil {
		return res, err
	}
	dim := UTMDimensions[r.UTMBy]
	q := sc.query(Sessions, []Dimension{dim}, []Metric{Visitors, Pageviews, SessionCount, Bounces}, NotEq(dim, ""))
	q.Order, q.Limit, q.WithTotals = []Order{ByMetric(Visitors), ByDimension(dim)}, maxRows, true
	rows, total, err := s.rowsAndTotals(ctx, q)
	if err != nil {
		return res, err
	}
	res.Rows = make([]CampaignRow, len(rows))
	for i, row := range rows {
		res.Rows[i] = CampaignRow{Value: row.Dims[0], Visitors: count(row.Metrics[0]), Percentage: percent(row.Metrics[0], total[0]),
			Pageviews: count(row.Metrics[1]), BounceRate: bounceRate(row.Metrics[2], row.Metrics[3])}
	}
	res.Meta = sc.meta()
	return res, nil
}

// Channels lists visits by acquisition channel (Channel): the visitors of
// each, their share of the report's visitors, its visits, pageviews,
// bounce rate and mean visit duration. No rollup holds the columns the
// rule reads: the report reads the sessions, on a sample from the funnel's
// lower threshold on, as the versions do (rawSampleRate).
func (s *Service) Channels(ctx context.Context, p auth.Principal, r Request) (List[ChannelRow], error) {
	var res List[ChannelRow]
	sc, err := s.rawScope(ctx, p, r)
	if err != nil {
		return res, err
	}
	q := sc.query(Sessions, []Dimension{Channel}, []Metric{Visitors, SessionCount, Pageviews, Bounces, DurationSum})
	q.Order, q.Limit, q.WithTotals = []Order{ByMetric(Visitors), ByDimension(Channel)}, maxRows, true
	rows, total, err := s.rowsAndTotals(ctx, q)
	if err != nil {
		return res, err
	}
	res.Rows = make([]ChannelRow, len(rows))
	for i, row := range rows {
		m := row.Metrics
		res.Rows[i] = ChannelRow{Channel: row.Dims[0], Visitors: count(m[0]), Percentage: percent(m[0], total[0]),
			Visits: count(m[1]), Pageviews: count(m[2]), BounceRate: bounceRate(m[1], m[3]), VisitDuration: meanSeconds(m[4], m[1])}
	}
	res.Meta = sc.meta()
	return res, nil
}

// share is a visitors breakdown by one or two dimensions: each row with its
// visitors and their share of the report's visitors.
type share struct {
	dims     []string
	visitors int64
	percent  float64
}

// breakdown counts visitors by dims among sessions matching filters, in one
// scan with their total. Devices, browsers, locations are fixed per session,
// and the sessions table is a third the size of events.
func (s *Service) breakdown(ctx context.Context, sc scope, dims []Dimension, filters ...Filter) ([]share, error) {
	q := sc.query(Sessions, dims, []Metric{Visitors}, filters...)
	q.Order, q.Limit, q.WithTotals = []Order{ByMetric(Visitors), ByDimension(dims[0])}, maxRows, true
	rows, total, err := s.rowsAndTotals(ctx, q)
	if err != nil {
		return nil, err
	}
	out := make([]share, len(rows))
	for i, row := range rows {
		out[i] = share{dims: row.Dims, visitors: count(row.Metrics[0]), percent: percent(row.Metrics[0], total[0])}
	}
	// Among equal counts, unknown values (reported as Unknown or ZZ) come
	// after the known ones.
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.visitors != b.visitors {
			return a.visitors > b.visitors
		}
		return a.dims[0] != "" && b.dims[0] == ""
	})
	return out, nil
}

// shares resolves r and counts visitors by dims among the sessions
// matching filters (see breakdown); label names a row by its values.
func (s *Service) shares(ctx context.Context, p auth.Principal, r Request, dims []Dimension, label func(dims []string) Share,
	filters ...Filter) (List[Share], error) {
	sc, err := s.resolve(ctx, p, r)
	if err != nil {
		return List[Share]{}, err
	}
	return s.sharesIn(ctx, sc, dims, label, filters...)
}

// sharesIn is shares of a resolved scope.
func (s *Service) sharesIn(ctx context.Context, sc scope, dims []Dimension, label func(dims []string) Share,
	filters ...Filter) (List[Share], error) {
	var res List[Share]
	rows, err := s.breakdown(ctx, sc, dims, filters...)
	if err != nil {
		return res, err
	}
	res.Rows = make([]Share, len(rows))
	for i, row := range rows {
		res.Rows[i] = label(row.dims)
		res.Rows[i].Visitors, res.Rows[i].Percentage = row.visitors, row.percent
	}
	res.Meta = sc.meta()
	return res, nil
}

// known labels a row by its one value, UnknownLabel when it has none.
func known(dims []string) Share { return Share{Value: labelOr(dims[0], UnknownLabel)} }

// Devices lists visitors by device type.
func (s *Service) Devices(ctx context.Context, p auth.Principal, r Request) (List[Share], error) {
	return s.shares(ctx, p, r, []Dimension{Device}, known)
}

// Browsers lists visitors by browser, optionally of one device type.
func (s *Service) Browsers(ctx context.Context, p auth.Principal, r Request) (List[Share], error) {
	return s.shares(ctx, p, r, []Dimension{Browser}, known)
}

// OperatingSystems lists visitors by operating system, optionally of one device type.
func (s *Service) OperatingSystems(ctx context.Context, p auth.Principal, r Request) (List[Share], error) {
	return s.shares(ctx, p, r, []Dimension{OS}, known)
}

// BrowserVersions lists the visitors of one browser (the request's browser
// filter) by its version, major.minor. No rollup holds versions (they would
// multiply the devices rollup's rows): the report reads sessions, on a
// sample from the funnel's lower threshold on (rawSampleRate).
func (s *Service) BrowserVersions(ctx context.Context, p auth.Principal, r Request) (List[Share], error) {
	return s.rawShares(ctx, p, r, BrowserVersion)
}

// OSVersions lists the visitors of one operating system (the request's os
// filter) by its version, as BrowserVersions does a browser's.
func (s *Service) OSVersions(ctx context.Context, p auth.Principal, r Request) (List[Share], error) {
	return s.rawShares(ctx, p, r, OSVersion)
}

// rawShares is shares by dim of a report no rollup holds, read on a sample
// from rawSampleRate's threshold on.
func (s *Service) rawShares(ctx context.Context, p auth.Principal, r Request, dim Dimension) (List[Share], error) {
	sc, err := s.rawScope(ctx, p, r)
	if err != nil {
		return List[Share]{}, err
	}
	return s.sharesIn(ctx, sc, []Dimension{dim}, known)
}

// rawScope resolves r for a report no rollup holds, which reads raw rows
// whatever the range: on a sample from rawSampleRate's threshold on.
func (s *Service) rawScope(ctx context.Context, p auth.Principal, r Request) (scope, error) {
	sc, err := s.access(ctx, p, r)
	if err != nil {
		return sc, err
	}
	sc.sampled = new(atomic.Bool)
	sc.sample, err = s.rawSampleRate(ctx, sc)
	return sc, err
}

// Countries lists visitors by country; visitors of unknown country are ZZ.
func (s *Service) Countries(ctx context.Context, p auth.Principal, r Request) (List[Share], error) {
	return s.shares(ctx, p, r, []Dimension{Country}, func(dims []string) Share {
		code := labelOr(dims[0], geo.UnknownCountryCode)
		return Share{Value: code, Name: geo.CountryName(code)}
	})
}

// Regions lists the visitors of one country by region (ISO 3166-2).
func (s *Service) Regions(ctx context.Context, p auth.Principal, r Request) (List[Share], error) {
	return s.shares(ctx, p, r, []Dimension{Region, RegionName}, func(dims []string) Share {
		return Share{Value: dims[0], Name: labelOr(dims[1], UnknownLabel)}
	})
}

// Cities lists the visitors of one region by city.
func (s *Service) Cities(ctx context.Context, p auth.Principal, r Request) (List[Share], error) {
	return s.shares(ctx, p, r, []Dimension{City}, known)
}

// Events lists custom events: how often each happened, by how many visitors,
// and its conversion rate.
func (s *Service) Events(ctx context.Context, p auth.Principal, r Request) (List[EventRow], error) {
	var res List[EventRow]
	sc, err := s.resolve(ctx, p, r)
	if err != nil {
		return res, err
	}
	filters := []Filter{customEvents}
	if r.EventName != "" {
		filters = append(filters, Eq(EventName, r.EventName))
	}
	q := sc.query(Events, []Dimension{EventName}, []Metric{EventCount, Visitors}, filters...)
	q.Order, q.Limit = []Order{ByMetric(EventCount), ByDimension(EventName)}, maxRows
	rows, visitors, err := s.rowsAndVisitors(ctx, sc, q)
	if err != nil {
		return res, err
	}
	res.Rows = make([]EventRow, len(rows))
	for i, row := range rows {
		res.Rows[i] = EventRow{Name: row.Dims[0], Count: count(row.Metrics[0]), Visitors: count(row.Metrics[1]),
			ConversionRate: conversionRate(row.Metrics[0], visitors)}
	}
	res.Meta = sc.meta()
	return res, nil
}

// RealtimeAtMost bounds from above the visitors Realtime would count, at a
// fraction of its cost: a count that cannot reach a threshold needs no
// more (spike notifications).
func (s *Service) RealtimeAtMost(ctx context.Context, p auth.Principal, r Request) (int64, error) {
	sc, err := s.resolve(ctx, p, r)
	if err != nil {
		return 0, err
	}
	n, err := s.realtime.AtMost(ctx, sc.site.ID, s.now().UTC())
	if err != nil {
		return 0, errs.StoreDown(err)
	}
	return n, nil
}

// Realtime reports the visitors of the last five minutes.
func (s *Service) Realtime(ctx context.Context, p auth.Principal, r Request) (Realtime, error) {
	sc, err := s.resolve(ctx, p, r)
	if err != nil {
		return Realtime{}, err
	}
	now := s.now().UTC()
	rt, err := s.realtime.Active(ctx, sc.site.ID, now)
	if err != nil {
		// Redis is down: "nobody is here" would be a wrong answer
		return Realtime{}, errs.StoreDown(err)
	}
	return Realtime{Realtime: rt, At: now.Truncate(time.Second)}, nil
}

package stats

import (
	"context"
	"sort"
	"time"

	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/ingest/geo"
	"github.com/tally-analytics/tally/pkg/api"
)

// Sources lists where sessions came from (fixed when a session starts).
func (s *Service) Sources(ctx context.Context, p auth.Principal, r Request) (api.SourcesResponse, error) {
	var res api.SourcesResponse
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
	res.Data.Sources = make([]api.SourceRow, 0, len(rows))
	for _, row := range rows {
		res.Data.Sources = append(res.Data.Sources, api.SourceRow{Source: row.Dims[0], SourceType: row.Dims[1],
			Visitors: count(row.Metrics[0]), Pageviews: count(row.Metrics[1]), BounceRate: percent(row.Metrics[3], row.Metrics[2])})
	}
	res.Meta = sc.meta()
	return res, nil
}

// Campaigns lists the visitors who came with a UTM parameter, by its value
// (utm_campaign unless the request names another).
func (s *Service) Campaigns(ctx context.Context, p auth.Principal, r Request) (api.CampaignsResponse, error) {
	var res api.CampaignsResponse
	sc, err := s.resolve(ctx, p, r)
	if err != nil {
		return res, err
	}
	dim := UTMDimensions[r.UTMBy]
	rows, err := s.breakdown(ctx, sc, []Dimension{dim}, NotEq(dim, ""))
	if err != nil {
		return res, err
	}
	res.Data.By = r.UTMBy
	res.Data.Campaigns = make([]api.CampaignRow, len(rows))
	for i, row := range rows {
		res.Data.Campaigns[i] = api.CampaignRow{Value: row.dims[0], Visitors: row.visitors, Percentage: row.percent}
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

// Devices lists visitors by device type.
func (s *Service) Devices(ctx context.Context, p auth.Principal, r Request) (api.DevicesResponse, error) {
	var res api.DevicesResponse
	sc, err := s.resolve(ctx, p, r)
	if err != nil {
		return res, err
	}
	rows, err := s.breakdown(ctx, sc, []Dimension{Device})
	if err != nil {
		return res, err
	}
	res.Data.Devices = make([]api.DeviceRow, len(rows))
	for i, row := range rows {
		res.Data.Devices[i] = api.DeviceRow{Device: labelOr(row.dims[0], UnknownLabel), Visitors: row.visitors, Percentage: row.percent}
	}
	res.Meta = sc.meta()
	return res, nil
}

// Browsers lists visitors by browser, optionally of one device type.
func (s *Service) Browsers(ctx context.Context, p auth.Principal, r Request) (api.BrowsersResponse, error) {
	var res api.BrowsersResponse
	sc, err := s.resolve(ctx, p, r)
	if err != nil {
		return res, err
	}
	rows, err := s.breakdown(ctx, sc, []Dimension{Browser})
	if err != nil {
		return res, err
	}
	res.Data.Browsers = make([]api.BrowserRow, len(rows))
	for i, row := range rows {
		res.Data.Browsers[i] = api.BrowserRow{Browser: labelOr(row.dims[0], UnknownLabel), Visitors: row.visitors, Percentage: row.percent}
	}
	res.Meta = sc.meta()
	return res, nil
}

// OperatingSystems lists visitors by operating system, optionally of one device type.
func (s *Service) OperatingSystems(ctx context.Context, p auth.Principal, r Request) (api.OperatingSystemsResponse, error) {
	var res api.OperatingSystemsResponse
	sc, err := s.resolve(ctx, p, r)
	if err != nil {
		return res, err
	}
	rows, err := s.breakdown(ctx, sc, []Dimension{OS})
	if err != nil {
		return res, err
	}
	res.Data.OperatingSystems = make([]api.OSRow, len(rows))
	for i, row := range rows {
		res.Data.OperatingSystems[i] = api.OSRow{OS: labelOr(row.dims[0], UnknownLabel), Visitors: row.visitors, Percentage: row.percent}
	}
	res.Meta = sc.meta()
	return res, nil
}

// Countries lists visitors by country; visitors of unknown country are ZZ.
func (s *Service) Countries(ctx context.Context, p auth.Principal, r Request) (api.CountriesResponse, error) {
	var res api.CountriesResponse
	sc, err := s.resolve(ctx, p, r)
	if err != nil {
		return res, err
	}
	rows, err := s.breakdown(ctx, sc, []Dimension{Country})
	if err != nil {
		return res, err
	}
	res.Data.Countries = make([]api.CountryRow, len(rows))
	for i, row := range rows {
		code := labelOr(row.dims[0], geo.UnknownCountryCode)
		res.Data.Countries[i] = api.CountryRow{CountryCode: code, CountryName: geo.CountryName(code), Visitors: row.visitors, Percentage: row.percent}
	}
	res.Meta = sc.meta()
	return res, nil
}

// Regions lists the visitors of one country by region (ISO 3166-2).
func (s *Service) Regions(ctx context.Context, p auth.Principal, r Request) (api.RegionsResponse, error) {
	var res api.RegionsResponse
	sc, err := s.resolve(ctx, p, r)
	if err != nil {
		return res, err
	}
	rows, err := s.breakdown(ctx, sc, []Dimension{Region, RegionName})
	if err != nil {
		return res, err
	}
	res.Data.Regions = make([]api.RegionRow, len(rows))
	for i, row := range rows {
		res.Data.Regions[i] = api.RegionRow{RegionCode: row.dims[0], RegionName: labelOr(row.dims[1], UnknownLabel),
			Visitors: row.visitors, Percentage: row.percent}
	}
	res.Meta = sc.meta()
	return res, nil
}

// Cities lists the visitors of one region by city.
func (s *Service) Cities(ctx context.Context, p auth.Principal, r Request) (api.CitiesResponse, error) {
	var res api.CitiesResponse
	sc, err := s.resolve(ctx, p, r)
	if err != nil {
		return res, err
	}
	rows, err := s.breakdown(ctx, sc, []Dimension{City})
	if err != nil {
		return res, err
	}
	res.Data.Cities = make([]api.CityRow, len(rows))
	for i, row := range rows {
		res.Data.Cities[i] = api.CityRow{City: labelOr(row.dims[0], UnknownLabel), Visitors: row.visitors, Percentage: row.percent}
	}
	res.Meta = sc.meta()
	return res, nil
}

// Events lists custom events: how often each happened, by how many visitors,
// and total_count / all visitors of the range × 100.
func (s *Service) Events(ctx context.Context, p auth.Principal, r Request) (api.EventsResponse, error) {
	var res api.EventsResponse
	sc, err := s.resolve(ctx, p, r)
	if err != nil {
		return res, err
	}
	filters := []Filter{NotEq(IsPageview, 1)}
	if r.EventName != "" {
		filters = append(filters, Eq(EventName, r.EventName))
	}
	q := sc.query(Events, []Dimension{EventName}, []Metric{EventCount, Visitors}, filters...)
	q.Order, q.Limit = []Order{ByMetric(EventCount), ByDimension(EventName)}, maxRows
	var rows []Row
	var total []float64
	err = parallel(ctx,
		func(ctx context.Context) (err error) { rows, err = s.rows(ctx, q); return err },
		func(ctx context.Context) (err error) {
			total, err = s.total(ctx, sc.query(Events, nil, []Metric{Visitors}))
			return err
		})
	if err != nil {
		return res, err
	}
	res.Data.Events = make([]api.EventRow, len(rows))
	for i, row := range rows {
		res.Data.Events[i] = api.EventRow{EventName: row.Dims[0], TotalCount: count(row.Metrics[0]),
			UniqueVisitors: count(row.Metrics[1]), ConversionRate: percent(row.Metrics[0], total[0])}
	}
	res.Meta = sc.meta()
	return res, nil
}

// Realtime reports the visitors of the last five minutes.
func (s *Service) Realtime(ctx context.Context, p auth.Principal, r Request) (api.RealtimeResponse, error) {
	var res api.RealtimeResponse
	sc, err := s.resolve(ctx, p, r)
	if err != nil {
		return res, err
	}
	now := s.now().UTC()
	snap, err := s.realtime.Snapshot(ctx, sc.site.ID, now)
	if err != nil {
		// Redis is down: "nobody is here" would be a wrong answer
		return res, errs.StoreDown(err)
	}
	if snap.CurrentPages == nil {
		snap.CurrentPages = []api.RealtimePage{}
	}
	if snap.CurrentSources == nil {
		snap.CurrentSources = []api.RealtimeSrc{}
	}
	res.Data = snap
	res.Meta.Timestamp = now.Truncate(time.Second)
	return res, nil
}

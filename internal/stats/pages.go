package stats

import (
	"context"

	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/pkg/api"
)

// Pages lists pages by pageviews, a page of the list at a time. A page's
// bounce rate is that of the sessions that entered on it; its average time is
// the mean time from a pageview of it to the next pageview of the session.
func (s *Service) Pages(ctx context.Context, p auth.Principal, r Request) (api.PagesResponse, error) {
	var res api.PagesResponse
	sc, err := s.resolve(ctx, p, r)
	if err != nil {
		return res, err
	}
	isPageview := Eq(IsPageview, 1)
	q := sc.query(Events, []Dimension{Pathname}, []Metric{Pageviews, Visitors}, isPageview)
	q.Order = []Order{ByMetric(Pageviews), ByDimension(Pathname)}
	q.Limit, q.Offset = r.Limit, (r.Page-1)*r.Limit
	// The bounce rates and times on page are read for every page at once,
	// alongside the list: filtering them to the listed pages (IN) costs more
	// than it saves on ClickHouse.
	entriesQ := sc.query(Sessions, []Dimension{EntryPage}, []Metric{SessionCount, Bounces}, NotEq(EntryPage, ""))
	entriesQ.Order, entriesQ.Limit = []Order{ByMetric(SessionCount), ByDimension(EntryPage)}, perPageRows
	timesQ := sc.query(Events, []Dimension{PrevPathname}, []Metric{TimeOnPrevSum, EventCount}, isPageview, NotEq(PrevPathname, ""))
	timesQ.Order, timesQ.Limit = []Order{ByMetric(EventCount), ByDimension(PrevPathname)}, perPageRows
	var page Result
	var entries, times []Row
	err = parallel(ctx,
		func(ctx context.Context) (err error) { page, err = s.run(ctx, q); return err },
		func(ctx context.Context) (err error) { entries, err = s.rows(ctx, entriesQ); return err },
		func(ctx context.Context) (err error) { times, err = s.rows(ctx, timesQ); return err })
	if err != nil {
		return res, err
	}
	rows := page.Rows
	bounce, avgTime := byDim(entries), byDim(times)
	res.Data.Pages = make([]api.Page, 0, len(rows))
	for _, row := range rows {
		page := api.Page{Pathname: row.Dims[0], Pageviews: count(row.Metrics[0]), Visitors: count(row.Metrics[1])}
		if e, ok := bounce[page.Pathname]; ok {
			page.BounceRate = percent(e[1], e[0])
		}
		if t, ok := avgTime[page.Pathname]; ok {
			page.AvgTimeOnPage = round1(ratio(t[0], t[1]))
		}
		res.Data.Pages = append(res.Data.Pages, page)
	}
	res.Data.Pagination = api.Pagination{Total: page.RowsBeforeLimit, Page: r.Page, Limit: r.Limit}
	res.Meta = sc.meta()
	return res, nil
}

// perPageRows bounds the per-page figures read alongside a list of pages (the
// most frequent first): a page beyond them shows no bounce rate or time.
const perPageRows = 100_000

// byDim indexes one-dimension rows by their value.
func byDim(rows []Row) map[string][]float64 {
	m := make(map[string][]float64, len(rows))
	for _, r := range rows {
		m[r.Dims[0]] = r.Metrics
	}
	return m
}

// EntryPages lists the first pages of sessions: entries, the share of all
// sessions, and the bounce rate of those sessions.
func (s *Service) EntryPages(ctx context.Context, p auth.Principal, r Request) (api.EntryPagesResponse, error) {
	var res api.EntryPagesResponse
	sc, err := s.resolve(ctx, p, r)
	if err != nil {
		return res, err
	}
	q := sc.query(Sessions, []Dimension{EntryPage}, []Metric{SessionCount, Bounces}, NotEq(EntryPage, ""))
	q.Order, q.Limit = []Order{ByMetric(SessionCount), ByDimension(EntryPage)}, maxRows
	var rows []Row
	var total []float64
	err = parallel(ctx,
		func(ctx context.Context) (err error) { rows, err = s.rows(ctx, q); return err },
		func(ctx context.Context) (err error) {
			total, err = s.total(ctx, sc.query(Sessions, nil, []Metric{SessionCount}))
			return err
		})
	if err != nil {
		return res, err
	}
	res.Data.EntryPages = make([]api.EntryPage, 0, len(rows))
	for _, row := range rows {
		res.Data.EntryPages = append(res.Data.EntryPages, api.EntryPage{Pathname: row.Dims[0], Entries: count(row.Metrics[0]),
			EntryRate: percent(row.Metrics[0], total[0]), BounceRate: percent(row.Metrics[1], row.Metrics[0])})
	}
	res.Meta = sc.meta()
	return res, nil
}

// ExitPages lists the last pages of sessions: exits, and exits as a share of
// the page's pageviews.
func (s *Service) ExitPages(ctx context.Context, p auth.Principal, r Request) (api.ExitPagesResponse, error) {
	var res api.ExitPagesResponse
	sc, err := s.resolve(ctx, p, r)
	if err != nil {
		return res, err
	}
	q := sc.query(Sessions, []Dimension{ExitPage}, []Metric{SessionCount}, NotEq(ExitPage, ""))
	q.Order, q.Limit = []Order{ByMetric(SessionCount), ByDimension(ExitPage)}, maxRows
	pvQ := sc.query(Events, []Dimension{Pathname}, []Metric{Pageviews}, Eq(IsPageview, 1))
	pvQ.Order, pvQ.Limit = []Order{ByMetric(Pageviews), ByDimension(Pathname)}, perPageRows
	var rows, pv []Row
	err = parallel(ctx,
		func(ctx context.Context) (err error) { rows, err = s.rows(ctx, q); return err },
		func(ctx context.Context) (err error) { pv, err = s.rows(ctx, pvQ); return err })
	if err != nil {
		return res, err
	}
	views := byDim(pv)
	res.Data.ExitPages = make([]api.ExitPage, 0, len(rows))
	for _, row := range rows {
		exits := row.Metrics[0]
		rate := 0.0
		if v, ok := views[row.Dims[0]]; ok {
			// sessions that started in the range can end after it; a page
			// cannot be left more often than it was viewed
			rate = min(percent(exits, v[0]), 100)
		}
		res.Data.ExitPages = append(res.Data.ExitPages, api.ExitPage{Pathname: row.Dims[0], Exits: count(exits), ExitRate: rate})
	}
	res.Meta = sc.meta()
	return res, nil
}

package stats

import (
	"context"
	"math"

	"github.com/tally-analytics/tally/internal/auth"
)

// Pages lists pages by pageviews, a page of the list at a time. A page's
// bounce rate is that of the sessions that entered on it; its average time is
// the mean time from a pageview of it to the next pageview of the session;
// its scroll depth is the mean, over its visitors who reported one, of the
// deepest each scrolled it (Query.scrollDepths).
func (s *Service) Pages(ctx context.Context, p auth.Principal, r Request) (Pages, error) {
	var res Pages
	sc, err := s.resolve(ctx, p, r)
	if err != nil {
		return res, err
	}
	// The bounce rates are read for every entry page at once, alongside the
	// list: filtering them to the listed pages (IN) costs more than it saves
	// on ClickHouse.
	entriesQ := sc.query(Sessions, []Dimension{EntryPage}, []Metric{SessionCount, Bounces}, NotEq(EntryPage, ""))
	entriesQ.Order, entriesQ.Limit = []Order{ByMetric(SessionCount), ByDimension(EntryPage)}, perPageRows
	var list pageList
	var entries []Row
	err = parallel(ctx,
		func(ctx context.Context) (err error) {
			list, err = s.pageList(ctx, sc, r.Limit, (r.Page-1)*r.Limit)
			return err
		},
		func(ctx context.Context) (err error) { entries, err = s.rows(ctx, entriesQ); return err })
	if err != nil {
		return res, err
	}
	paths := make([]string, len(list.pages))
	for i, f := range list.pages {
		paths[i] = f.path
	}
	depths, err := s.scrollDepths(ctx, sc, paths)
	if err != nil {
		return res, err
	}
	bounce := byDim(entries)
	res.Rows = make([]PageRow, len(list.pages))
	for i, f := range list.pages {
		page := PageRow{Path: f.path, Pageviews: count(f.pageviews), Visitors: count(f.visitors),
			AvgTimeOnPage: meanSeconds(f.timeSum, f.stays)}
		if e, ok := bounce[page.Path]; ok {
			page.BounceRate = bounceRate(e[0], e[1])
		}
		if d, ok := depths[page.Path]; ok {
			percent := int64(math.Round(d[0]))
			page.ScrollDepth = &percent
		}
		res.Rows[i] = page
	}
	res.Total, res.Page, res.Limit = list.total, r.Page, r.Limit
	res.Meta = sc.meta()
	return res, nil
}

// scrollDepths reads the scroll depths of paths, by page: the mean percent
// and the visitors who reported one.
func (s *Service) scrollDepths(ctx context.Context, sc scope, paths []string) (map[string][]float64, error) {
	if len(paths) == 0 {
		return nil, nil
	}
	q := sc.query(Engagements, nil, nil)
	var err error
	if q.SamplePercent, err = s.groupSampleRate(ctx, sc); err != nil {
		return nil, err
	}
	sql, args := q.scrollDepths(paths)
	res, err := s.runSQL(ctx, sql, args, 1, 2)
	if err != nil {
		return nil, err
	}
	return byDim(res.Rows), nil
}

// pageList is one page of the pages report before bounce rates.
type pageList struct {
	pages []pageFigures
	total int64 // pages in the range
}

type pageFigures struct {
	path                string
	pageviews, visitors float64
	timeSum, stays      float64 // seconds spent on the page, and the stays they add up
}

// pageList reads the pages with the most pageviews, from the daily rollups
// when the range has no filters and holds a whole UTC day, else from events.
func (s *Service) pageList(ctx context.Context, sc scope, limit, offset int) (pageList, error) {
	if ru, ok := s.planRollup(sc); ok {
		return s.pageListFromRollup(ctx, ru, limit, offset)
	}
	q := sc.query(Events, []Dimension{Pathname}, []Metric{Pageviews, Visitors}, Eq(IsPageview, 1))
	q.Order = []Order{ByMetric(Pageviews), ByDimension(Pathname)}
	q.Limit, q.Offset = limit, offset
	var page Result
	var spent map[string][]float64
	err := parallel(ctx,
		func(ctx context.Context) (err error) { page, err = s.run(ctx, q); return err },
		func(ctx context.Context) (err error) { spent, err = s.pageTimes(ctx, sc); return err })
	if err != nil {
		return pageList{}, err
	}
	list := pageList{total: page.RowsBeforeLimit, pages: make([]pageFigures, 0, len(page.Rows))}
	for _, row := range page.Rows {
		f := pageFigures{path: row.Dims[0], pageviews: row.Metrics[0], visitors: row.Metrics[1]}
		if t, ok := spent[f.path]; ok {
			f.timeSum, f.stays = t[0], t[1]
		}
		list.pages = append(list.pages, f)
	}
	return list, nil
}

// pageTimes reads, by page, the seconds spent on it and the stays they add
// up: the time a pageview row carries for the page before it
// (prev_pathname), of the most frequent perPageRows pages.
func (s *Service) pageTimes(ctx context.Context, sc scope) (map[string][]float64, error) {
	q := sc.query(Events, []Dimension{PrevPathname}, []Metric{TimeOnPrevSum, EventCount}, Eq(IsPageview, 1), NotEq(PrevPathname, ""))
	q.Order, q.Limit = []Order{ByMetric(EventCount), ByDimension(PrevPathname)}, perPageRows
	q.Filters = stayFilters(q)
	times, err := s.rows(ctx, q)
	return byDim(times), err
}

// stayFilters are the filters of q, a query of stays (the time a pageview
// row carries for the page before it, prev_pathname), with a page or host
// filter on the page left rather than on the row's: the stays of /pricing
// are on the pageviews after it, and a visit that crosses hosts leaves a
// page of one on a pageview of the other.
func stayFilters(q Query) []Filter {
	out := make([]Filter, len(q.Filters))
	for i, f := range q.Filters {
		out[i] = stayFilter(q, f)
	}
	return out
}

// stayFilter is f as stayFilters reads it (a group, its filters each).
func stayFilter(q Query, f Filter) Filter {
	switch {
	case len(f.Any) > 0:
		g := Filter{Any: make([]Filter, len(f.Any))}
		for i, x := range f.Any {
			g.Any[i] = stayFilter(q, x)
		}
		return g
	case f.Visits:
		// the visits with (or without) an event on a page: of the visit,
		// not of the stay
	case f.Dim.Name == Pathname.Name:
		f.Dim = PrevPathname
	case f.Dim.Name == Hostname.Name:
		// the host of the page left, by any test (one host or several,
		// a part, a pattern, their negations); a stay's page may have
		// been viewed before the range, in a session that started up to
		// sessionSpan before it
		sample := 0
		if q.sampled() {
			sample = q.SamplePercent
		}
		return Eq(leftOnHost(q.Site, q.From.Add(-sessionSpan), q.To, f, sample), 1)
	}
	return f
}

// planRollup plans reading sc from the rollups; ok is false when it cannot:
// they are off, the scope filters, or it holds no whole UTC day.
func (s *Service) planRollup(sc scope) (pageRollup, bool) {
	if !s.pageRollups || len(sc.req.Filters) > 0 {
		return pageRollup{}, false
	}
	return newPageRollup(sc.site.ID, sc.from, sc.to)
}

// pageListFromRollup lists pages by pageviews from the rollups, then counts
// the visitors of the listed pages only: merging visitor states is the
// costly part, pageviews and times are sums.
func (s *Service) pageListFromRollup(ctx context.Context, ru pageRollup, limit, offset int) (pageList, error) {
	totals, err := s.rollupRows(ctx, 3, func() (string, []any, error) { return ru.totals(limit, offset) })
	if err != nil || len(totals.Rows) == 0 {
		return pageList{total: totals.RowsBeforeLimit}, err
	}
	paths := make([]string, len(totals.Rows))
	for i, row := range totals.Rows {
		paths[i] = row.Dims[0]
	}
	visitors, err := s.rollupRows(ctx, 1, func() (string, []any, error) { return ru.visitors(paths) })
	if err != nil {
		return pageList{}, err
	}
	seen := byDim(visitors.Rows)
	list := pageList{total: totals.RowsBeforeLimit, pages: make([]pageFigures, 0, len(totals.Rows))}
	for _, row := range totals.Rows {
		f := pageFigures{path: row.Dims[0], pageviews: row.Metrics[0], timeSum: row.Metrics[1], stays: row.Metrics[2]}
		if v, ok := seen[f.path]; ok {
			f.visitors = v[0]
		}
		list.pages = append(list.pages, f)
	}
	return list, nil
}

// rollupRows runs a rollup query of one dimension and the given number of metrics.
func (s *Service) rollupRows(ctx context.Context, metrics int, build func() (string, []any, error)) (Result, error) {
	sql, args, err := build()
	if err != nil {
		return Result{}, err
	}
	return s.runSQL(ctx, sql, args, 1, metrics)
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
func (s *Service) EntryPages(ctx context.Context, p auth.Principal, r Request) (List[EntryRow], error) {
	var res List[EntryRow]
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
	res.Rows = make([]EntryRow, len(rows))
	for i, row := range rows {
		res.Rows[i] = EntryRow{Path: row.Dims[0], Entries: count(row.Metrics[0]),
			EntryRate: percent(row.Metrics[0], total[0]), BounceRate: bounceRate(row.Metrics[0], row.Metrics[1])}
	}
	res.Meta = sc.meta()
	return res, nil
}

// ExitPages lists the last pages of sessions: exits, and exits as a share of
// the page's pageviews.
func (s *Service) ExitPages(ctx context.Context, p auth.Principal, r Request) (List[ExitRow], error) {
	var res List[ExitRow]
	sc, err := s.resolve(ctx, p, r)
	if err != nil {
		return res, err
	}
	q := sc.query(Sessions, []Dimension{ExitPage}, []Metric{SessionCount}, NotEq(ExitPage, ""))
	q.Order, q.Limit = []Order{ByMetric(SessionCount), ByDimension(ExitPage)}, maxRows
	var rows, pv []Row
	err = parallel(ctx,
		func(ctx context.Context) (err error) { rows, err = s.rows(ctx, q); return err },
		func(ctx context.Context) (err error) { pv, err = s.pageviewsByPage(ctx, sc); return err })
	if err != nil {
		return res, err
	}
	views := byDim(pv)
	res.Rows = make([]ExitRow, 0, len(rows))
	for _, row := range rows {
		exits := row.Metrics[0]
		rate := 0.0
		if v, ok := views[row.Dims[0]]; ok {
			// sessions that started in the range can end after it; a page
			// cannot be left more often than it was viewed
			rate = min(percent(exits, v[0]), 100)
		}
		res.Rows = append(res.Rows, ExitRow{Path: row.Dims[0], Exits: count(exits), ExitRate: rate})
	}
	res.Meta = sc.meta()
	return res, nil
}

// pageviewsByPage counts the pageviews of every page (the most viewed
// perPageRows), from the rollups when it can.
func (s *Service) pageviewsByPage(ctx context.Context, sc scope) ([]Row, error) {
	if ru, ok := s.planRollup(sc); ok {
		res, err := s.rollupRows(ctx, 3, func() (string, []any, error) { return ru.totals(perPageRows, 0) })
		return res.Rows, err
	}
	q := sc.query(Events, []Dimension{Pathname}, []Metric{Pageviews}, Eq(IsPageview, 1))
	q.Order, q.Limit = []Order{ByMetric(Pageviews), ByDimension(Pathname)}, perPageRows
	return s.rows(ctx, q)
}

package stats

import (
	"cmp"
	"context"

	"github.com/tally-analytics/tally/internal/auth"
)

// Hostnames lists the hosts of the range's pageviews (a site's domain and
// its subdomains), a page of the list at a time: each host's visitors (of
// pageviews on it) and their share of the range's visitors of pageviews,
// as the other breakdowns count shares (a visitor who crossed hosts counts
// in each), and its pageviews. No rollup holds the host: the list reads
// the events, on a sample from the funnel's lower threshold on, as the
// other reports of raw rows do (rawScope).
func (s *Service) Hostnames(ctx context.Context, p auth.Principal, r Request) (Hostnames, error) {
	var res Hostnames
	r.Limit, r.Page = cmp.Or(r.Limit, DefaultLimit), max(r.Page, 1)
	sc, err := s.rawScope(ctx, p, r)
	if err != nil {
		return res, err
	}
	q := sc.query(Events, []Dimension{Hostname}, []Metric{Visitors, Pageviews}, Eq(IsPageview, 1))
	q.Order, q.WithTotals = []Order{ByMetric(Visitors), ByDimension(Hostname)}, true
	q.Limit, q.Offset = r.Limit, (r.Page-1)*r.Limit
	list, err := s.run(ctx, q)
	if err != nil {
		return res, err
	}
	res.Rows = make([]HostnameRow, len(list.Rows))
	for i, row := range list.Rows {
		res.Rows[i] = HostnameRow{Hostname: row.Dims[0], Visitors: count(row.Metrics[0]),
			Percentage: percent(row.Metrics[0], list.Totals[0]), Pageviews: count(row.Metrics[1])}
	}
	res.Total, res.Page, res.Limit = list.RowsBeforeLimit, r.Page, r.Limit
	res.Meta = sc.meta()
	return res, nil
}

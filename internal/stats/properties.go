package stats

import (
	"cmp"
	"context"

	"github.com/tally-analytics/tally/internal/auth"
)

// EventProperties breaks the custom event r.EventName down by its props,
// from the raw events (no rollup holds props), sampled as the events report
// is. Without r.Property it lists the keys the event carried; with one, the
// key's values, the events without it under NoneLabel, each with its
// conversion rate. Rows go by visitors, then events, then key or value;
// r.Limit of them (maxRows when the request has none). Visitor 0 (a
// payment's event without a visitor) counts as an event, never as a
// visitor.
func (s *Service) EventProperties(ctx context.Context, p auth.Principal, r Request) (EventProperties, error) {
	res := EventProperties{Event: r.EventName, Property: r.Property}
	if err := CheckEventProperty(r.EventName, r.Property); err != nil {
		return res, err
	}
	sc, err := s.resolve(ctx, p, r)
	if err != nil {
		return res, err
	}
	dim := PropKey
	if r.Property != "" {
		dim = PropValue(r.Property)
	}
	q := sc.query(Events, []Dimension{dim}, []Metric{EventCount, Visitors}, customEvents, Eq(EventName, r.EventName))
	q.Order, q.Limit = []Order{ByMetric(Visitors), ByMetric(EventCount), ByDimension(dim)}, cmp.Or(r.Limit, maxRows)
	if r.Property == "" {
		rows, err := s.rows(ctx, q)
		if err != nil {
			return res, err
		}
		res.Keys = make([]PropertyKeyRow, len(rows))
		for i, row := range rows {
			res.Keys[i] = PropertyKeyRow{Key: row.Dims[0], Count: count(row.Metrics[0]), Visitors: count(row.Metrics[1])}
		}
	} else {
		rows, visitors, err := s.rowsAndVisitors(ctx, sc, q)
		if err != nil {
			return res, err
		}
		res.Values = make([]PropertyValueRow, len(rows))
		for i, row := range rows {
			res.Values[i] = PropertyValueRow{Value: row.Dims[0], Count: count(row.Metrics[0]), Visitors: count(row.Metrics[1]),
				ConversionRate: conversionRate(row.Metrics[0], visitors)}
		}
	}
	res.Meta = sc.meta()
	return res, nil
}

package wire

import (
	"time"

	"github.com/tally-analytics/tally/internal/stats"
	"github.com/tally-analytics/tally/pkg/api"
)

// Query is the body of POST /api/v2/query.
func Query(r stats.V2Result) api.QueryResponse {
	q := r.Query
	res := api.QueryResponse{
		Results: each(r.Rows, func(row stats.Row) api.QueryResult {
			return api.QueryResult{Metrics: row.Metrics, Dimensions: append([]string{}, row.Dims...)}
		}),
		Meta: api.QueryMeta{Sampled: r.Sampled, Timezone: r.Timezone},
		Query: api.QueryEcho{SiteID: string(q.Site), Metrics: q.Metrics, Dimensions: append([]string{}, q.DimNames...),
			Filters:    append([]any{}, q.RawFilters...),
			DateRange:  []string{r.From.Format(time.RFC3339), r.To.Add(-time.Second).Format(time.RFC3339)},
			OrderBy:    each(r.Order, func(o stats.QueryOrder) []string { return []string{o.Key, direction(o.Desc)} }),
			Pagination: api.QueryPageEcho{Limit: q.Limit, Offset: q.Offset},
			Include:    api.QueryIncludeEcho{TotalRows: q.TotalRows, TimeLabels: q.TimeLabels}},
	}
	if q.TimeLabels {
		res.Meta.TimeLabels = append([]string{}, r.TimeLabels...)
	}
	if q.TotalRows {
		n := r.TotalRows
		res.Meta.TotalRows = &n
	}
	return res
}

func direction(desc bool) string {
	if desc {
		return "desc"
	}
	return "asc"
}

package api

import (
	"encoding/json"
	"math"
)

// QueryRequest is the body of POST /api/v2/query, the Plausible-compatible
// Stats API v2 (a subset: see the README).
type QueryRequest struct {
	SiteID string `json:"site_id"`
	// DateRange is "day", "7d", "30d", "month", "6mo", "12mo" or "year"
	// (each ending today in the site's time zone), or two inclusive dates
	// []string{"2026-05-01", "2026-05-31"}.
	DateRange any `json:"date_range"`
	// Metrics: visitors, visits, pageviews, views_per_visit, bounce_rate,
	// visit_duration, events, percentage (with dimensions), conversion_rate
	// (by event:goal), time_on_page and scroll_depth (by event:page alone).
	Metrics []string `json:"metrics"`
	// Dimensions: at most 3, such as event:page, visit:source, time:day;
	// event:goal alone.
	Dimensions []string `json:"dimensions,omitempty"`
	// Filters all apply: each []any{operator, dimension, []string{values}}
	// with operator is, is_not, contains, contains_not, matches,
	// matches_not, matches_wildcard or matches_wildcard_not; a logical
	// filter []any{"and" or "or", []any{filters}} (no or of ands; see the
	// README) or []any{"not", filter}; or []any{"has_done" or
	// "has_not_done", filter}.
	Filters []any `json:"filters,omitempty"`
	// OrderBy is a list of [metric or dimension, "asc" or "desc"].
	OrderBy    [][]string       `json:"order_by,omitempty"`
	Pagination *QueryPagination `json:"pagination,omitempty"`
	Include    *QueryInclude    `json:"include,omitempty"`
}

// QueryPagination pages the results: Limit 1 to 10,000 (default 10,000),
// Offset from 0.
type QueryPagination struct {
	Limit  *int `json:"limit,omitempty"`
	Offset *int `json:"offset,omitempty"`
}

// QueryInclude asks for extras in the answer's meta.
type QueryInclude struct {
	// TotalRows adds meta.total_rows, the rows of every page.
	TotalRows bool `json:"total_rows,omitempty"`
	// TimeLabels adds meta.time_labels, every unit of the time dimension
	// in the range (rows leave out the empty ones); it needs a time
	// dimension.
	TimeLabels bool `json:"time_labels,omitempty"`
}

// QueryResponse is the answer of POST /api/v2/query.
type QueryResponse struct {
	Results []QueryResult `json:"results"`
	Meta    QueryMeta     `json:"meta"`
	Query   QueryEcho     `json:"query"`
}

// QueryResult is a row: the metrics in the order asked, then the values
// of the dimensions in theirs.
type QueryResult struct {
	Metrics    QueryMetrics `json:"metrics"`
	Dimensions []string     `json:"dimensions"`
}

// QueryMetrics are a row's metrics. A figure that was not measured (a
// page's time_on_page or scroll_depth without a stay or a scroll) is NaN
// here and null in JSON.
type QueryMetrics []float64

// MarshalJSON writes NaN as null, every other figure as encoding/json does.
func (m QueryMetrics) MarshalJSON() ([]byte, error) {
	out := []byte{'['}
	for i, v := range m {
		if i > 0 {
			out = append(out, ',')
		}
		if math.IsNaN(v) {
			out = append(out, "null"...)
			continue
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		out = append(out, b...)
	}
	return append(out, ']'), nil
}

// UnmarshalJSON reads null as NaN.
func (m *QueryMetrics) UnmarshalJSON(b []byte) error {
	var raw []*float64
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	if raw == nil {
		*m = nil
		return nil
	}
	*m = make(QueryMetrics, len(raw))
	for i, v := range raw {
		(*m)[i] = math.NaN()
		if v != nil {
			(*m)[i] = *v
		}
	}
	return nil
}

// QueryMeta tells how the answer was computed.
type QueryMeta struct {
	// Sampled is true when it read a sample of visitors (counts scaled back).
	Sampled bool `json:"sampled"`
	// Timezone is the site's, whose days the range and the time dimensions are.
	Timezone string `json:"timezone"`
	// TotalRows is the rows of every page, when include.total_rows asked.
	TotalRows *int `json:"total_rows,omitempty"`
	// TimeLabels is every unit of the time dimension the range touches,
	// as the rows label them, when include.time_labels asked.
	TimeLabels []string `json:"time_labels,omitempty"`
}

// QueryEcho is the query as understood: the date range as the first and
// last instants it covers (ISO 8601 with the site's offset), the order and
// page applied.
type QueryEcho struct {
	SiteID     string           `json:"site_id"`
	DateRange  []string         `json:"date_range"`
	Metrics    []string         `json:"metrics"`
	Dimensions []string         `json:"dimensions"`
	Filters    []any            `json:"filters"`
	OrderBy    [][]string       `json:"order_by"`
	Pagination QueryPageEcho    `json:"pagination"`
	Include    QueryIncludeEcho `json:"include"`
}

// QueryPageEcho is the page applied.
type QueryPageEcho struct {
	Limit  int `json:"limit"`
	Offset int `json:"offset"`
}

// QueryIncludeEcho is the extras applied.
type QueryIncludeEcho struct {
	TotalRows  bool `json:"total_rows"`
	TimeLabels bool `json:"time_labels"`
}

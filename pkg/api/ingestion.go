package api

// IngestionResponse is GET /api/v1/stats/ingestion: a site's tracking
// health — what was counted, what was recognised as bots, and what was
// refused and why.
type IngestionResponse struct {
	Data IngestionReport `json:"data"`
	Meta StatsMeta       `json:"meta"`
}

// IngestionReport holds the counts of the range, in all and by day.
type IngestionReport struct {
	Totals IngestionCounts `json:"totals"`
	// BotsByCategory splits totals.bots.
	BotsByCategory BotTraffic `json:"bots_by_category"`
	// RefusedByReason splits totals.refused: every reason, the largest
	// count first (ties in the order of the documentation).
	RefusedByReason []RefusalCount `json:"refused_by_reason"`
	// Timeseries has one point per day of the range.
	Timeseries []IngestionPoint `json:"timeseries"`
}

// IngestionCounts are the events of a span: accepted and counted in the
// statistics, accepted and filtered as bots, refused, and excluded —
// answered as if stored, but kept out by the site's exclusions.
type IngestionCounts struct {
	Accepted int64 `json:"accepted"`
	Bots     int64 `json:"bots"`
	Refused  int64 `json:"refused"`
	Excluded int64 `json:"excluded"`
}

// IngestionPoint is one day's counts.
type IngestionPoint struct {
	Date     string `json:"date"`
	Accepted int64  `json:"accepted"`
	Bots     int64  `json:"bots"`
	Refused  int64  `json:"refused"`
	Excluded int64  `json:"excluded"`
}

// RefusalCount is the number of events refused for one reason:
// invalid_payload, invalid_props, body_too_large, host_mismatch,
// rate_limited, over_wal_budget or unavailable.
type RefusalCount struct {
	Reason string `json:"reason"`
	Count  int64  `json:"count"`
}

// CSVRows is the daily series (date, accepted, bots, refused, excluded); the split by
// category and reason is in the JSON answer only.
func (r IngestionResponse) CSVRows() any { return r.Data.Timeseries }

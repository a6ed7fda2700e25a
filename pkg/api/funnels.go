package api

import "time"

// FunnelStep is a step of a funnel: {"type": "pageview", "page_path":
// "/pricing"} (page_path a goal's pattern: * and **, a hash route after #)
// or {"type": "custom_event", "event_name": "Signup", "props": {"plan":
// "pro"}} (props optional; an event must carry every one, values compared
// as text).
type FunnelStep struct {
	Type      string            `json:"type"`
	PagePath  string            `json:"page_path,omitempty"`
	EventName string            `json:"event_name,omitempty"`
	Props     map[string]string `json:"props,omitempty"`
}

// FunnelRequest is the body of POST /api/v1/funnels and PUT
// /api/v1/funnels/:id: 2 to 8 steps, and the window in which a visitor goes
// from the first to the last (default 86,400 seconds, at most 30 days).
type FunnelRequest struct {
	SiteID        string       `json:"site_id"`
	Name          string       `json:"name"`
	Steps         []FunnelStep `json:"steps"`
	WindowSeconds *int64       `json:"window_seconds,omitempty"`
}

// Funnel is a funnel as the API returns it.
type Funnel struct {
	FunnelID      string       `json:"funnel_id"`
	SiteID        string       `json:"site_id"`
	Name          string       `json:"name"`
	Steps         []FunnelStep `json:"steps"`
	WindowSeconds int64        `json:"window_seconds"`
	CreatedAt     time.Time    `json:"created_at"`
}

// FunnelResponse wraps one funnel.
type FunnelResponse struct {
	Data Funnel `json:"data"`
}

// FunnelsResponse lists a site's funnels.
type FunnelsResponse struct {
	Data []Funnel `json:"data"`
}

// FunnelReportStep is one step of the funnel report. Visitors reached the
// step: they did steps 1 to step in order within the window, step 1 in the
// range. ConversionRate is visitors ÷ step 1's × 100; Dropoff and
// DropoffRate (÷ the previous step's visitors × 100) are 0 for step 1;
// MedianSecondsFromPrevious is null for step 1 and for a step nobody
// reached; Revenue is the net revenue (minor units of the report's
// currency) paid in the range by the visitors who reached the step.
type FunnelReportStep struct {
	Step                      int      `json:"step"`
	Label                     string   `json:"label"`
	Visitors                  int64    `json:"visitors"`
	ConversionRate            float64  `json:"conversion_rate"`
	Dropoff                   int64    `json:"dropoff"`
	DropoffRate               float64  `json:"dropoff_rate"`
	MedianSecondsFromPrevious *float64 `json:"median_seconds_from_previous"`
	Revenue                   int64    `json:"revenue"`
}

// FunnelReport is data of GET /api/v1/stats/funnel.
type FunnelReport struct {
	FunnelID      string `json:"funnel_id"`
	Name          string `json:"name"`
	WindowSeconds int64  `json:"window_seconds"`
	// ConversionRate is the last step's visitors ÷ the first step's × 100.
	ConversionRate float64 `json:"conversion_rate"`
	// Currency is the site's base currency, the currency of every revenue.
	Currency string             `json:"currency"`
	Steps    []FunnelReportStep `json:"steps"`
}

// FunnelReportResponse is the body of GET /api/v1/stats/funnel.
type FunnelReportResponse struct {
	Data FunnelReport `json:"data"`
	Meta StatsMeta    `json:"meta"`
}

// CSVRows is the funnel's steps.
func (r FunnelReportResponse) CSVRows() any { return r.Data.Steps }

package api

import "time"

// GoalRequest is the body of POST /api/v1/goals and PUT /api/v1/goals/:id.
// page_path (pageview goals) may use * for one path segment and ** for any
// depth, and on a site that records hash routes name a route after one #
// (/app#/checkout/**; without #, a path counts whatever its route), as
// excluded pages do; event_name is for custom_event goals.
type GoalRequest struct {
	SiteID    string `json:"site_id"`
	GoalName  string `json:"goal_name"`
	GoalType  string `json:"goal_type"`
	PagePath  string `json:"page_path,omitempty"`
	EventName string `json:"event_name,omitempty"`
}

// Goal is a goal as the API returns it.
type Goal struct {
	GoalID    string    `json:"goal_id"`
	SiteID    string    `json:"site_id"`
	GoalName  string    `json:"goal_name"`
	GoalType  string    `json:"goal_type"`
	PagePath  string    `json:"page_path,omitempty"`
	EventName string    `json:"event_name,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

// GoalResponse wraps one goal.
type GoalResponse struct {
	Data Goal `json:"data"`
}

// GoalsResponse lists a site's goals.
type GoalsResponse struct {
	Data []Goal `json:"data"`
}

// Conversion is the spec's goal conversion record.
type Conversion struct {
	GoalID           string `json:"goal_id"`
	GoalName         string `json:"goal_name"`
	GoalType         string `json:"goal_type"`
	TotalConversions int64  `json:"total_conversions"`
	UniqueVisitors   int64  `json:"unique_visitors"`
	// ConversionRate is total_conversions / meta.total_unique_visitors × 100
	// (the spec's formula: a goal completed repeatedly can pass 100).
	ConversionRate float64 `json:"conversion_rate"`
	// VisitorConversionRate is unique_visitors / total unique visitors × 100.
	VisitorConversionRate float64 `json:"visitor_conversion_rate"`
	// PreviousPeriodRate is the conversion rate of the previous period of
	// equal length; ChangePercent the percent change from it (null when it was 0).
	PreviousPeriodRate float64  `json:"previous_period_rate"`
	ChangePercent      *float64 `json:"change_percent"`
}

// ConversionsMeta describes a conversions report.
type ConversionsMeta struct {
	SiteID              string `json:"site_id"`
	DateFrom            string `json:"date_from"`
	DateTo              string `json:"date_to"`
	TotalUniqueVisitors int64  `json:"total_unique_visitors"`
}

// ConversionsResponse is the body of GET /api/v1/goals/conversions.
type ConversionsResponse struct {
	Data []Conversion    `json:"data"`
	Meta ConversionsMeta `json:"meta"`
}

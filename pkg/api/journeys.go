package api

import "strings"

// JourneyStep joins the pages of a path where one text holds them (the
// CSV's path column).
const JourneyStep = " → "

// Journey is a path of the journeys report: its pages in order (runs of
// one page made one step), the sessions that took it and their visitors,
// and percentage = sessions ÷ the report's sessions (data.sessions) × 100.
type Journey struct {
	Pages      []string `json:"pages"`
	Sessions   int64    `json:"sessions"`
	Visitors   int64    `json:"visitors"`
	Percentage float64  `json:"percentage"`
}

// Journeys is data of GET /api/v1/stats/journeys: the most common paths,
// and the sessions with a path of two pages or more and their visitors
// (every path's, not only those listed).
type Journeys struct {
	Journeys []Journey `json:"journeys"`
	Sessions int64     `json:"sessions"`
	Visitors int64     `json:"visitors"`
}

// JourneysMeta adds the report's parameters: the most pages a path has,
// and the pages the paths begin and end at ("" for none).
type JourneysMeta struct {
	StatsMeta
	Steps int    `json:"steps"`
	Start string `json:"start,omitempty"`
	End   string `json:"end,omitempty"`
}

// JourneysResponse is the body of GET /api/v1/stats/journeys.
type JourneysResponse struct {
	Data Journeys     `json:"data"`
	Meta JourneysMeta `json:"meta"`
}

// journeyCSV is a path as a CSV row: its pages joined by JourneyStep.
type journeyCSV struct {
	Path       string  `json:"path"`
	Sessions   int64   `json:"sessions"`
	Visitors   int64   `json:"visitors"`
	Percentage float64 `json:"percentage"`
}

// CSVRows is the list of paths, each with its pages in one column (path).
func (r JourneysResponse) CSVRows() any {
	rows := make([]journeyCSV, len(r.Data.Journeys))
	for i, j := range r.Data.Journeys {
		rows[i] = journeyCSV{Path: strings.Join(j.Pages, JourneyStep), Sessions: j.Sessions, Visitors: j.Visitors, Percentage: j.Percentage}
	}
	return rows
}

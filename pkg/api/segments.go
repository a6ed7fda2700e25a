package api

import "time"

// SegmentRequest is the body of POST /api/v1/sites/:id/segments.
type SegmentRequest struct {
	// Name is 1 to 64 characters, unique among the site's segments
	// whatever its case.
	Name string `json:"name"`
	// Filters are the stats API's filter parameters and their values, at
	// least one: {"country": "DE", "props[plan]": "pro"}.
	Filters map[string]string `json:"filters"`
}

// SegmentChange is the body of PATCH /api/v1/sites/:id/segments/:segment_id:
// what is left out stays as it is. Filters, when set, replace the
// segment's (an empty map is sent, and refused).
type SegmentChange struct {
	Name    *string           `json:"name,omitempty"`
	Filters map[string]string `json:"filters,omitzero"`
}

// Segment is a site's saved set of filters; a stats request applies it
// with segment=<id>.
type Segment struct {
	ID     string `json:"id"`
	SiteID string `json:"site_id"`
	Name   string `json:"name"`
	// Filters are as the stats API normalises them (country codes
	// upper-cased, device classes spelt Desktop, Mobile…).
	Filters   map[string]string `json:"filters"`
	CreatedAt time.Time         `json:"created_at"`
}

// SegmentResponse answers the creation (201) and a change (200) of a
// segment.
type SegmentResponse struct {
	Data Segment `json:"data"`
}

// SegmentsResponse lists a site's segments by name.
type SegmentsResponse struct {
	Data []Segment `json:"data"`
}

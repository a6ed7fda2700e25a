package model

import "time"

// SegmentID identifies a segment (a UUID string).
type SegmentID string

// Segment is a named, saved set of a site's dashboard filters: applied, its
// filters count as if they were given by hand.
type Segment struct {
	ID     SegmentID
	SiteID SiteID
	Name   string
	// Filters are the stats API's filter parameters and their values
	// (country: DE, props[plan]: pro), validated and normalised as the
	// stats API reads them.
	Filters map[string]string
	// CreatedBy is the user who made it; empty once their account is gone.
	CreatedBy UserID
	CreatedAt time.Time
}

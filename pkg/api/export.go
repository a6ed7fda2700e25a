package api

import "time"

// ExportedEvent is one record of the raw event export (GET
// /api/v1/export/events): a stored pageview or custom event, as a line of
// NDJSON or a row of CSV (columns in this order, named by the JSON fields).
//
// Text that tally does not know (a direct visit's UTM fields, the city of
// an address not in the GeoIP database) is an empty string. No record holds
// an IP address or a user agent: tally stores neither.
type ExportedEvent struct {
	EventID string `json:"event_id"`
	// Timestamp is when the event happened, UTC, to the second.
	Timestamp time.Time `json:"timestamp"`
	// Name is "pageview" or the custom event's name.
	Name     string `json:"name"`
	Pathname string `json:"pathname"`
	// Hostname is the host the event happened on (without "www."): the
	// event's own, where the visit's other fields are the visit's.
	Hostname string `json:"hostname"`
	// Referrer is the referring page (host and path, no query string) of
	// the visit; empty for direct visits and internal navigation.
	Referrer string `json:"referrer"`
	// Source and SourceType are the visit's source as the sources report
	// names it ("Google", "search"; "Direct / None", "direct").
	Source         string `json:"source"`
	SourceType     string `json:"source_type"`
	UTMSource      string `json:"utm_source"`
	UTMMedium      string `json:"utm_medium"`
	UTMCampaign    string `json:"utm_campaign"`
	UTMContent     string `json:"utm_content"`
	UTMTerm        string `json:"utm_term"`
	Device         string `json:"device"`
	Browser        string `json:"browser"`
	BrowserVersion string `json:"browser_version"`
	OS             string `json:"os"`
	OSVersion      string `json:"os_version"`
	// Country is an ISO 3166-1 alpha-2 code, Region an ISO 3166-2 code.
	Country    string `json:"country"`
	Region     string `json:"region"`
	RegionName string `json:"region_name"`
	City       string `json:"city"`
	// Props are the custom event's properties, values as text (numbers and
	// booleans as they were sent: "3", "true"); {} when none.
	Props map[string]string `json:"props"`
	// RevenueAmount (minor units of RevenueCurrency: 4999 = 49.99 EUR) and
	// RevenueCurrency are null when the event carries no revenue.
	RevenueAmount   *int64  `json:"revenue_amount"`
	RevenueCurrency *string `json:"revenue_currency"`
	// SessionID and VisitorID are opaque (16 hexadecimal digits of the
	// hashes tally stores): equal ids are the same session or visitor. They
	// hold no address or user agent.
	SessionID string `json:"session_id"`
	VisitorID string `json:"visitor_id"`
}

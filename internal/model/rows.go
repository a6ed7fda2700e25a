package model

import (
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

// Source types of the spec.
const (
	SourceSearch   = "search"
	SourceSocial   = "social"
	SourceDirect   = "direct"
	SourceReferral = "referral"
)

// Attribution is what tally knows about where a visit came from and who made
// it (never personal data): it is fixed when a session starts and copied onto
// every event and session row of that session.
type Attribution struct {
	// Hostname is the host of the event's URL (StoredHost).
	Hostname       string `json:"hn,omitempty"`
	Referrer       string `json:"rf,omitempty"` // referrer host + path, no query string
	ReferrerSource string `json:"rs,omitempty"`
	SourceType     string `json:"st,omitempty"`
	UTMSource      string `json:"us,omitempty"`
	UTMMedium      string `json:"um,omitempty"`
	UTMCampaign    string `json:"uc,omitempty"`
	UTMContent     string `json:"ut,omitempty"`
	UTMTerm        string `json:"uk,omitempty"`
	Device         string `json:"dv,omitempty"`
	Browser        string `json:"br,omitempty"`
	BrowserVersion string `json:"bv,omitempty"`
	OS             string `json:"os,omitempty"`
	OSVersion      string `json:"ov,omitempty"`
	CountryCode    string `json:"cc,omitempty"`
	RegionCode     string `json:"rc,omitempty"`
	RegionName     string `json:"rn,omitempty"`
	City           string `json:"ci,omitempty"`
}

// URLHost is a URL's host as tally compares hosts: in lower case, an
// internationalised name in punycode (as browsers send it, and as a site's
// domain and its excluded hosts are kept), without the trailing dot of a
// fully qualified name. A name punycode cannot spell is kept in lower case.
func URLHost(host string) string {
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	if strings.IndexFunc(h, func(r rune) bool { return r > 127 }) >= 0 {
		if ascii, err := idna.Lookup.ToASCII(h); err == nil {
			h = ascii
		}
	}
	return h
}

// StoredHost is a URL's host as events store it, and as the hostname
// filter compares it: URLHost without a leading "www." (the site's own
// host, as its domain names it).
func StoredHost(host string) string { return strings.TrimPrefix(URLHost(host), "www.") }

// PageviewName is the name of pageview events; custom events may not use it.
const PageviewName = "pageview"

// Limits of an event's props (spec "Limits"), which a funnel step's
// required props share, and of a custom event's name.
const (
	MaxProps        = 10
	MaxPropKeyLen   = 50
	MaxPropValueLen = 2000
	MaxEventNameLen = 120
)

// EventNameFits reports whether name has the size of a custom event's
// name: 1 to MaxEventNameLen characters of UTF-8. Ingestion refuses any
// other, so a report asked for another can only be empty.
func EventNameFits(name string) bool {
	return name != "" && utf8.ValidString(name) && utf8.RuneCountInString(name) <= MaxEventNameLen
}

// PropKeyFits reports whether k has the size of a prop's key: 1 to
// MaxPropKeyLen characters of UTF-8.
func PropKeyFits(k string) bool {
	return k != "" && utf8.ValidString(k) && utf8.RuneCountInString(k) <= MaxPropKeyLen
}

// EventRow is one row of the ClickHouse events table: a pageview or a custom event.
type EventRow struct {
	SiteID    SiteID    `json:"site"`
	Timestamp time.Time `json:"ts"`
	EventID   string    `json:"id"`
	Name      string    `json:"name"` // "pageview" or the custom event's name
	VisitorID uint64    `json:"vid"`
	// StableVisitor is set when VisitorID is the hash of the client's own
	// id (the tracker's analytics_vid, a sender's visitor_id), which the
	// visitor keeps from day to day, rather than of the day's salt.
	StableVisitor bool   `json:"stable,omitempty"`
	SessionID     uint64 `json:"sid"`
	Pathname      string `json:"path"`
	// PrevPathname and TimeOnPrev describe the session's previous pageview when
	// this row is a later pageview of the same session: the page the visitor
	// left and the seconds spent on it (the source of avg_time_on_page).
	PrevPathname string      `json:"ppath,omitempty"`
	TimeOnPrev   uint32      `json:"ptime,omitempty"`
	Attribution  Attribution `json:"attr"`
	PropKeys     []string    `json:"pk,omitempty"`
	PropValues   []string    `json:"pv,omitempty"`
	// RevenueAmount is in minor units of RevenueCurrency; zero when no revenue.
	RevenueAmount   int64  `json:"ra,omitempty"`
	RevenueCurrency string `json:"rcur,omitempty"`
}

// Pageview reports whether the row is a pageview (else a custom event).
func (e *EventRow) Pageview() bool { return e.Name == PageviewName }

// SessionRow is one row of the ClickHouse sessions table
// (VersionedCollapsingMergeTree): Sign +1 states a version of the session,
// Sign -1 cancels that version.
type SessionRow struct {
	SiteID      SiteID      `json:"site"`
	SessionID   uint64      `json:"sid"`
	VisitorID   uint64      `json:"vid"`
	Sign        int8        `json:"sign"`
	Version     uint32      `json:"ver"`
	Start       time.Time   `json:"start"`
	End         time.Time   `json:"end"`
	Pageviews   uint32      `json:"pv"`
	Events      uint32      `json:"ev"`
	IsBounce    bool        `json:"bounce"`
	EntryPage   string      `json:"entry"`
	ExitPage    string      `json:"exit"`
	Attribution Attribution `json:"attr"`
}

// Bounce is the rule of a bounce: a session of one pageview and no custom
// event. The bounce rate of the statistics is the share of such sessions.
func Bounce(pageviews, events uint32) bool { return pageviews == 1 && events == 0 }

// Duration is the session's length in seconds.
func (s SessionRow) Duration() uint32 {
	d := s.End.Sub(s.Start)
	if d < 0 {
		return 0
	}
	return uint32(d / time.Second)
}

// BotEventRow is one row of the ClickHouse bot_events table: traffic that was
// recognised as automated and filtered out of the statistics.
type BotEventRow struct {
	SiteID    SiteID    `json:"site"`
	Timestamp time.Time `json:"ts"`
	EventID   string    `json:"id"`
	Reason    string    `json:"reason"`
}

// EngagementRow is one row of the ClickHouse engagements table: how far a
// visitor scrolled a page, as the tracking script reports it when the page
// is hidden or left. It belongs to no session and counts as no event: the
// pages report reads it for the page's scroll depth.
type EngagementRow struct {
	SiteID    SiteID    `json:"site"`
	Timestamp time.Time `json:"ts"`
	EventID   string    `json:"id"`
	VisitorID uint64    `json:"visitor"`
	Pathname  string    `json:"path"`
	// ScrollDepth is the share of the page's height, in percent (0–100),
	// that the visitor had seen at most.
	ScrollDepth uint8 `json:"sd"`
}

// Device classes: what EventRow.Device holds ("" when unknown) and the
// device filter accepts.
const (
	DeviceDesktop = "Desktop"
	DeviceMobile  = "Mobile"
	DeviceTablet  = "Tablet"
	DeviceTV      = "TV"
	DeviceConsole = "Console"
)

// DeviceClasses lists the device classes.
var DeviceClasses = []string{DeviceDesktop, DeviceMobile, DeviceTablet, DeviceTV, DeviceConsole}

// Bot categories: what BotEventRow.Reason holds and reports group bots by.
const (
	BotCrawler    = "crawler"    // search engines, SEO tools, archivers, previews, feed readers
	BotAIAgent    = "ai_agent"   // AI crawlers and assistants fetching pages
	BotMonitor    = "monitor"    // uptime and performance checks
	BotAutomation = "automation" // headless browsers and test drivers
	BotOther      = "other"      // HTTP libraries, scanners, probes, requests no browser sends
)

// BotCategory is the category of a stored reason. Rows written before
// categories hold the detector's name ("crawlerdetect", "spider": crawlers)
// or "no_user_agent" (other).
func BotCategory(reason string) string {
	switch reason {
	case BotCrawler, BotAIAgent, BotMonitor, BotAutomation, BotOther:
		return reason
	case "no_user_agent":
		return BotOther
	default:
		return BotCrawler
	}
}

// Record is what one accepted event writes: the event row (or a bot event
// row). It is the unit of the write-ahead log; the write buffer gives the
// event its session when it takes the record to ClickHouse.
type Record struct {
	Event *EventRow    `json:"e,omitempty"`
	Bot   *BotEventRow `json:"b,omitempty"`
	// Engagement is a page's scroll depth; a record holds it alone.
	Engagement *EngagementRow `json:"g,omitempty"`
	// NoSession marks an event that is not part of a visit: the event a
	// payment writes for the Events report.
	NoSession bool `json:"-"`
	// BaseCurrency is the site's base currency when the event was accepted,
	// for the payments ledger when the event carries revenue.
	BaseCurrency string `json:"-"`
	// ClientRevenue marks revenue the tracking script reported (unsigned),
	// which the ledger keeps apart from verified revenue.
	ClientRevenue bool `json:"-"`
	// Resolved marks a record of an earlier release, whose event already
	// carries its session and whose session rows are in Sessions.
	Resolved bool         `json:"-"`
	Sessions []SessionRow `json:"s,omitempty"`
}

// NeedsSession reports whether the write buffer must give the record's
// event a session.
func (r *Record) NeedsSession() bool { return r.Event != nil && !r.NoSession && !r.Resolved }

// Key identifies the row among all rows of the sessions table.
func (s SessionRow) Key() SessionRowKey {
	return SessionRowKey{SessionID: s.SessionID, Version: s.Version, Sign: s.Sign}
}

// SessionRowKey identifies one row of the sessions table.
type SessionRowKey struct {
	SessionID uint64
	Version   uint32
	Sign      int8
}

// Span bounds a set of rows by site and time, so that looking for them reads
// only the parts of a table they can be in.
type Span struct {
	Sites    []SiteID
	From, To time.Time
}

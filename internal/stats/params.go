package stats

import (
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tally-analytics/tally/internal/accounts"
	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/model"
)

// Limits of the stats parameters.
const (
	DefaultLimit  = 100
	MaxLimit      = 1000
	MaxPage       = 100_000
	MaxRangeYears = 5
	maxParamLen   = 256
	// FirstYear and LastYear bound a report's dates. ClickHouse's DateTime
	// ends in February 2106: a later day could hold no event, and a range
	// reaching it would read as empty rather than be refused.
	FirstYear = 2000
	LastYear  = 2105
	// DefaultUTMBy is the UTM parameter of the campaigns report when the
	// request names none.
	DefaultUTMBy = "utm_campaign"
)

// Request is a validated set of stats parameters.
type Request struct {
	SiteID model.SiteID
	// DateFrom and DateTo are inclusive calendar dates (at 00:00 UTC; only
	// the date counts). The range is [DateFrom 00:00, DateTo+1 00:00) in the
	// time zone.
	DateFrom, DateTo time.Time
	// Timezone is the IANA name asked for; empty means the site's.
	Timezone string
	Compare  bool
	// CompareYear compares with the same dates a year before rather than
	// with the period of equal length before (compare=year).
	CompareYear bool
	// Interval is the unit of the overview's series (Intervals); empty
	// is IntervalDay. It is the unit of the retention report's cohorts too.
	Interval string
	Limit    int
	Page     int
	// Filters from the query string (FilterParams), applied to every
	// query of the report.
	Filters []Filter
	// EventName narrows the events report; it is the event of the
	// event-properties report.
	EventName string
	// Property is the prop key the event-properties report breaks its
	// event down by; "" lists the event's keys.
	Property string
	// Breakdown and Attribution (model) of the revenue report.
	Breakdown   string
	Attribution string
	// UTMBy is the UTM parameter of the campaigns report (utm_campaign,
	// utm_source, utm_medium or utm_content).
	UTMBy string
	// FunnelID is the funnel of the funnel report.
	FunnelID model.FunnelID
	// Steps is the most pages a path of the journeys report has;
	// StartPage and EndPage, when set, are a page its paths begin and end
	// at (see Journeys).
	Steps              int
	StartPage, EndPage string
	// Segment is the saved segment whose filters apply beside Filters
	// (see CombineFilters); "" for none.
	Segment model.SegmentID
	// required is the filter parameter the endpoint cannot do without
	// (Endpoint.Require), given by hand or by the segment.
	required string
}

// UTMDimensions are the dimensions of the campaigns report, by parameter name.
var UTMDimensions = map[string]Dimension{
	"utm_campaign": UTMCampaign, "utm_source": UTMSource, "utm_medium": UTMMedium, "utm_content": UTMContent,
}

var (
	countryCode = regexp.MustCompile(`^[A-Z]{2}$`)
	regionCode  = regexp.MustCompile(`^[A-Z]{2}-[A-Z0-9]{1,3}$`)
)

// FilterParams are the query parameters that filter every report: a report
// then counts only the visits (or, for pathname and hostname, the pageviews
// and events of that page or host, and the visits with one) that match all
// of them.
var FilterParams = []struct {
	Param string
	Dim   Dimension
	parse func(string) (string, bool)
	rule  string
}{
	{"utm_source", UTMSource, plain, "1 to 256 bytes"},
	{"utm_medium", UTMMedium, plain, "1 to 256 bytes"},
	{"utm_campaign", UTMCampaign, plain, "1 to 256 bytes"},
	{"utm_content", UTMContent, plain, "1 to 256 bytes"},
	{"source", Source, plain, "1 to 256 bytes"},
	{"channel", Channel, canonicalChannel, "a channel: " + strings.Join(Channels, ", ")},
	{"pathname", Pathname, pagePath, "a path starting with /"},
	{"hostname", Hostname, hostName, "a host name such as blog.example.com, without scheme, path or port"},
	{"country", Country, countryParam, "an ISO 3166-1 alpha-2 code such as US"},
	{"region", Region, regionParam, "an ISO 3166-2 code such as US-CA"},
	{"city", City, plain, "1 to 256 bytes"},
	{"device", Device, canonicalDevice, "Desktop, Mobile, Tablet, TV or Console"},
	{"browser", Browser, plain, "1 to 256 bytes"},
	{"browser_version", BrowserVersion, plain, "1 to 256 bytes"},
	{"os", OS, plain, "1 to 256 bytes"},
	{"os_version", OSVersion, plain, "1 to 256 bytes"},
}

func plain(s string) (string, bool) { return s, s != "" && len(s) <= maxParamLen }

func pagePath(s string) (string, bool) {
	return s, strings.HasPrefix(s, "/") && len(s) <= 1024
}

// hostName reads a host name as events store it (model.StoredHost): a
// bare host by the rule of a site's domain (accounts.NormalizeDomain: lower
// case, punycode; no scheme, path or port), without a leading "www.".
// Anything else names no event's host, and is refused rather than matched
// by none.
func hostName(s string) (string, bool) {
	d, err := accounts.NormalizeDomain(s)
	if err != nil {
		return "", false
	}
	return model.StoredHost(d), true
}

func countryParam(s string) (string, bool) {
	s = strings.ToUpper(strings.TrimSpace(s))
	return s, countryCode.MatchString(s)
}

func regionParam(s string) (string, bool) {
	s = strings.ToUpper(strings.TrimSpace(s))
	return s, regionCode.MatchString(s)
}

// ParseFilters reads the filters of FilterParams from a query string, then
// its prop filters (props[key]=value).
func ParseFilters(v url.Values) ([]Filter, error) {
	var out []Filter
	for _, f := range FilterParams {
		val, ok := v[f.Param]
		if !ok {
			continue
		}
		clean, valid := f.parse(val[0])
		if !valid {
			return nil, errs.InvalidField(f.Param, "must be %s", f.rule)
		}
		out = append(out, Eq(f.Dim, clean))
	}
	props, err := propFilters(v)
	return append(out, props...), err
}

// propParamPrefix starts the query parameter of a prop filter,
// props[plan]=pro (OpenAPI's deepObject style).
const propParamPrefix = "props["

// PropParam is the query parameter of a filter on the prop key.
func PropParam(key string) string { return propParamPrefix + key + "]" }

// MaxPropFilters is how many props one request may filter by.
const MaxPropFilters = 3

// propFilters reads the prop filters of a query string, in the order of
// their keys. A value is compared as ingestion stores it: text as sent,
// numbers in plain decimals, booleans true or false.
func propFilters(v url.Values) ([]Filter, error) {
	var keys []string
	for param := range v {
		key, ok := strings.CutPrefix(param, propParamPrefix)
		if !ok {
			continue
		}
		if key, ok = strings.CutSuffix(key, "]"); !ok || !model.PropKeyFits(key) {
			return nil, errs.InvalidField(param, "a prop filter is props[key]=value, with a key of 1 to %d characters", model.MaxPropKeyLen)
		}
		keys = append(keys, key)
	}
	if len(keys) > MaxPropFilters {
		return nil, errs.InvalidField("props", "at most %d prop filters", MaxPropFilters)
	}
	slices.Sort(keys)
	out := make([]Filter, 0, len(keys))
	for _, key := range keys {
		param := PropParam(key)
		val := v[param][0]
		if val == "" || !utf8.ValidString(val) || utf8.RuneCountInString(val) > model.MaxPropValueLen {
			return nil, errs.InvalidField(param, "must be 1 to %d characters", model.MaxPropValueLen)
		}
		out = append(out, Eq(PropFilter(key), val))
	}
	return out, nil
}

// filtered reports the first filter parameter of a query string, if any;
// a segment is one too.
func filtered(v url.Values) (string, bool) {
	if _, ok := v[SegmentParam]; ok {
		return SegmentParam, true
	}
	for _, f := range FilterParams {
		if _, ok := v[f.Param]; ok {
			return f.Param, true
		}
	}
	for param := range v {
		if strings.HasPrefix(param, propParamPrefix) {
			return param, true
		}
	}
	return "", false
}

// Filter returns the value of the filter on dimension d, if r has one.
func (r Request) Filter(d Dimension) (string, bool) {
	for _, f := range r.Filters {
		if f.Dim.Name == d.Name {
			v, ok := f.Value.(string)
			return v, ok
		}
	}
	return "", false
}

// Endpoint names the parameters an endpoint requires beyond the common ones.
type Endpoint struct {
	NoDates bool // realtime
	// Require is the filter parameter the report is of (regions: country;
	// cities: region; browser versions: browser; OS versions: os): one of
	// requiredHints.
	Require         string
	AcceptEventName bool // events
	// EventProperties requires event_name (a custom event) and takes
	// property and limit (the event-properties report).
	EventProperties bool
	AcceptPaging    bool // pages
	AcceptCompare   bool // overview
	Revenue         bool // breakdown and model
	AcceptUTMBy     bool // campaigns
	// OneDay lets date_to equal date_from (the raw export of one day).
	OneDay bool
	// NoFilters refuses the filter parameters rather than applying them
	// (the raw export, which has none).
	NoFilters bool
	// Funnel requires funnel_id (the funnel report).
	Funnel bool
	// Journeys takes steps, start, end and limit (the journeys report).
	Journeys bool
	// Retention takes interval, the unit of its cohorts (the retention
	// report).
	Retention bool
}

// repeated names a parameter given more than once (the first by name, so
// that the answer does not depend on the map's order). A report reads one
// value of each, and country=DE&country=FR read as Germany's alone would
// answer a question the caller did not ask.
func repeated(v url.Values) (string, bool) {
	name := ""
	for k, vals := range v {
		if len(vals) > 1 && (name == "" || k < name) {
			name = k
		}
	}
	return name, name != ""
}

// ParseRequest validates the query string of a stats endpoint. Every problem
// is a 400 naming the parameter, and so is any parameter given twice;
// unknown parameters given once are ignored.
func ParseRequest(v url.Values, e Endpoint) (Request, error) {
	var r Request
	if name, ok := repeated(v); ok {
		return r, errs.InvalidField(name, "%s is given more than once; give it once", name)
	}
	site := strings.TrimSpace(v.Get("site_id"))
	if site == "" {
		return r, errs.InvalidField("site_id", "site_id is required")
	}
	if len(site) > 64 {
		return r, errs.E(errs.NotFound, "site_not_found", "site not found").WithField("site_id")
	}
	r.SiteID = model.SiteID(site)
	if e.NoDates {
		return r, nil
	}
	var err error
	if r.DateFrom, err = parseDate(v, "date_from"); err != nil {
		return r, err
	}
	if r.DateTo, err = parseDate(v, "date_to"); err != nil {
		return r, err
	}
	if e.OneDay && r.DateTo.Before(r.DateFrom) {
		return r, errs.E(errs.Invalid, "invalid_date_range", "date_from must not be after date_to").WithField("date_from")
	}
	if !e.OneDay && !r.DateFrom.Before(r.DateTo) {
		return r, errs.E(errs.Invalid, "invalid_date_range", "date_from must be before date_to").WithField("date_from")
	}
	if r.DateTo.After(r.DateFrom.AddDate(MaxRangeYears, 0, 0)) {
		return r, errs.E(errs.Invalid, "invalid_date_range", "the range may span at most %d years", MaxRangeYears).WithField("date_to")
	}
	if tz := v.Get("timezone"); tz != "" {
		if _, err := LoadLocation(tz); err != nil {
			return r, errs.InvalidField("timezone", "must be an IANA time zone such as Europe/Berlin")
		}
		r.Timezone = tz
	}
	if e.NoFilters {
		if param, ok := filtered(v); ok {
			return r, errs.InvalidField(param, "this endpoint takes no filters")
		}
	} else {
		if r.Filters, err = ParseFilters(v); err != nil {
			return r, err
		}
		if r.Segment, err = parseSegment(v); err != nil {
			return r, err
		}
	}
	if e.AcceptCompare {
		if r.Compare, r.CompareYear, err = parseCompare(v); err != nil {
			return r, err
		}
		if r.Interval, err = ParseInterval(v.Get("interval"), r.DateFrom, r.DateTo); err != nil {
			return r, err
		}
	}
	if e.Retention {
		if r.Interval, err = parseRetentionInterval(v.Get("interval"), r.DateFrom, r.DateTo); err != nil {
			return r, err
		}
	}
	if e.AcceptPaging || e.EventProperties || e.Journeys {
		if r.Limit, err = parseInt(v, "limit", DefaultLimit, 1, MaxLimit); err != nil {
			return r, err
		}
	}
	if e.AcceptPaging {
		if r.Page, err = parseInt(v, "page", 1, 1, MaxPage); err != nil {
			return r, err
		}
	}
	r.required = e.Require
	if e.AcceptUTMBy {
		r.UTMBy = DefaultUTMBy
		if by, ok := v["by"]; ok {
			if _, known := UTMDimensions[by[0]]; !known {
				return r, errs.InvalidField("by", "must be utm_campaign, utm_source, utm_medium or utm_content")
			}
			r.UTMBy = by[0]
		}
	}
	if e.Revenue {
		if err := parseRevenue(&r, v.Get("breakdown"), v.Get("attribution"), v.Get("model")); err != nil {
			return r, err
		}
	}
	if e.Funnel {
		id := strings.TrimSpace(v.Get("funnel_id"))
		if id == "" {
			return r, errs.InvalidField("funnel_id", "funnel_id is required")
		}
		r.FunnelID = model.FunnelID(id)
	}
	if e.Journeys {
		if err := parseJourney(&r, v); err != nil {
			return r, err
		}
	}
	if e.AcceptEventName {
		if name, ok := v["event_name"]; ok {
			if !model.EventNameFits(name[0]) {
				return r, errs.InvalidField("event_name", "must be 1 to %d characters", model.MaxEventNameLen)
			}
			r.EventName = name[0]
		}
	}
	if e.EventProperties {
		if r.EventName, r.Property, err = parseEventProperty(v); err != nil {
			return r, err
		}
	}
	return r, nil
}

// parseEventProperty reads the event and the optional prop key of the
// event-properties report; the report checks them (CheckEventProperty), for
// the dashboard's card as for the API.
func parseEventProperty(v url.Values) (event, property string, err error) {
	name, ok := v["event_name"]
	if !ok {
		return "", "", errs.InvalidField("event_name", "event_name is required (a custom event's name)")
	}
	property, hasProperty := "", false
	if p, ok := v["property"]; ok {
		property, hasProperty = p[0], true
	}
	if hasProperty && property == "" {
		return "", "", errs.InvalidField("property", "must be 1 to %d characters", model.MaxPropKeyLen)
	}
	return name[0], property, nil
}

// CheckEventProperty checks the event and prop key ("" for none) of an
// event-properties report by the rules ingestion applies to them (a name of
// a custom event, never a pageview; a key of a prop's size): a report of
// another could only be empty.
func CheckEventProperty(event, property string) error {
	switch {
	case !model.EventNameFits(event):
		return errs.InvalidField("event_name", "must be 1 to %d characters", model.MaxEventNameLen)
	case event == model.PageviewName:
		return errs.InvalidField("event_name", "%q is not a custom event: pageviews have no props", model.PageviewName)
	case property != "" && !model.PropKeyFits(property):
		return errs.InvalidField("property", "must be 1 to %d characters", model.MaxPropKeyLen)
	}
	return nil
}

// parseCompare reads the overview's compare: year for the same dates a
// year before, previous_period or a true boolean for the period of equal
// length before, a false one or none for no comparison.
func parseCompare(v url.Values) (compare, year bool, err error) {
	s, ok := v["compare"]
	if !ok {
		return false, false, nil
	}
	switch s[0] {
	case "year":
		return true, true, nil
	case "previous_period":
		return true, false, nil
	}
	if compare, err = strconv.ParseBool(s[0]); err != nil {
		return false, false, errs.InvalidField("compare", "must be true, previous_period, year or false")
	}
	return compare, false, nil
}

// The units of the overview's series: the hours, days, weeks (from Monday)
// or months of the range, in its time zone.
const (
	IntervalHour  = "hour"
	IntervalDay   = "day"
	IntervalWeek  = "week"
	IntervalMonth = "month"
)

// MaxHourlyDays is the longest range whose series goes by the hour.
const MaxHourlyDays = 7

// ParseInterval reads the unit of a series over the inclusive dates
// from..to: IntervalDay when empty; by the hour, at most MaxHourlyDays.
func ParseInterval(s string, from, to time.Time) (string, error) {
	switch s {
	case "", IntervalDay:
		return IntervalDay, nil
	case IntervalWeek, IntervalMonth:
		return s, nil
	case IntervalHour:
		if to.Sub(from) >= MaxHourlyDays*24*time.Hour {
			return "", errs.InvalidField("interval", "a series by the hour spans at most %d days", MaxHourlyDays)
		}
		return s, nil
	}
	return "", errs.InvalidField("interval", "must be hour, day, week or month")
}

// LoadLocation loads an IANA time zone (model.LoadZone).
func LoadLocation(name string) (*time.Location, error) {
	loc, err := model.LoadZone(name)
	if err != nil {
		return nil, errs.InvalidField("timezone", "must be an IANA time zone")
	}
	return loc, nil
}

// InYears reports whether the date d is within FirstYear..LastYear.
func InYears(d time.Time) bool { return d.Year() >= FirstYear && d.Year() <= LastYear }

func parseDate(v url.Values, name string) (time.Time, error) {
	s := v.Get(name)
	if s == "" {
		return time.Time{}, errs.InvalidField(name, "%s is required (YYYY-MM-DD)", name)
	}
	d, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return time.Time{}, errs.InvalidField(name, "must be a date in the form YYYY-MM-DD")
	}
	if !InYears(d) {
		return time.Time{}, errs.InvalidField(name, "must be a date between %d and %d", FirstYear, LastYear)
	}
	return d, nil
}

func parseInt(v url.Values, name string, def, lo, hi int) (int, error) {
	s, ok := v[name]
	if !ok {
		return def, nil
	}
	n, err := strconv.Atoi(s[0])
	if err != nil || n < lo || n > hi {
		return 0, errs.InvalidField(name, "must be an integer from %d to %d", lo, hi)
	}
	return n, nil
}

func canonicalDevice(s string) (string, bool) {
	for _, d := range model.DeviceClasses {
		if strings.EqualFold(s, d) {
			return d, true
		}
	}
	return "", false
}

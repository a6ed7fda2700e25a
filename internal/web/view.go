package web

import (
	"net/url"
	"strings"
	"time"

	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/stats"
)

// Ranges of the dashboard's picker.
var ranges = []struct{ Key, Label string }{
	{"today", "Today"}, {"yesterday", "Yesterday"}, {"7d", "Last 7 days"}, {"30d", "Last 30 days"}, {"month", "This month"},
	{"last-month", "Last month"}, {"year", "This year"}, {"12mo", "Last 12 months"}, {"custom", "Custom"},
}

// view is the dashboard's state, all of it in the URL: the range, the
// comparison, the filters and the revenue's attribution model. Every link
// and card keeps it.
type view struct {
	Site model.Site
	// Base is the dashboard's path: /sites/<id>, or /share/<token> for a
	// shared link's, under which every link and card of the view stays.
	Base string
	// Shared is a shared link's view: read-only, without the settings, the
	// download or the tracking health; NoRevenue hides revenue too.
	Shared, NoRevenue bool
	Range             string
	From, To          time.Time // inclusive dates in the site's time zone
	Compare           bool
	CompareYear       bool // with the same dates a year before, not the period before
	Filters           []activeFilter
	Attribution       string // the revenue card's model; the download's too
	Funnel            string // the funnel card's funnel (a funnel id); the download's too
	query             url.Values
}

// activeFilter is one filter of the view, with the link that drops it.
type activeFilter struct {
	Param, Label, Value, Remove string
}

// filterLabels name the filter parameters for people.
var filterLabels = map[string]string{
	"source": "Source", "channel": "Channel", "pathname": "Page", "hostname": "Hostname", "country": "Country", "region": "Region", "city": "City",
	"device": "Device", "browser": "Browser", "browser_version": "Browser version", "os": "OS",
	"os_version": "OS version", "utm_source": "UTM source", "utm_medium": "UTM medium",
	"utm_campaign": "UTM campaign", "utm_content": "UTM content",
}

// sitePath is the path of a site's dashboard for its members.
func sitePath(site model.SiteID) string { return "/sites/" + string(site) }

// parseView reads the view from the URL of the dashboard at base; a bad
// parameter is a 400.
func parseView(q url.Values, site model.Site, base string, now time.Time) (view, error) {
	v := view{Site: site, Base: base, Range: q.Get("range"), Compare: q.Get("compare") == "1" || q.Get("compare") == "year",
		CompareYear: q.Get("compare") == "year"}
	loc, err := model.LoadZone(site.Timezone)
	if err != nil {
		loc = time.UTC
	}
	t := now.In(loc)
	today := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	switch v.Range {
	case "today":
		v.From, v.To = today, today
	case "", "7d":
		v.Range, v.From, v.To = "7d", today.AddDate(0, 0, -6), today
	case "30d":
		v.From, v.To = today.AddDate(0, 0, -29), today
	case "yesterday":
		v.From, v.To = today.AddDate(0, 0, -1), today.AddDate(0, 0, -1)
	case "month":
		v.From, v.To = today.AddDate(0, 0, 1-today.Day()), today
	case "last-month":
		first := today.AddDate(0, 0, 1-today.Day())
		v.From, v.To = first.AddDate(0, -1, 0), first.AddDate(0, 0, -1)
	case "year":
		v.From, v.To = time.Date(today.Year(), 1, 1, 0, 0, 0, 0, time.UTC), today
	case "12mo":
		// the 12 months up to today's: May 15 shows June 1 of last year on
		v.From, v.To = today.AddDate(0, 0, 1-today.Day()).AddDate(0, -11, 0), today
	case "custom":
		if v.From, err = time.Parse(time.DateOnly, q.Get("from")); err != nil {
			return v, errs.InvalidField("from", "the start date must be a date")
		}
		if v.To, err = time.Parse(time.DateOnly, q.Get("to")); err != nil {
			return v, errs.InvalidField("to", "the end date must be a date")
		}
		if v.To.Before(v.From) {
			return v, errs.InvalidField("to", "the end date must not be before the start date")
		}
		if v.To.After(v.From.AddDate(stats.MaxRangeYears, 0, 0)) || !stats.InYears(v.From) || !stats.InYears(v.To) {
			return v, errs.InvalidField("to", "a range spans at most %d years", stats.MaxRangeYears)
		}
	default:
		return v, errs.InvalidField("range", "unknown range")
	}
	fs, err := stats.ParseFilters(q)
	if err != nil {
		return v, err
	}
	if v.Attribution, err = stats.ParseAttribution(q.Get("attribution"), ""); err != nil {
		return v, err
	}
	v.query = url.Values{"range": {v.Range}}
	if v.Range == "custom" {
		v.query.Set("from", v.From.Format(time.DateOnly))
		v.query.Set("to", v.To.Format(time.DateOnly))
	}
	if v.Compare {
		v.query.Set("compare", v.CompareParam())
	}
	if v.Attribution != stats.LastNonDirect {
		v.query.Set("attribution", v.Attribution)
	}
	// a shared dashboard in embed mode stays in it, in its colours
	if q.Get(embedParam) == "1" {
		v.query.Set(embedParam, "1")
		if t := q.Get("theme"); t == themeLight || t == themeDark {
			v.query.Set("theme", t)
		}
	}
	if f := q.Get("funnel"); f != "" && len(f) <= 64 {
		v.Funnel = f
		v.query.Set("funnel", f)
	}
	for _, f := range fs {
		v.query.Set(stats.ParamOf(f.Dim), f.Value.(string))
	}
	for _, f := range fs {
		param := stats.ParamOf(f.Dim)
		v.Filters = append(v.Filters, activeFilter{Param: param, Label: filterLabel(param), Value: f.Value.(string), Remove: v.link(param, "")})
	}
	return v, nil
}

// filterLabel names a filter parameter for people; a prop's is its key
// (props[plan] is "plan").
func filterLabel(param string) string {
	if label, ok := filterLabels[param]; ok {
		return label
	}
	return strings.TrimSuffix(strings.TrimPrefix(param, "props["), "]")
}

// filterSet is the view's filters as a segment keeps them.
func (v view) filterSet() map[string]string { return stats.FilterSet(v.request().Filters) }

// withFilters is the URL of the view with set's filters instead of its
// own (a segment applied).
func (v view) withFilters(set map[string]string) string {
	q := url.Values{}
	for k, vals := range v.query {
		q[k] = vals
	}
	for _, f := range v.Filters {
		q.Del(f.Param)
	}
	for param, value := range set {
		q.Set(param, value)
	}
	return v.Base + "?" + q.Encode()
}

// request is the stats request of the view (every report of the dashboard).
func (v view) request() stats.Request {
	fs, _ := stats.ParseFilters(v.query) // validated by parseView
	return stats.Request{SiteID: v.Site.ID, DateFrom: v.From, DateTo: v.To, Compare: v.Compare, CompareYear: v.CompareYear, Filters: fs,
		Limit: 10, Page: 1, Attribution: v.Attribution, FunnelID: model.FunnelID(v.Funnel), Interval: v.interval()}
}

// CompareParam is the view's compare parameter: year, or 1 for the
// previous period.
func (v view) CompareParam() string {
	if v.CompareYear {
		return "year"
	}
	return "1"
}

// interval is the unit of the view's chart: a day by the hour, a range of
// over three months by the week, of over a year by the month.
func (v view) interval() string {
	switch days := int(v.To.Sub(v.From).Hours()/24) + 1; {
	case days == 1:
		return stats.IntervalHour
	case days > 366:
		return stats.IntervalMonth
	case days > 92:
		return stats.IntervalWeek
	}
	return stats.IntervalDay
}

// Query is the view's query string.
func (v view) Query() string { return v.query.Encode() }

// link is the dashboard URL of the view with a filter set (or, with value
// "", removed).
func (v view) link(param, value string) string {
	q := url.Values{}
	for k, vals := range v.query {
		q[k] = vals
	}
	if value == "" {
		q.Del(param)
	} else {
		q.Set(param, value)
	}
	return v.Base + "?" + q.Encode()
}

// withRange is the URL of the view over another preset range.
func (v view) withRange(key string) string {
	q := url.Values{}
	for k, vals := range v.query {
		q[k] = vals
	}
	q.Set("range", key)
	q.Del("from")
	q.Del("to")
	return v.Base + "?" + q.Encode()
}

// cardURL is the URL of a card of the view, on one of its tabs ("" for
// the first).
func (v view) cardURL(card, tab string) string { return v.cardURLWith(card, "tab", tab) }

// cardURLWith is the URL of a card of the view with the card's own
// parameters, name then value (those whose value is "" are left out).
func (v view) cardURLWith(card string, kv ...string) string {
	q := url.Values{}
	for k, vals := range v.query {
		q[k] = vals
	}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			q.Set(kv[i], kv[i+1])
		}
	}
	return v.Base + "/cards/" + card + "?" + q.Encode()
}

// Has reports whether the view filters on param.
func (v view) Has(param string) bool { return v.query.Get(param) != "" }

// Get is the value of a filter of the view.
func (v view) Get(param string) string { return v.query.Get(param) }

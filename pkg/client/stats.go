package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"

	"github.com/tally-analytics/tally/pkg/api"
)

// StatsParams are the query parameters of the stats endpoints. Empty fields
// are not sent.
type StatsParams struct {
	SiteID   string
	DateFrom string // YYYY-MM-DD, inclusive
	DateTo   string // YYYY-MM-DD, inclusive
	Timezone string // IANA name; default: the site's
	Compare  bool   // overview
	// CompareYear (overview) compares with the same dates a year before
	// rather than the period before (compare=year).
	CompareYear bool
	Interval    string // overview: hour, day (default), week or month; retention: day, week (default) or month
	Limit       int    // pages, event properties, journeys
	Page        int    // pages
	// Filters (every report): device, country (required by regions),
	// region (required by cities), source, pathname, hostname (a host of
	// the site, blog.example.com), city, browser
	// (required by browser versions), OS (required by OS versions), and
	// the versions of either, and the acquisition channel ("Organic
	// Search", "Paid Social"…: the names of the channels report).
	Device, Country, Region, Source, Pathname, City, Browser, OS string
	BrowserVersion, OSVersion, Channel, Hostname                 string
	// EventName filters the events report, and is the event of the
	// event-properties report.
	EventName string
	// Property is the prop key the event-properties report breaks its
	// event down by.
	Property                                      string
	UTMSource, UTMMedium, UTMCampaign, UTMContent string
	// Props filters by custom props, at most 3: the visits with an event
	// whose prop key holds the value (sent as props[key]=value).
	Props map[string]string
	// By is the UTM parameter of the campaigns report.
	By string
	// Breakdown and Attribution (last_non_direct, the default; last_touch,
	// direct visits included; first_touch) of the revenue report.
	Breakdown, Attribution string
	// Model is the deprecated name of Attribution: its last_touch means
	// last_non_direct, its first_touch first_touch.
	Model string
	// FunnelID is the funnel of the funnel report.
	FunnelID string
	// Segment applies a saved segment (its id): its filters count beside
	// those above, none of which may filter what it filters.
	Segment string
	// Steps (2 to 6; default 3), Start and End are the journeys report's:
	// the most pages of a path, and a page its paths begin and end at.
	Steps      int
	Start, End string
}

func (p StatsParams) values() url.Values {
	v := url.Values{}
	set := func(k, val string) {
		if val != "" {
			v.Set(k, val)
		}
	}
	set("site_id", p.SiteID)
	set("date_from", p.DateFrom)
	set("date_to", p.DateTo)
	set("timezone", p.Timezone)
	set("interval", p.Interval)
	if p.Compare {
		v.Set("compare", "true")
	}
	if p.CompareYear {
		v.Set("compare", "year")
	}
	if p.Limit > 0 {
		v.Set("limit", strconv.Itoa(p.Limit))
	}
	if p.Page > 0 {
		v.Set("page", strconv.Itoa(p.Page))
	}
	set("device", p.Device)
	set("country", p.Country)
	set("region", p.Region)
	set("source", p.Source)
	set("channel", p.Channel)
	set("pathname", p.Pathname)
	set("hostname", p.Hostname)
	set("city", p.City)
	set("browser", p.Browser)
	set("os", p.OS)
	set("browser_version", p.BrowserVersion)
	set("os_version", p.OSVersion)
	set("event_name", p.EventName)
	set("property", p.Property)
	set("utm_source", p.UTMSource)
	set("utm_medium", p.UTMMedium)
	set("utm_campaign", p.UTMCampaign)
	set("utm_content", p.UTMContent)
	for k, val := range p.Props {
		v.Set("props["+k+"]", val)
	}
	set("by", p.By)
	set("breakdown", p.Breakdown)
	set("attribution", p.Attribution)
	set("model", p.Model)
	set("funnel_id", p.FunnelID)
	set("segment", p.Segment)
	if p.Steps > 0 {
		v.Set("steps", strconv.Itoa(p.Steps))
	}
	set("start", p.Start)
	set("end", p.End)
	return v
}

func getStats[T any](ctx context.Context, c *Client, report string, p StatsParams) (T, error) {
	return get[T](ctx, c, "/api/v1/stats/"+report, p)
}

func get[T any](ctx context.Context, c *Client, path string, p StatsParams) (T, error) {
	var res T
	err := c.do(ctx, http.MethodGet, path, p.values(), nil, &res)
	return res, err
}

// Overview returns headline metrics and the daily time series.
func (c *Client) Overview(ctx context.Context, p StatsParams) (api.OverviewResponse, error) {
	return getStats[api.OverviewResponse](ctx, c, "overview", p)
}

// Pages returns a page of the pages report.
func (c *Client) Pages(ctx context.Context, p StatsParams) (api.PagesResponse, error) {
	return getStats[api.PagesResponse](ctx, c, "pages", p)
}

// Campaigns returns visitors by the value of a UTM parameter (p.By,
// utm_campaign by default).
func (c *Client) Campaigns(ctx context.Context, p StatsParams) (api.CampaignsResponse, error) {
	return getStats[api.CampaignsResponse](ctx, c, "campaigns", p)
}

// Channels returns visits by acquisition channel (Organic Search, Paid
// Social, Direct…).
func (c *Client) Channels(ctx context.Context, p StatsParams) (api.ChannelsResponse, error) {
	return getStats[api.ChannelsResponse](ctx, c, "channels", p)
}

// Hostnames returns a page of the hosts of the site's pageviews (its
// domain and subdomains): visitors, pageviews and share of visitors.
func (c *Client) Hostnames(ctx context.Context, p StatsParams) (api.HostnamesResponse, error) {
	return getStats[api.HostnamesResponse](ctx, c, "hostnames", p)
}

// Sources returns the traffic sources.
func (c *Client) Sources(ctx context.Context, p StatsParams) (api.SourcesResponse, error) {
	return getStats[api.SourcesResponse](ctx, c, "sources", p)
}

// EntryPages returns the entry pages.
func (c *Client) EntryPages(ctx context.Context, p StatsParams) (api.EntryPagesResponse, error) {
	return getStats[api.EntryPagesResponse](ctx, c, "entry-pages", p)
}

// ExitPages returns the exit pages.
func (c *Client) ExitPages(ctx context.Context, p StatsParams) (api.ExitPagesResponse, error) {
	return getStats[api.ExitPagesResponse](ctx, c, "exit-pages", p)
}

// Devices returns visitors by device type.
func (c *Client) Devices(ctx context.Context, p StatsParams) (api.DevicesResponse, error) {
	return getStats[api.DevicesResponse](ctx, c, "devices", p)
}

// Browsers returns visitors by browser.
func (c *Client) Browsers(ctx context.Context, p StatsParams) (api.BrowsersResponse, error) {
	return getStats[api.BrowsersResponse](ctx, c, "browsers", p)
}

// OperatingSystems returns visitors by operating system.
func (c *Client) OperatingSystems(ctx context.Context, p StatsParams) (api.OperatingSystemsResponse, error) {
	return getStats[api.OperatingSystemsResponse](ctx, c, "operating-systems", p)
}

// Countries returns visitors by country.
func (c *Client) Countries(ctx context.Context, p StatsParams) (api.CountriesResponse, error) {
	return getStats[api.CountriesResponse](ctx, c, "countries", p)
}

// BrowserVersions returns the visitors of a browser (p.Browser, required)
// by its version.
func (c *Client) BrowserVersions(ctx context.Context, p StatsParams) (api.BrowserVersionsResponse, error) {
	return getStats[api.BrowserVersionsResponse](ctx, c, "browser-versions", p)
}

// Retention returns the cohorts of the range by p.Interval (day, week or
// month; the server's default when empty): each interval's new visitors
// and how many of them came back in each later one.
func (c *Client) Retention(ctx context.Context, p StatsParams) (api.RetentionResponse, error) {
	return getStats[api.RetentionResponse](ctx, c, "retention", p)
}

// OSVersions returns the visitors of an operating system (p.OS, required)
// by its version.
func (c *Client) OSVersions(ctx context.Context, p StatsParams) (api.OSVersionsResponse, error) {
	return getStats[api.OSVersionsResponse](ctx, c, "os-versions", p)
}

// Regions returns the visitors of a country by region.
func (c *Client) Regions(ctx context.Context, p StatsParams) (api.RegionsResponse, error) {
	return getStats[api.RegionsResponse](ctx, c, "regions", p)
}

// Cities returns the visitors of a region by city.
func (c *Client) Cities(ctx context.Context, p StatsParams) (api.CitiesResponse, error) {
	return getStats[api.CitiesResponse](ctx, c, "cities", p)
}

// Events returns the custom events report.
func (c *Client) Events(ctx context.Context, p StatsParams) (api.EventsResponse, error) {
	return getStats[api.EventsResponse](ctx, c, "events", p)
}

// EventPropertyKeys returns the prop keys the custom event p.EventName
// carried (p.Property is not sent).
func (c *Client) EventPropertyKeys(ctx context.Context, p StatsParams) (api.EventPropertyKeysResponse, error) {
	p.Property = ""
	return getStats[api.EventPropertyKeysResponse](ctx, c, "event-properties", p)
}

// EventPropertyValues returns the custom event p.EventName broken down by
// the values of its prop p.Property, which it needs.
func (c *Client) EventPropertyValues(ctx context.Context, p StatsParams) (api.EventPropertyValuesResponse, error) {
	if p.Property == "" {
		return api.EventPropertyValuesResponse{}, errors.New("tally: EventPropertyValues needs a Property")
	}
	return getStats[api.EventPropertyValuesResponse](ctx, c, "event-properties", p)
}

// Journeys returns the most common paths through the site (p.Limit of
// them, default 100): p.Steps pages long at most, from p.Start and up to
// p.End when set.
func (c *Client) Journeys(ctx context.Context, p StatsParams) (api.JourneysResponse, error) {
	return getStats[api.JourneysResponse](ctx, c, "journeys", p)
}

// Realtime returns the visitors of the last five minutes.
func (c *Client) Realtime(ctx context.Context, siteID string) (api.RealtimeResponse, error) {
	return getStats[api.RealtimeResponse](ctx, c, "realtime", StatsParams{SiteID: siteID})
}

// Ingestion is a site's tracking health over the range: events accepted,
// recognised as bots (by category) and refused (by reason), in all and
// per day. It takes no filters.
func (c *Client) Ingestion(ctx context.Context, p StatsParams) (api.IngestionResponse, error) {
	return getStats[api.IngestionResponse](ctx, c, "ingestion", p)
}

// CSV writes a report as CSV (format=csv: a header of the JSON field names,
// a row per item of the report's list) to w, and returns the file name the
// server gives it (<report>-<site_id>-<date_from>-<date_to>.csv). report
// is the last segment of the report's path: overview, pages, entry-pages,
// exit-pages, hostnames, sources, channels, campaigns, devices, browsers, operating-systems,
// countries, regions, cities, events, journeys, retention, realtime, revenue, ingestion, funnel
// (with p.FunnelID), or conversions (the goals report).
func (c *Client) CSV(ctx context.Context, report string, p StatsParams, w io.Writer) (string, error) {
	path := "/api/v1/stats/" + url.PathEscape(report)
	if report == "conversions" {
		path = "/api/v1/goals/conversions"
	}
	q := p.values()
	q.Set("format", "csv")
	resp, err := c.send(ctx, http.MethodGet, path, q, nil)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(w, resp.Body); err != nil {
		return "", fmt.Errorf("tally: read answer: %w", err)
	}
	_, params, _ := mime.ParseMediaType(resp.Header.Get("Content-Disposition"))
	return params["filename"], nil
}

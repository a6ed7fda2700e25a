package api

import "time"

// StatsMeta is the meta object of the stats reports.
type StatsMeta struct {
	SiteID   string `json:"site_id"`
	DateFrom string `json:"date_from"`
	DateTo   string `json:"date_to"`
	Timezone string `json:"timezone"`
	// Sampled is true when the answer was computed on a sample of visitors
	// (counts scaled back) because the range holds more events than the
	// server's threshold.
	Sampled bool `json:"sampled"`
}

// OverviewMeta adds the count of filtered bot events, in all and by category.
type OverviewMeta struct {
	StatsMeta
	FilteredBotTraffic int64 `json:"filtered_bot_traffic"`
	// FilteredBotTrafficByCategory splits FilteredBotTraffic; its counts add
	// up to it.
	FilteredBotTrafficByCategory BotTraffic `json:"filtered_bot_traffic_by_category"`
}

// BotTraffic counts bot events by category.
type BotTraffic struct {
	Crawler    int64 `json:"crawler"`    // search engines, SEO tools, archivers, link previews, feed readers
	AIAgent    int64 `json:"ai_agent"`   // AI crawlers and assistants fetching pages
	Monitor    int64 `json:"monitor"`    // uptime and performance checks
	Automation int64 `json:"automation"` // headless browsers and test drivers
	Other      int64 `json:"other"`      // HTTP libraries, scanners, probes, requests no browser sends
}

// Metrics are the headline numbers: visitors and pageviews of the range's
// events; visits (sessions), views per visit (pageviews ÷ visits, two
// decimals), bounce rate and visit duration of the sessions that started in
// it. Durations in seconds; rates 0–100.
type Metrics struct {
	Visitors      int64   `json:"visitors"`
	Visits        int64   `json:"visits"`
	Pageviews     int64   `json:"pageviews"`
	ViewsPerVisit float64 `json:"views_per_visit"`
	BounceRate    float64 `json:"bounce_rate"`
	VisitDuration float64 `json:"visit_duration"`
}

// TimeseriesPoint is one unit of the series (a day, an hour, a week or a
// month), with the metrics of that unit.
type TimeseriesPoint struct {
	Date          string  `json:"date"`
	Visitors      int64   `json:"visitors"`
	Visits        int64   `json:"visits"`
	Pageviews     int64   `json:"pageviews"`
	ViewsPerVisit float64 `json:"views_per_visit"`
	BounceRate    float64 `json:"bounce_rate"`
	VisitDuration float64 `json:"visit_duration"`
}

// Change compares a period with the previous one: percent change of each
// metric (null when the previous value is 0), bounce_rate in points.
type Change struct {
	Visitors      *float64 `json:"visitors"`
	Visits        *float64 `json:"visits"`
	Pageviews     *float64 `json:"pageviews"`
	ViewsPerVisit *float64 `json:"views_per_visit"`
	BounceRate    float64  `json:"bounce_rate"`
	VisitDuration *float64 `json:"visit_duration"`
}

// Comparison is the previous period of equal length.
type Comparison struct {
	DateFrom   string            `json:"date_from"`
	DateTo     string            `json:"date_to"`
	Metrics    Metrics           `json:"metrics"`
	Timeseries []TimeseriesPoint `json:"timeseries"`
	Change     Change            `json:"change"`
}

// Overview is data of GET /api/v1/stats/overview.
type Overview struct {
	Metrics    Metrics           `json:"metrics"`
	Timeseries []TimeseriesPoint `json:"timeseries"`
	Comparison *Comparison       `json:"comparison,omitempty"`
}

// OverviewResponse is the body of GET /api/v1/stats/overview.
type OverviewResponse struct {
	Data Overview     `json:"data"`
	Meta OverviewMeta `json:"meta"`
}

// Page is a row of the pages report.
type Page struct {
	Pathname      string  `json:"pathname"`
	Pageviews     int64   `json:"pageviews"`
	Visitors      int64   `json:"visitors"`
	BounceRate    float64 `json:"bounce_rate"`
	AvgTimeOnPage float64 `json:"avg_time_on_page"`
	// ScrollDepth is how far the page's visitors scrolled it: the mean, over
	// those whose browser reported it, of the deepest each scrolled, in
	// percent of the page's height; null when none did.
	ScrollDepth *int64 `json:"scroll_depth"`
}

// Pagination describes a page of a long list.
type Pagination struct {
	Total int64 `json:"total"`
	Page  int   `json:"page"`
	Limit int   `json:"limit"`
}

// PagesResponse is the body of GET /api/v1/stats/pages.
type PagesResponse struct {
	Data struct {
		Pages      []Page     `json:"pages"`
		Pagination Pagination `json:"pagination"`
	} `json:"data"`
	Meta StatsMeta `json:"meta"`
}

// HostnameRow is a row of the hostnames report: a host of the site's
// pages (blog.example.com), the visitors of its pageviews and their share
// of the range's visitors of pageviews, and its pageviews.
type HostnameRow struct {
	Hostname   string  `json:"hostname"`
	Visitors   int64   `json:"visitors"`
	Pageviews  int64   `json:"pageviews"`
	Percentage float64 `json:"percentage"`
}

// HostnamesResponse is the body of GET /api/v1/stats/hostnames.
type HostnamesResponse struct {
	Data struct {
		Hostnames  []HostnameRow `json:"hostnames"`
		Pagination Pagination    `json:"pagination"`
	} `json:"data"`
	Meta StatsMeta `json:"meta"`
}

// SourceRow is a row of the sources report.
type SourceRow struct {
	Source     string  `json:"source"`
	SourceType string  `json:"source_type"`
	Visitors   int64   `json:"visitors"`
	Pageviews  int64   `json:"pageviews"`
	BounceRate float64 `json:"bounce_rate"`
}

// SourcesResponse is the body of GET /api/v1/stats/sources.
type SourcesResponse struct {
	Data struct {
		Sources []SourceRow `json:"sources"`
	} `json:"data"`
	Meta StatsMeta `json:"meta"`
}

// ChannelRow is a row of the channels report: an acquisition channel
// ("Organic Search", "Paid Social", "Direct"…), its visitors and their
// share of the report's visitors, its visits, their pageviews, bounce rate
// and mean duration in seconds.
type ChannelRow struct {
	Channel       string  `json:"channel"`
	Visitors      int64   `json:"visitors"`
	Percentage    float64 `json:"percentage"`
	Visits        int64   `json:"visits"`
	Pageviews     int64   `json:"pageviews"`
	BounceRate    float64 `json:"bounce_rate"`
	VisitDuration float64 `json:"visit_duration"`
}

// ChannelsResponse is the body of GET /api/v1/stats/channels.
type ChannelsResponse struct {
	Data struct {
		Channels []ChannelRow `json:"channels"`
	} `json:"data"`
	Meta StatsMeta `json:"meta"`
}

// EntryPage is a row of the entry-pages report.
type EntryPage struct {
	Pathname   string  `json:"pathname"`
	Entries    int64   `json:"entries"`
	EntryRate  float64 `json:"entry_rate"`
	BounceRate float64 `json:"bounce_rate"`
}

// EntryPagesResponse is the body of GET /api/v1/stats/entry-pages.
type EntryPagesResponse struct {
	Data struct {
		EntryPages []EntryPage `json:"entry_pages"`
	} `json:"data"`
	Meta StatsMeta `json:"meta"`
}

// ExitPage is a row of the exit-pages report.
type ExitPage struct {
	Pathname string  `json:"pathname"`
	Exits    int64   `json:"exits"`
	ExitRate float64 `json:"exit_rate"`
}

// ExitPagesResponse is the body of GET /api/v1/stats/exit-pages.
type ExitPagesResponse struct {
	Data struct {
		ExitPages []ExitPage `json:"exit_pages"`
	} `json:"data"`
	Meta StatsMeta `json:"meta"`
}

// DeviceRow, BrowserRow, OSRow, CountryRow, RegionRow and CityRow are rows of
// the breakdown reports; percentage is the share of the report's visitors.
type DeviceRow struct {
	Device     string  `json:"device"`
	Visitors   int64   `json:"visitors"`
	Percentage float64 `json:"percentage"`
}

// BrowserRow is a row of the browsers report.
type BrowserRow struct {
	Browser    string  `json:"browser"`
	Visitors   int64   `json:"visitors"`
	Percentage float64 `json:"percentage"`
}

// OSRow is a row of the operating-systems report.
type OSRow struct {
	OS         string  `json:"os"`
	Visitors   int64   `json:"visitors"`
	Percentage float64 `json:"percentage"`
}

// BrowserVersionRow is a row of the browser-versions report: a version
// (major.minor) of the one browser the report is of.
type BrowserVersionRow struct {
	BrowserVersion string  `json:"browser_version"`
	Visitors       int64   `json:"visitors"`
	Percentage     float64 `json:"percentage"`
}

// OSVersionRow is a row of the os-versions report: a version of the one
// operating system the report is of.
type OSVersionRow struct {
	OSVersion  string  `json:"os_version"`
	Visitors   int64   `json:"visitors"`
	Percentage float64 `json:"percentage"`
}

// CountryRow is a row of the countries report.
type CountryRow struct {
	CountryCode string  `json:"country_code"`
	CountryName string  `json:"country_name"`
	Visitors    int64   `json:"visitors"`
	Percentage  float64 `json:"percentage"`
}

// RegionRow is a row of the regions report.
type RegionRow struct {
	RegionCode string  `json:"region_code"`
	RegionName string  `json:"region_name"`
	Visitors   int64   `json:"visitors"`
	Percentage float64 `json:"percentage"`
}

// CityRow is a row of the cities report.
type CityRow struct {
	City       string  `json:"city"`
	Visitors   int64   `json:"visitors"`
	Percentage float64 `json:"percentage"`
}

// CampaignRow is a row of the campaigns report: one value of the UTM
// parameter, its visitors and their share of the report's visitors, the
// pageviews of those visits and their bounce rate.
type CampaignRow struct {
	Value      string  `json:"value"`
	Visitors   int64   `json:"visitors"`
	Percentage float64 `json:"percentage"`
	Pageviews  int64   `json:"pageviews"`
	BounceRate float64 `json:"bounce_rate"`
}

// CampaignsResponse is the body of GET /api/v1/stats/campaigns.
type CampaignsResponse struct {
	Data struct {
		// By is the UTM parameter the rows are values of.
		By        string        `json:"by"`
		Campaigns []CampaignRow `json:"campaigns"`
	} `json:"data"`
	Meta StatsMeta `json:"meta"`
}

// DevicesResponse is the body of GET /api/v1/stats/devices.
type DevicesResponse struct {
	Data struct {
		Devices []DeviceRow `json:"devices"`
	} `json:"data"`
	Meta StatsMeta `json:"meta"`
}

// BrowsersResponse is the body of GET /api/v1/stats/browsers.
type BrowsersResponse struct {
	Data struct {
		Browsers []BrowserRow `json:"browsers"`
	} `json:"data"`
	Meta StatsMeta `json:"meta"`
}

// OperatingSystemsResponse is the body of GET /api/v1/stats/operating-systems.
type OperatingSystemsResponse struct {
	Data struct {
		OperatingSystems []OSRow `json:"operating_systems"`
	} `json:"data"`
	Meta StatsMeta `json:"meta"`
}

// BrowserVersionsResponse is the body of GET /api/v1/stats/browser-versions.
type BrowserVersionsResponse struct {
	Data struct {
		BrowserVersions []BrowserVersionRow `json:"browser_versions"`
	} `json:"data"`
	Meta StatsMeta `json:"meta"`
}

// OSVersionsResponse is the body of GET /api/v1/stats/os-versions.
type OSVersionsResponse struct {
	Data struct {
		OSVersions []OSVersionRow `json:"os_versions"`
	} `json:"data"`
	Meta StatsMeta `json:"meta"`
}

// CountriesResponse is the body of GET /api/v1/stats/countries.
type CountriesResponse struct {
	Data struct {
		Countries []CountryRow `json:"countries"`
	} `json:"data"`
	Meta StatsMeta `json:"meta"`
}

// RegionsResponse is the body of GET /api/v1/stats/regions.
type RegionsResponse struct {
	Data struct {
		Regions []RegionRow `json:"regions"`
	} `json:"data"`
	Meta StatsMeta `json:"meta"`
}

// CitiesResponse is the body of GET /api/v1/stats/cities.
type CitiesResponse struct {
	Data struct {
		Cities []CityRow `json:"cities"`
	} `json:"data"`
	Meta StatsMeta `json:"meta"`
}

// EventRow is a row of the custom events report. conversion_rate is
// total_count / unique visitors of the range × 100.
type EventRow struct {
	EventName      string  `json:"event_name"`
	TotalCount     int64   `json:"total_count"`
	UniqueVisitors int64   `json:"unique_visitors"`
	ConversionRate float64 `json:"conversion_rate"`
}

// EventsResponse is the body of GET /api/v1/stats/events.
type EventsResponse struct {
	Data struct {
		Events []EventRow `json:"events"`
	} `json:"data"`
	Meta StatsMeta `json:"meta"`
}

// EventPropertiesMeta adds the report's event and, when it breaks the event
// down by one, its property.
type EventPropertiesMeta struct {
	StatsMeta
	EventName string `json:"event_name"`
	Property  string `json:"property,omitempty"`
}

// EventPropertyKey is a prop key a custom event carried: in how many of
// its events, sent by how many visitors.
type EventPropertyKey struct {
	Property       string `json:"property"`
	TotalCount     int64  `json:"total_count"`
	UniqueVisitors int64  `json:"unique_visitors"`
}

// EventPropertyKeysResponse is the body of GET /api/v1/stats/event-properties
// without a property: the event's keys, by visitors, then events, then key.
type EventPropertyKeysResponse struct {
	Data []EventPropertyKey  `json:"data"`
	Meta EventPropertiesMeta `json:"meta"`
}

// EventPropertyValue is a value of the property ("(none)" for the events
// without it): how often the event happened with it, by how many visitors,
// and conversion_rate as the events report computes it (total_count / all
// visitors of the range × 100).
type EventPropertyValue struct {
	Value          string  `json:"value"`
	TotalCount     int64   `json:"total_count"`
	UniqueVisitors int64   `json:"unique_visitors"`
	ConversionRate float64 `json:"conversion_rate"`
}

// EventPropertyValuesResponse is the body of GET
// /api/v1/stats/event-properties with a property: the event by its values,
// by visitors, then events, then value.
type EventPropertyValuesResponse struct {
	Data []EventPropertyValue `json:"data"`
	Meta EventPropertiesMeta  `json:"meta"`
}

// Realtime is data of GET /api/v1/stats/realtime (the last 5 minutes).
type Realtime struct {
	ActiveVisitors int64          `json:"active_visitors"`
	CurrentPages   []RealtimePage `json:"current_pages"`
	CurrentSources []RealtimeSrc  `json:"current_sources"`
}

// RealtimePage counts the active visitors whose current page is Pathname.
type RealtimePage struct {
	Pathname string `json:"pathname"`
	Visitors int64  `json:"visitors"`
}

// RealtimeSrc counts the active visitors by the source of their visit.
type RealtimeSrc struct {
	Source   string `json:"source"`
	Visitors int64  `json:"visitors"`
}

// RealtimeResponse is the body of GET /api/v1/stats/realtime.
type RealtimeResponse struct {
	Data Realtime `json:"data"`
	Meta struct {
		Timestamp time.Time `json:"timestamp"`
	} `json:"meta"`
}

// RevenueTotals are amounts in minor units of the base currency (revenue
// and refunds separately; net = revenue - refunds) and counts.
type RevenueTotals struct {
	Revenue        int64 `json:"revenue"`
	Refunds        int64 `json:"refunds"`
	Net            int64 `json:"net"`
	Payments       int64 `json:"payments"`
	RefundCount    int64 `json:"refund_count"`
	PayingVisitors int64 `json:"paying_visitors"`
	// ClientReported is the revenue the tracking script reported (unsigned).
	// It is part of Revenue, Net, Payments and PayingVisitors only when the
	// site includes it (meta.client_revenue_included).
	ClientReported int64 `json:"client_reported"`
}

// RevenueSummary are the totals of the revenue report: RevenueTotals, and
// the range's unique visitors (counted from its events with its filters, as
// the overview counts them, never sampled) with two ratios, both 0 when the
// range has no visitors. RevenuePerVisitor is Net / Visitors in minor units,
// to two decimals; PayingVisitorRate is PayingVisitors / Visitors × 100, to
// one decimal (over 100 when visitors who did not visit in the range paid,
// such as subscription renewals).
type RevenueSummary struct {
	RevenueTotals
	Visitors          int64   `json:"visitors"`
	RevenuePerVisitor float64 `json:"revenue_per_visitor"`
	PayingVisitorRate float64 `json:"paying_visitor_rate"`
}

// RevenueRow is a row of a revenue breakdown.
type RevenueRow struct {
	Value string `json:"value"`
	RevenueTotals
}

// RevenuePoint is one day of revenue.
type RevenuePoint struct {
	Date           string `json:"date"`
	Revenue        int64  `json:"revenue"`
	Refunds        int64  `json:"refunds"`
	Net            int64  `json:"net"`
	ClientReported int64  `json:"client_reported"`
}

// RevenueReport is data of GET /api/v1/stats/revenue.
type RevenueReport struct {
	// Currency is the site's base currency; every amount is in its minor units.
	Currency string         `json:"currency"`
	Totals   RevenueSummary `json:"totals"`
	// Breakdown has a row per value when a breakdown was asked for, else none.
	Breakdown  []RevenueRow   `json:"breakdown"`
	Timeseries []RevenuePoint `json:"timeseries"`
}

// RevenueMeta describes a revenue report.
type RevenueMeta struct {
	StatsMeta
	Breakdown string `json:"breakdown,omitempty"`
	// Attribution is the attribution model of the breakdown and filters:
	// last_non_direct, last_touch or first_touch.
	Attribution string `json:"attribution"`
	// Model is the deprecated name of the model (last_touch for
	// last_non_direct, first_touch), absent for last_touch, which has none.
	Model string `json:"model,omitempty"`
	// PendingConversion counts payments of the range that wait for the
	// exchange rate of their day and are not in the figures yet.
	PendingConversion int64 `json:"pending_conversion"`
	// ClientRevenueIncluded says whether revenue the tracking script
	// reported counts in revenue, net, payments and paying visitors (the
	// site's setting); client_reported shows it either way.
	ClientRevenueIncluded bool `json:"client_revenue_included"`
}

// RevenueResponse is the body of GET /api/v1/stats/revenue.
type RevenueResponse struct {
	Data RevenueReport `json:"data"`
	Meta RevenueMeta   `json:"meta"`
}

// RetentionPeriod is how many visitors of a cohort were seen again in the
// interval Period after the cohort's (0 is the cohort's own: all of them),
// and their share of the cohort (0–100, one decimal).
type RetentionPeriod struct {
	Period     int     `json:"period"`
	Visitors   int64   `json:"visitors"`
	Percentage float64 `json:"percentage"`
}

// RetentionCohort is the visitors first seen in the range in the interval
// that starts on Date (YYYY-MM-DD: the day, its Monday or its first of the
// month; the range may cut the first and the last), with an entry in
// Periods for each interval from theirs to the range's last.
type RetentionCohort struct {
	Date     string            `json:"date"`
	Visitors int64             `json:"visitors"`
	Periods  []RetentionPeriod `json:"periods"`
}

// Retention is data of GET /api/v1/stats/retention: a cohort per interval
// (day, week or month) of the range, oldest first.
type Retention struct {
	Interval string            `json:"interval"`
	Cohorts  []RetentionCohort `json:"cohorts"`
}

// RetentionResponse is the body of GET /api/v1/stats/retention.
type RetentionResponse struct {
	Data Retention `json:"data"`
	Meta StatsMeta `json:"meta"`
}

// RetentionCell is a row of the retention report's CSV: a cohort (its date
// and visitors) and one of its periods.
type RetentionCell struct {
	Cohort         string  `json:"cohort"`
	CohortVisitors int64   `json:"cohort_visitors"`
	Period         int     `json:"period"`
	Visitors       int64   `json:"visitors"`
	Percentage     float64 `json:"percentage"`
}

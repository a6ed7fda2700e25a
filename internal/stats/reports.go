package stats

import (
	"time"

	"github.com/tally-analytics/tally/internal/model"
)

// The reports the service returns. They are the statistics, not their wire
// shape: the API (internal/wire) and the dashboard each present them.

// Meta is what a report read: the site, the inclusive dates of the request
// in the time zone of the report, and whether it read a sample of visitors
// (counts scaled back).
type Meta struct {
	Site     model.SiteID
	From, To time.Time
	Timezone string
	Sampled  bool
}

// List is a report that is a list of rows.
type List[R any] struct {
	Meta Meta
	Rows []R
}

// Metrics are the headline numbers of a period: visitors and pageviews of
// its events; visits (sessions), views per visit, bounce rate and visit
// duration of the sessions that started in it. Durations in seconds, rates
// 0–100.
type Metrics struct {
	Visitors                  int64
	Visits                    int64
	Pageviews                 int64
	ViewsPerVisit             float64
	BounceRate, VisitDuration float64
}

// DayCount is one unit of the overview's series (a day, or its Interval):
// Date is its first day, or for an hour the instant it starts, in the
// range's zone; the metrics are the unit's, as Metrics are the range's.
type DayCount struct {
	Date                      time.Time
	Visitors                  int64
	Visits                    int64
	Pageviews                 int64
	ViewsPerVisit             float64
	BounceRate, VisitDuration float64
}

// Change compares a period with the previous one: the percent change of
// each metric (nil when the previous value is 0), the bounce rate in points.
type Change struct {
	Visitors, Visits, Pageviews, ViewsPerVisit *float64
	BounceRate                                 float64
	VisitDuration                              *float64
}

// Comparison is the period of equal length before a range.
type Comparison struct {
	From, To time.Time
	Metrics  Metrics
	Series   []DayCount
	Change   Change
}

// BotTraffic counts bot events by category.
type BotTraffic struct {
	Crawler, AIAgent, Monitor, Automation, Other int64
}

// Total is the bot events of every category.
func (b BotTraffic) Total() int64 { return b.Crawler + b.AIAgent + b.Monitor + b.Automation + b.Other }

// Overview is the headline metrics and daily series of a range, the
// previous period when asked, and the bot events left out.
type Overview struct {
	Meta    Meta
	Metrics Metrics
	Series  []DayCount
	// Interval is the unit of Series (and of the comparison's).
	Interval   string
	Comparison *Comparison
	Bots       BotTraffic
}

// PageRow is a row of the pages report.
type PageRow struct {
	Path                      string
	Pageviews, Visitors       int64
	BounceRate, AvgTimeOnPage float64
	// ScrollDepth is the page's scroll depth in percent (Service.Pages);
	// nil when none of its visitors reported one.
	ScrollDepth *int64
}

// Pages is one page of the pages report: its rows, the pages of the range
// (Total), and which page of the list it is.
type Pages struct {
	Meta        Meta
	Rows        []PageRow
	Total       int64
	Page, Limit int
}

// HostnameRow is a row of the hostnames report: a host of the site's
// pages, the visitors of its pageviews and their share of the report's
// visitors, and its pageviews.
type HostnameRow struct {
	Hostname            string
	Visitors, Pageviews int64
	Percentage          float64
}

// Hostnames is one page of the hostnames report: its rows, the hosts of
// the range (Total), and which page of the list it is.
type Hostnames struct {
	Meta        Meta
	Rows        []HostnameRow
	Total       int64
	Page, Limit int
}

// SourceRow is a row of the sources report.
type SourceRow struct {
	Source, Type        string
	Visitors, Pageviews int64
	BounceRate          float64
}

// ChannelRow is a row of the channels report: a channel (Channels), its
// visitors and their share of the report's visitors, its visits
// (sessions), pageviews, bounce rate and mean visit duration in seconds.
type ChannelRow struct {
	Channel                     string
	Visitors, Visits, Pageviews int64
	Percentage                  float64
	BounceRate, VisitDuration   float64
}

// EntryRow is a row of the entry-pages report.
type EntryRow struct {
	Path                  string
	Entries               int64
	EntryRate, BounceRate float64
}

// ExitRow is a row of the exit-pages report.
type ExitRow struct {
	Path     string
	Exits    int64
	ExitRate float64
}

// Share is a row of a visitors breakdown: a value (UnknownLabel, or
// geo.UnknownCountryCode for countries, when unknown; a region's code may
// be empty), its name for countries and regions, its visitors and their
// share of the report's visitors.
type Share struct {
	Value, Name string
	Visitors    int64
	Percentage  float64
}

// Campaigns is the campaigns report: visits by the values of one UTM
// parameter (By).
type Campaigns struct {
	List[CampaignRow]
	By string
}

// CampaignRow is a row of the campaigns report: a UTM value, its visitors
// and their share of the report's visitors, its pageviews and bounce rate.
type CampaignRow struct {
	Value               string
	Visitors, Pageviews int64
	Percentage          float64
	BounceRate          float64
}

// EventRow is a row of the custom events report: how often the event
// happened, by how many visitors, and that count ÷ all visitors × 100.
type EventRow struct {
	Name            string
	Count, Visitors int64
	ConversionRate  float64
}

// EventProperties is the custom-properties report of one custom event
// (Event): without a Property, the prop keys its events carried (Keys);
// with one, its events by that key's value (Values).
type EventProperties struct {
	Meta            Meta
	Event, Property string
	Keys            []PropertyKeyRow
	Values          []PropertyValueRow
}

// PropertyKeyRow is a prop key of an event: how many of its events carried
// it, and how many visitors sent those.
type PropertyKeyRow struct {
	Key             string
	Count, Visitors int64
}

// PropertyValueRow is a value of the report's property (NoneLabel for the
// events without it): how often the event happened with it, by how many
// visitors, and that count's conversion rate, as the events report has it.
type PropertyValueRow struct {
	Value           string
	Count, Visitors int64
	ConversionRate  float64
}

// Realtime is who is on the site at At.
type Realtime struct {
	model.Realtime
	At time.Time
}

// IngestionCounts are the events of a span: accepted and counted, accepted
// and filtered as bots, refused, and kept out by the site's exclusions.
type IngestionCounts struct {
	Accepted, Bots, Refused, Excluded int64
}

// IngestionDay is one day's counts.
type IngestionDay struct {
	Date time.Time
	IngestionCounts
}

// RefusalCount is the events refused for one reason.
type RefusalCount struct {
	Reason string
	Count  int64
}

// Ingestion is a site's tracking health over a range.
type Ingestion struct {
	Meta   Meta
	Totals IngestionCounts
	Bots   BotTraffic
	// Refused lists every reason, the largest count first.
	Refused []RefusalCount
	Series  []IngestionDay
}

// GoalConversion is a goal's figures: completions and the visitors who
// completed it, completions ÷ visitors × 100 (Rate; a goal completed
// repeatedly passes 100), converters ÷ visitors × 100 (VisitorRate), the
// previous period's rate and the percent change from it (nil when it was 0).
type GoalConversion struct {
	Goal                        model.Goal
	Completions, Converters     int64
	Rate, VisitorRate, PrevRate float64
	Change                      *float64
}

// Conversions is every goal of a site over a range, with its visitors.
type Conversions struct {
	Meta     Meta
	Visitors int64
	Goals    []GoalConversion
}

// RevenueTotals are amounts in minor units of the base currency and counts;
// Net is Revenue - Refunds.
type RevenueTotals struct {
	Revenue, Refunds, Net, Payments, RefundCount, PayingVisitors int64
	// ClientReported is the revenue the tracking script reported.
	ClientReported int64
}

// RevenueSummary are the totals with the range's visitors, the revenue
// per visitor (minor units, two decimals) and the paying visitor rate.
type RevenueSummary struct {
	RevenueTotals
	Visitors                             int64
	RevenuePerVisitor, PayingVisitorRate float64
}

// RevenueRow is a row of a revenue breakdown.
type RevenueRow struct {
	Value string
	RevenueTotals
}

// RevenueDay is one day of revenue.
type RevenueDay struct {
	Date time.Time
	RevenueTotals
}

// RevenueReport is the revenue report.
type RevenueReport struct {
	Meta Meta
	// Currency is the site's base currency, that of every amount.
	Currency string
	Totals   RevenueSummary
	// Breakdown has a row per value of By, when there is a By.
	Breakdown []RevenueRow
	Series    []RevenueDay
	By        string
	// Attribution is the model of the breakdown and filters; LegacyModel
	// its name as the deprecated model parameter ("" if none).
	Attribution, LegacyModel string
	// Pending counts payments waiting for the exchange rate of their day.
	Pending int64
	// ClientRevenueIncluded says whether revenue the tracking script
	// reported counts in the figures (the site's setting).
	ClientRevenueIncluded bool
}

// FunnelStepReport is one step of the funnel report (see FunnelReport).
type FunnelStepReport struct {
	Step                      int
	Label                     string
	Visitors                  int64
	ConversionRate            float64
	Dropoff                   int64
	DropoffRate               float64
	MedianSecondsFromPrevious *float64
	Revenue                   int64
}

// FunnelReport is how many visitors went through a funnel's steps: per
// step, the visitors who reached it (step 1 in the range, every step within
// the window), their share of step 1's, the drop from the previous step,
// the median time from it (nil for step 1 and for a step nobody reached),
// and the net revenue they paid in the range.
type FunnelReport struct {
	Meta   Meta
	Funnel model.Funnel
	// ConversionRate is the last step's visitors ÷ the first's × 100.
	ConversionRate float64
	Currency       string
	Steps          []FunnelStepReport
}

// JourneyRow is a path of the journeys report: its pages in order, the
// sessions that took it and their visitors, and those sessions' share of
// the report's sessions (Journeys.Sessions), in percent.
type JourneyRow struct {
	Pages              []string
	Sessions, Visitors int64
	Percentage         float64
}

// Journeys is the journeys report (see JourneyQuery): its parameters, the
// sessions with a path and their visitors (every path's, not only the
// rows'), and the most common paths.
type Journeys struct {
	Meta               Meta
	Steps              int
	Start, End         string
	Sessions, Visitors int64
	Rows               []JourneyRow
}

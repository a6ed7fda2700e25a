package stats

import (
	"fmt"
	"time"

	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/pagepattern"
)

// Table is a ClickHouse table the statistics read.
type Table string

// Tables.
const (
	Events    Table = "events"
	Sessions  Table = "sessions"
	BotEvents Table = "bot_events"
	Payments  Table = "payments"
	// Refusals counts refused events per quarter of an hour (tracking health).
	Refusals Table = "ingest_refusals"
	// Engagements are the scroll depths the tracking script reports.
	Engagements Table = "engagements"
)

// timeColumn is the column a table is bounded by in time: events by when
// they happened, sessions by when they started, payments by when they were made.
var timeColumn = map[Table]string{Events: "ts", Sessions: "started_at", BotEvents: "ts", Payments: "ts", Refusals: "ts",
	Engagements: "ts"}

// keyDays are the raw tables whose sort key orders a site's rows by the day
// of their time (ORDER BY (site_key, toDate(ts), …)).
var keyDays = map[Table]bool{Events: true, Sessions: true, Engagements: true}

// timeRange is the condition that t's rows fall in [from, to), whose
// arguments timeArgs gives: on a table of keyDays also the days around it,
// which ClickHouse 18.16 narrows the rows it reads by, where it hardly
// narrows them by the time alone (a site's US sessions of one day, out of
// 100M events: 445 ms without the days, 18 ms with them). The days reach
// one further on either side, so that the bound holds whatever time zone
// turns the times into days.
func timeRange(t Table) string {
	tc := timeColumn[t]
	cond := tc + " >= ? AND " + tc + " < ?"
	if keyDays[t] {
		cond += " AND toDate(" + tc + ") >= toDate(?) - 1 AND toDate(" + tc + ") <= toDate(?) + 1"
	}
	return cond
}

// timeArgs are the arguments of timeRange(t) for [from, to).
func timeArgs(t Table, from, to time.Time) []any {
	args := []any{from.UTC(), to.UTC()}
	if keyDays[t] {
		args = append(args, from.UTC(), to.UTC())
	}
	return args
}

// Metric is an aggregate that knows its ClickHouse expression on each table
// it is defined for. Session metrics sum with sign, so the cancel rows of the
// VersionedCollapsingMergeTree take out the states they replace.
type Metric struct {
	Name  string
	exprs map[Table]string
	args  []any
	// count metrics are scaled back when a query runs on a sample.
	count bool
}

// uniqVisitors counts distinct visitors with ClickHouse's uniqCombined: exact
// for small sets (a few thousand distinct values per figure), within about
// 1 % beyond. Measured on 10M events here: per page 0.49 s against 0.67 s
// for uniq and far more for uniqExact, whose grouped states grow without bound.
const uniqVisitors = "uniqCombined(visitor_id)"

// knownVisitor is the condition of a row that has a visitor. A payment sent
// without one is stored with visitor id 0, and so is the event it names:
// that event counts as an event and a conversion, but 0 is nobody, never a
// visitor. Sessions always have one (such an event has no session).
const knownVisitor = "visitor_id != 0"

// uniqEventVisitors counts the distinct visitors of events (uniqVisitors of
// the rows with a known visitor).
const uniqEventVisitors = "uniqCombinedIf(visitor_id, " + knownVisitor + ")"

// The metric vocabulary.
var (
	Visitors     = Metric{Name: "visitors", count: true, exprs: map[Table]string{Events: uniqEventVisitors, Sessions: uniqVisitors}}
	Pageviews    = Metric{Name: "pageviews", count: true, exprs: map[Table]string{Events: "sum(is_pageview)", Sessions: "sum(sign * pageviews)"}}
	EventCount   = Metric{Name: "events", count: true, exprs: map[Table]string{Events: "count()", BotEvents: "count()", Refusals: "sum(events)"}}
	SessionCount = Metric{Name: "sessions", count: true, exprs: map[Table]string{Sessions: "sum(sign)"}}
	Bounces      = Metric{Name: "bounces", count: true, exprs: map[Table]string{Sessions: "sum(sign * is_bounce)"}}
	DurationSum  = Metric{Name: "duration_sum", count: true, exprs: map[Table]string{Sessions: "sum(sign * duration)"}}
	// TimeOnPrevSum adds up the seconds spent on the previous page of each
	// pageview; grouped by PrevPathname it is the time spent on each page.
	TimeOnPrevSum = Metric{Name: "time_on_prev_sum", count: true, exprs: map[Table]string{Events: "sum(time_on_prev)"}}
)

// Dimension is a column (or expression) results can be grouped and filtered by.
type Dimension struct {
	Name  string
	exprs map[Table]string
	args  []any
	// mutable dimensions change between versions of a session (the exit
	// page): a visitor's cancelled rows then sit in other groups than their
	// live row, so distinct visitors cannot be counted per group.
	mutable bool
	// zone is the time zone of a day dimension (Day): a rollup can group
	// by it only if its units never straddle that zone's midnight.
	zone string
	// visit: a filter on it selects the visits with an event that matches,
	// whatever table the report reads (PropFilter): a prop is an event's,
	// and pageviews seldom carry the props of the custom events.
	visit bool
}

func both(col string) map[Table]string { return map[Table]string{Events: col, Sessions: col} }

// all is a column of the same name in events, sessions and payments (for
// payments: of the last touch).
func all(col string) map[Table]string {
	return map[Table]string{Events: col, Sessions: col, Payments: col}
}

// The dimension vocabulary.
var (
	Pathname = Dimension{Name: "pathname", exprs: map[Table]string{Events: "pathname"}}
	// Hostname is the host of an event's page, in lower case. It is an
	// event's, as the page is: a visit may cross hosts (the sessions
	// table's hostname is the first event's, which is not the visit's host).
	Hostname     = Dimension{Name: "hostname", exprs: map[Table]string{Events: "hostname"}}
	PrevPathname = Dimension{Name: "prev_pathname", exprs: map[Table]string{Events: "prev_pathname"}}
	EventName    = Dimension{Name: "event_name", exprs: map[Table]string{Events: "name"}}
	// IsPageview is 1 for pageviews, 0 for custom events.
	IsPageview = Dimension{Name: "is_pageview", exprs: map[Table]string{Events: "is_pageview"}}
	// customEvents keeps the custom events (the events report, event goals).
	customEvents = NotEq(IsPageview, 1)
	// BotReason is what a bot event was recognised as (model.BotCategory).
	BotReason = Dimension{Name: "reason", exprs: map[Table]string{BotEvents: "reason"}}
	// RefusalReason is why events were refused (model.RefusalReasons).
	RefusalReason = Dimension{Name: "reason", exprs: map[Table]string{Refusals: "reason"}}
	EntryPage     = Dimension{Name: "entry_page", exprs: map[Table]string{Sessions: "entry_page"}}
	ExitPage      = Dimension{Name: "exit_page", exprs: map[Table]string{Sessions: "exit_page"}, mutable: true}
	Source        = Dimension{Name: "source", exprs: both("referrer_source")}
	SourceType    = Dimension{Name: "source_type", exprs: both("source_type")}
	UTMSource     = Dimension{Name: "utm_source", exprs: both("utm_source")}
	UTMMedium     = Dimension{Name: "utm_medium", exprs: both("utm_medium")}
	UTMCampaign   = Dimension{Name: "utm_campaign", exprs: both("utm_campaign")}
	UTMContent    = Dimension{Name: "utm_content", exprs: both("utm_content")}
	Device        = Dimension{Name: "device", exprs: both("device")}
	Browser       = Dimension{Name: "browser", exprs: both("browser")}
	OS            = Dimension{Name: "os", exprs: both("os")}
	// BrowserVersion and OSVersion are major.minor ("120.0", "17.1"); a
	// version is one browser's or system's, so they are read with it.
	BrowserVersion = Dimension{Name: "browser_version", exprs: both("browser_version")}
	OSVersion      = Dimension{Name: "os_version", exprs: both("os_version")}
	Country        = Dimension{Name: "country", exprs: both("country_code")}
	Region         = Dimension{Name: "region", exprs: both("region_code")}
	RegionName     = Dimension{Name: "region_name", exprs: both("region_name")}
	City           = Dimension{Name: "city", exprs: both("city")}
	// PropKey is each key of an event's props: grouped by it, an event is
	// a row under every key it carries (once: an event's keys are unique).
	PropKey = Dimension{Name: "prop_key", exprs: map[Table]string{Events: "arrayJoin(props_keys)"}}
)

// PropValue is the value an event's props hold for key, NoneLabel for an
// event without it (the key is bound, never formatted into the SQL).
// indexOf and has read the arrays alike on ClickHouse 18.16 and current
// releases, which have no Map type for props in common.
func PropValue(key string) Dimension {
	return Dimension{Name: "prop_value", exprs: map[Table]string{
		Events: "if(has(props_keys, ?), props_values[indexOf(props_keys, ?)], ?)",
	}, args: []any{key, key, NoneLabel}}
}

// PropFilter is what a filter on the prop key compares: the value an
// event's props hold for it, "" for an event without it (an empty value is
// never a filter's). It filters visits: the sessions with an event that
// carries the value. Its name is its query parameter, props[key].
func PropFilter(key string) Dimension {
	return Dimension{Name: PropParam(key), exprs: map[Table]string{Events: "props_values[indexOf(props_keys, ?)]"},
		args: []any{key}, visit: true}
}

// leftOnHost is 1 for a pageview whose time_on_prev is of a pageview on a
// host that host keeps (a filter on Hostname, by any of its tests), 0 for
// the others: that previous pageview is the session's pageview of
// prev_pathname time_on_prev seconds before it, looked up among the
// pageviews of such hosts of [from, to) (session, page and time), of the
// same sample of visitors as the query (sample 1..99; else all), whose
// visits alone it can hold.
func leftOnHost(site model.SiteID, from, to time.Time, host Filter, sample int) Dimension {
	events := "events" + sampleClause(sample)
	cond, condArgs := host.condition(Hostname.exprs[Events])
	return Dimension{Name: "left_on_host", exprs: map[Table]string{
		Events: "((session_id, prev_pathname, ts - time_on_prev) IN (SELECT session_id, pathname, ts FROM " + events +
			" WHERE site_key = cityHash64(?) AND " + timeRange(Events) + " AND is_pageview = 1 AND " + cond + "))",
	}, args: append(append([]any{string(site)}, timeArgs(Events, from, to)...), condArgs...)}
}

// ofEvent reports whether d is an event's own and may change within a visit
// (the page, the host): sessions do not hold it, and a filter on it selects
// the visits with such an event.
func (d Dimension) ofEvent() bool {
	_, onSessions := d.exprs[Sessions]
	return !onSessions
}

// IsPropFilter reports whether f filters by a prop (PropFilter).
func IsPropFilter(f Filter) bool { return f.Dim.visit }

// Day groups by calendar day in time zone tz (an IANA name, validated by the
// caller; it is bound as a parameter, never formatted into the SQL).
func Day(tz string) Dimension {
	return Dimension{Name: "date", exprs: map[Table]string{
		Events: "toDate(ts, ?)", Sessions: "toDate(started_at, ?)", BotEvents: "toDate(ts, ?)", Payments: "toDate(ts, ?)",
		Refusals: "toDate(ts, ?)",
	}, args: []any{tz}, zone: tz}
}

// Bucket groups events, or sessions by their start, by the interval's
// unit in time zone tz: the day as Day does; the week by its Monday and
// the month by its first day, days of tz both (a rollup of whole days of
// tz serves them, as it serves Day);
// the hour by its start, the instant in seconds (an hour a clock change
// repeats is two). No rollup holds hours.
func Bucket(interval, tz string) Dimension {
	switch interval {
	case IntervalHour:
		return Dimension{Name: "hour", exprs: map[Table]string{Events: "toUInt32(toStartOfHour(ts, ?))",
			Sessions: "toUInt32(toStartOfHour(started_at, ?))"}, args: []any{tz}}
	case IntervalWeek:
		return Dimension{Name: "week", exprs: map[Table]string{Events: "toMonday(toDate(ts, ?))",
			Sessions: "toMonday(toDate(started_at, ?))"}, args: []any{tz}, zone: tz}
	case IntervalMonth:
		return Dimension{Name: "month", exprs: map[Table]string{Events: "toStartOfMonth(toDate(ts, ?))",
			Sessions: "toStartOfMonth(toDate(started_at, ?))"}, args: []any{tz}, zone: tz}
	}
	return Day(tz)
}

// goalCondition is the ClickHouse condition an event meets when it completes g.
func goalCondition(g model.Goal) (string, []any) {
	if g.Type == model.GoalPageview {
		cond, args := pathCondition(g.PagePath)
		return "is_pageview = 1 AND " + cond, args
	}
	return "is_pageview = 0 AND name = ?", []any{g.EventName}
}

// Completions counts the events that complete g.
func Completions(g model.Goal) Metric {
	cond, args := goalCondition(g)
	return Metric{Name: "completions:" + string(g.ID), count: true, exprs: map[Table]string{Events: "countIf(" + cond + ")"}, args: args}
}

// Converters counts the visitors who completed g at least once.
func Converters(g model.Goal) Metric {
	cond, args := goalCondition(g)
	return Metric{Name: "converters:" + string(g.ID), count: true,
		exprs: map[Table]string{Events: "uniqCombinedIf(visitor_id, " + knownVisitor + " AND " + cond + ")"}, args: args}
}

// Revenue metrics, in minor units of the base currency. Revenue,
// PaymentCount and PayingVisitors count every payment; their Verified
// variants leave out what the tracking script reported (unsigned), which
// ClientReported counts.
var (
	Revenue         = paymentMetric("revenue", "sumIf(base_amount, kind = 'payment'%s)", "")
	VerifiedRevenue = paymentMetric("revenue", "sumIf(base_amount, kind = 'payment'%s)", verified)
	Refunds         = Metric{Name: "refunds", exprs: map[Table]string{Payments: "sumIf(base_amount, kind = 'refund')"}}
	PaymentCount    = paymentMetric("payments", "countIf(kind = 'payment'%s)", "")
	VerifiedCount   = paymentMetric("payments", "countIf(kind = 'payment'%s)", verified)
	RefundCount     = Metric{Name: "refund_count", exprs: map[Table]string{Payments: "countIf(kind = 'refund')"}}
	PayingVisitors  = paymentMetric("paying_visitors", "uniqCombinedIf(visitor_id, kind = 'payment' AND "+knownVisitor+"%s)", "")
	VerifiedPaying  = paymentMetric("paying_visitors", "uniqCombinedIf(visitor_id, kind = 'payment' AND "+knownVisitor+"%s)", verified)
	ClientReported  = paymentMetric("client_reported", "sumIf(base_amount, kind = 'payment'%s)", " AND provider = '"+model.ProviderTracker+"'")
	// BaseCurrency is the currency payments were converted into.
	BaseCurrency = Dimension{Name: "base_currency", exprs: map[Table]string{Payments: "base_currency"}}
)

// verified leaves out payments the tracking script reported.
const verified = " AND provider != '" + model.ProviderTracker + "'"

// paymentMetric is a metric of the payments table whose expression takes a
// further condition (format's %s).
func paymentMetric(name, format, cond string) Metric {
	return Metric{Name: name, exprs: map[Table]string{Payments: fmt.Sprintf(format, cond)}}
}

// Attribution models of the revenue report: which of a payment's touches its
// breakdowns and filters read.
const (
	// LastNonDirect is the visitor's last session before the payment that
	// is not direct (a source, or a campaign's UTM parameter: see
	// revenue.attribute), else their last session (the default).
	LastNonDirect = "last_non_direct"
	// LastTouch is the visitor's last session before the payment, direct included.
	LastTouch = "last_touch"
	// FirstTouch is the visitor's first session.
	FirstTouch = "first_touch"
)

// AttributionModels are the models, the default first.
var AttributionModels = []string{LastNonDirect, LastTouch, FirstTouch}

// attributionPrefix starts the payments' attribution columns of each model.
var attributionPrefix = map[string]string{LastNonDirect: "", LastTouch: "lt_", FirstTouch: "ft_"}

// attributionColumn is the payments' column of an attribution field (a
// column of the last non-direct touch: source, utm_campaign…) for a model.
func attributionColumn(attribution, col string) string {
	return attributionPrefix[attribution] + col
}

// RevenueBreakdowns name the attribution field of each breakdown; the
// channel is the one worked out of several (paymentChannel).
var RevenueBreakdowns = map[string]string{
	"source":   "source",
	"channel":  "",
	"page":     "entry_page",
	"campaign": "utm_campaign",
	"country":  "country_code",
	"device":   "device",
}

// RevenueBy is the dimension of a breakdown (a key of RevenueBreakdowns) for
// an attribution model, as the breakdown's rows are labelled: the payments
// tally could tie to no visit (attributed 0) are UnattributedLabel, those of
// a visit without a value NoneLabel. The payments of one label are grouped
// in the query, so that a row counts each paying visitor once, however many
// of its payments had another value or none.
func RevenueBy(breakdown, attribution string) Dimension {
	if breakdown == "channel" { // every touch has a channel, Direct at least
		d := paymentChannel(attribution)
		d.Name = "revenue_channel"
		return d
	}
	col := attributionColumn(attribution, RevenueBreakdowns[breakdown])
	return Dimension{Name: "revenue_" + breakdown, args: []any{UnattributedLabel, NoneLabel},
		exprs: map[Table]string{Payments: "multiIf(attributed = 0, ?, " + col + " = '', ?, " + col + ")"}}
}

// pathKeyCondition is the condition that keeps, of a column of pages
// sorted as text, the pages a page path pattern may match
// (pagepattern.Pages): the one page, a path and its routes, or the pages
// that begin with the pattern's text before its first wildcard. A pattern
// no longer valid (changed by hand) keeps none.
func pathKeyCondition(pattern string) (string, []any) {
	pat, err := pagepattern.Parse(pattern)
	if err != nil {
		return "0", nil
	}
	switch pages := pat.Pages(); {
	case pages.Exact:
		return "pathname = ?", []any{pages.Prefix}
	case pages.AnyRoute: // the path, then its routes: from P# up to P$
		return "(pathname = ? OR (pathname >= ? AND pathname < ?))", []any{pages.Prefix, pages.Prefix + "#", pages.Prefix + "$"}
	default:
		if hi := above(pages.Prefix); hi != "" {
			return "(pathname >= ? AND pathname < ?)", []any{pages.Prefix, hi}
		}
		return "pathname >= ?", []any{pages.Prefix}
	}
}

// above is the least string above every string that begins with prefix, or
// "" when no string is.
func above(prefix string) string {
	for n := len(prefix); n > 0; n-- {
		if prefix[n-1] < 0xff {
			return prefix[:n-1] + string([]byte{prefix[n-1] + 1})
		}
	}
	return ""
}

// pathCondition is the ClickHouse condition a pathname meets when it is a
// page of the page path pattern, and its arguments: the pattern's own
// (pagepattern.Pattern.Condition), which the ingest path's matcher of
// excluded pages agrees with. A pattern no longer valid (changed by hand)
// matches no page.
func pathCondition(pattern string) (string, []any) {
	pat, err := pagepattern.Parse(pattern)
	if err != nil {
		return "0", nil
	}
	return pat.Condition("pathname")
}

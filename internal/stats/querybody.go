package stats

import (
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/pagepattern"
)

// QueryBody is a query of the Plausible-compatible Stats API v2 (POST
// /api/v2/query) as decoded from JSON: DateRange is a string or a list of
// two dates, and each filter a list [operator, dimension, [values]].
type QueryBody struct {
	SiteID     string
	DateRange  any
	Metrics    []string
	Dimensions []string
	Filters    []any
	OrderBy    [][]string
	Limit      *int
	Offset     *int
	TotalRows  bool
	TimeLabels bool
}

// Limits of a v2 query.
const (
	QueryDefaultLimit = 10_000
	QueryMaxLimit     = 10_000
	QueryMaxDims      = 3
	QueryMaxOffset    = 1_000_000
)

// The relative date ranges of a v2 query; each ends today in the site's
// time zone (RelativeRange).
var relativeRanges = []string{"day", "7d", "30d", "month", "6mo", "12mo", "year"}

// V2Query is a validated v2 query (ParseQueryBody), ready for Service.Query.
type V2Query struct {
	Site model.SiteID
	// Relative is one of relativeRanges, else First and Last are the
	// inclusive dates of the range (at 00:00 UTC, as Request's).
	Relative    string
	First, Last time.Time
	Metrics     []string
	dims        []queryDim
	filters     []queryFilter
	Order       []QueryOrder
	Limit       int
	Offset      int
	TotalRows   bool
	// TimeLabels asks for every unit of the time dimension in the range
	// (V2Result.TimeLabels).
	TimeLabels bool
	// DimNames and RawFilters are the dimensions and filters as given,
	// echoed in the answer.
	DimNames   []string
	RawFilters []any
	// parts are the tables that answer it (plan); none when goals do.
	parts []queryPart
	// goals: the query is by event:goal (goalRows).
	goals bool
	// Segment is the saved segment whose filters apply too ("" for none),
	// given by the filter segmentField names.
	Segment      model.SegmentID
	segmentField string
}

// QueryOrder sorts the results by a metric or dimension of the query.
type QueryOrder struct {
	Key  string
	Desc bool
}

// queryFilter is a parsed filter on one dimension and the index it had in
// the body (a logical filter may give several).
type queryFilter struct {
	index  int
	filter Filter
}

// queryDim is a dimension of the v2 vocabulary: tally's Dimension, its
// kind (event, visit or time), and how an empty value is labelled.
type queryDim struct {
	name string
	dim  Dimension
	kind dimKind
	// interval of a time dimension (IntervalHour…)
	interval string
	// empty labels a row without a value ("" keeps it empty)
	empty string
	// filter is the FilterParams rule of a value filtering by it, if any
	filter func(string) (string, bool)
}

type dimKind int

const (
	eventDim dimKind = iota
	visitDim
	timeDim
	// goalDim is event:goal: the site's goals (goalRows)
	goalDim
)

// queryDims are the v2 dimensions tally groups by, each tally's own.
var queryDims = map[string]queryDim{
	"event:page":            {dim: Pathname, kind: eventDim},
	"event:hostname":        {dim: Hostname, kind: eventDim},
	"event:name":            {dim: EventName, kind: eventDim},
	"event:goal":            {kind: goalDim},
	"visit:entry_page":      {dim: EntryPage, kind: visitDim},
	"visit:exit_page":       {dim: ExitPage, kind: visitDim},
	"visit:source":          {dim: Source, kind: visitDim},
	"visit:channel":         {dim: Channel, kind: visitDim},
	"visit:utm_source":      {dim: UTMSource, kind: visitDim, empty: NoneLabel},
	"visit:utm_medium":      {dim: UTMMedium, kind: visitDim, empty: NoneLabel},
	"visit:utm_campaign":    {dim: UTMCampaign, kind: visitDim, empty: NoneLabel},
	"visit:utm_content":     {dim: UTMContent, kind: visitDim, empty: NoneLabel},
	"visit:device":          {dim: Device, kind: visitDim, empty: UnknownLabel},
	"visit:browser":         {dim: Browser, kind: visitDim, empty: UnknownLabel},
	"visit:browser_version": {dim: BrowserVersion, kind: visitDim, empty: UnknownLabel},
	"visit:os":              {dim: OS, kind: visitDim, empty: UnknownLabel},
	"visit:os_version":      {dim: OSVersion, kind: visitDim, empty: UnknownLabel},
	"visit:country":         {dim: Country, kind: visitDim, empty: "ZZ"},
	"visit:region":          {dim: Region, kind: visitDim, empty: UnknownLabel},
	"visit:city":            {dim: City, kind: visitDim, empty: UnknownLabel},
	"time:hour":             {kind: timeDim, interval: IntervalHour},
	"time:day":              {kind: timeDim, interval: IntervalDay},
	"time:week":             {kind: timeDim, interval: IntervalWeek},
	"time:month":            {kind: timeDim, interval: IntervalMonth},
}

// queryFilterParams are the v1 filter parameters of the v2 dimensions that
// filter (FilterParams: their rules of values apply to is and is_not).
var queryFilterParams = map[string]string{
	"event:page": "pathname", "event:hostname": "hostname", "visit:source": "source", "visit:channel": "channel",
	"visit:utm_source": "utm_source", "visit:utm_medium": "utm_medium", "visit:utm_campaign": "utm_campaign",
	"visit:utm_content": "utm_content", "visit:device": "device", "visit:browser": "browser",
	"visit:browser_version": "browser_version", "visit:os": "os", "visit:os_version": "os_version",
	"visit:country": "country", "visit:region": "region", "visit:city": "city",
}

// queryMetrics are the v2 metrics tally answers.
var queryMetrics = []string{"visitors", "visits", "pageviews", "views_per_visit", "bounce_rate", "visit_duration", "events",
	"percentage", "conversion_rate", "time_on_page", "scroll_depth"}

// goalMetrics are the metrics of the goals (event:goal).
var goalMetrics = []string{"visitors", "events", "conversion_rate"}

// pageMetrics are a page's figures beside its events' (fillPageMetrics),
// by event:page alone.
var pageMetrics = map[string]bool{"time_on_page": true, "scroll_depth": true}

// visitMetrics are counted from sessions whatever the dimensions: a
// visit's figures are its session's.
var visitMetrics = map[string]bool{"visits": true, "views_per_visit": true, "bounce_rate": true, "visit_duration": true}

// propDimPrefix starts a dimension (and filter) on an event's prop.
const propDimPrefix = "event:props:"

// lookupDim is the v2 dimension named name.
func lookupDim(name string) (queryDim, bool) {
	if key, ok := strings.CutPrefix(name, propDimPrefix); ok {
		if !model.PropKeyFits(key) {
			return queryDim{}, false
		}
		return queryDim{name: name, dim: PropValue(key), kind: eventDim}, true
	}
	d, ok := queryDims[name]
	d.name = name
	return d, ok
}

// ParseQueryBody validates a v2 query: every problem is a 400 naming its
// field (site_id, date_range, metrics, dimensions, filters.N, order_by.N,
// pagination.limit…). Whether the site and the range fit is Service.Query's.
func ParseQueryBody(b QueryBody) (V2Query, error) {
	q := V2Query{Site: model.SiteID(strings.TrimSpace(b.SiteID)), TotalRows: b.TotalRows, TimeLabels: b.TimeLabels,
		RawFilters: b.Filters}
	if q.Site == "" {
		return q, errs.InvalidField("site_id", "site_id is required")
	}
	if len(q.Site) > 64 {
		return q, errs.E(errs.NotFound, "site_not_found", "site not found").WithField("site_id")
	}
	var err error
	if q.Relative, q.First, q.Last, err = parseDateRange(b.DateRange); err != nil {
		return q, err
	}
	if q.Metrics, err = parseQueryMetrics(b.Metrics, len(b.Dimensions) > 0); err != nil {
		return q, err
	}
	if q.dims, err = parseQueryDims(b.Dimensions); err != nil {
		return q, err
	}
	q.DimNames = b.Dimensions
	if q.TimeLabels && q.timeIndex() < 0 {
		return q, errs.InvalidField("include.time_labels", "time labels need a time dimension (time:hour, time:day, time:week or time:month)")
	}
	if q.filters, err = q.parseFilters(b.Filters); err != nil {
		return q, err
	}
	if q.Order, err = parseQueryOrder(b.OrderBy, q.Metrics, b.Dimensions); err != nil {
		return q, err
	}
	q.Limit, q.Offset = QueryDefaultLimit, 0
	if b.Limit != nil {
		if *b.Limit < 1 || *b.Limit > QueryMaxLimit {
			return q, errs.InvalidField("pagination.limit", "must be an integer from 1 to %d", QueryMaxLimit)
		}
		q.Limit = *b.Limit
	}
	if b.Offset != nil {
		if *b.Offset < 0 || *b.Offset > QueryMaxOffset {
			return q, errs.InvalidField("pagination.offset", "must be an integer from 0 to %d", QueryMaxOffset)
		}
		q.Offset = *b.Offset
	}
	return q, q.plan()
}

// parseDateRange reads date_range: a relative range's name, or two dates
// (YYYY-MM-DD, the first not after the second, at most MaxRangeYears apart).
func parseDateRange(v any) (relative string, first, last time.Time, err error) {
	bad := errs.InvalidField("date_range", "must be one of %s, or a list of two dates [\"YYYY-MM-DD\", \"YYYY-MM-DD\"]",
		strings.Join(relativeRanges, ", "))
	switch v := v.(type) {
	case nil:
		return "", first, last, errs.InvalidField("date_range", "date_range is required")
	case string:
		for _, r := range relativeRanges {
			if v == r {
				return v, first, last, nil
			}
		}
		return "", first, last, bad
	case []any:
		if len(v) != 2 {
			return "", first, last, bad
		}
		var days [2]time.Time
		for i, d := range v {
			s, ok := d.(string)
			if !ok {
				return "", first, last, bad
			}
			if days[i], err = time.Parse(time.DateOnly, s); err != nil {
				return "", first, last, bad
			}
			if !InYears(days[i]) {
				return "", first, last, errs.InvalidField("date_range", "dates must be between %d and %d", FirstYear, LastYear)
			}
		}
		if days[1].Before(days[0]) {
			return "", first, last, errs.E(errs.Invalid, "invalid_date_range", "the first date must not be after the second").
				WithField("date_range")
		}
		if days[1].After(days[0].AddDate(MaxRangeYears, 0, 0)) {
			return "", first, last, errs.E(errs.Invalid, "invalid_date_range", "the range may span at most %d years", MaxRangeYears).
				WithField("date_range")
		}
		return "", days[0], days[1], nil
	}
	return "", first, last, bad
}

// RelativeRange is the inclusive dates of a relative range that ends on
// today (a date in the site's time zone, at 00:00 UTC): today alone (day),
// the last 7 or 30 days, this month, the last 6 or 12 months with this one,
// this year.
func RelativeRange(name string, today time.Time) (first, last time.Time) {
	month := time.Date(today.Year(), today.Month(), 1, 0, 0, 0, 0, time.UTC)
	switch name {
	case "7d":
		return today.AddDate(0, 0, -6), today
	case "30d":
		return today.AddDate(0, 0, -29), today
	case "month":
		return month, today
	case "6mo":
		return month.AddDate(0, -5, 0), today
	case "12mo":
		return month.AddDate(0, -11, 0), today
	case "year":
		return time.Date(today.Year(), 1, 1, 0, 0, 0, 0, time.UTC), today
	}
	return today, today
}

func parseQueryMetrics(names []string, withDims bool) ([]string, error) {
	if len(names) == 0 {
		return nil, errs.InvalidField("metrics", "metrics is required: a list of at least one of %s", strings.Join(queryMetrics, ", "))
	}
	seen := map[string]bool{}
	for _, m := range names {
		switch {
		case m == "group_conversion_rate":
			return nil, errs.InvalidField("metrics", "group_conversion_rate is not supported; conversion_rate is, by event:goal")
		case !contains(queryMetrics, m):
			return nil, errs.InvalidField("metrics", "unknown metric %q; tally answers %s", m, strings.Join(queryMetrics, ", "))
		case seen[m]:
			return nil, errs.InvalidField("metrics", "%s is given more than once", m)
		case m == "percentage" && !withDims:
			return nil, errs.InvalidField("metrics", "percentage needs dimensions: it is a row's share of the visitors")
		}
		seen[m] = true
	}
	return names, nil
}

func parseQueryDims(names []string) ([]queryDim, error) {
	if len(names) > QueryMaxDims {
		return nil, errs.InvalidField("dimensions", "at most %d dimensions", QueryMaxDims)
	}
	var out []queryDim
	times := 0
	for i, name := range names {
		d, ok := lookupDim(name)
		switch {
		case name == "time":
			return nil, errs.InvalidField("dimensions", "name the unit of time: time:hour, time:day, time:week or time:month")
		case strings.HasPrefix(name, propDimPrefix) && !ok:
			return nil, errs.InvalidField("dimensions", "a prop key is 1 to %d characters", model.MaxPropKeyLen)
		case !ok:
			return nil, errs.InvalidField("dimensions", "unknown or unsupported dimension %q", name)
		case contains(names[:i], name):
			return nil, errs.InvalidField("dimensions", "%s is given more than once", name)
		}
		if d.kind == timeDim {
			times++
		}
		out = append(out, d)
	}
	if times > 1 {
		return nil, errs.InvalidField("dimensions", "at most one time dimension")
	}
	return out, nil
}

// parseFilters reads the filters, all of which apply (AND): each
// [operator, dimension, [values]] (filterOps), or a logical filter that
// comes down to such filters (readFilter). Values are checked by the rule
// of the v1 filter of the dimension. ["is", "segment", [id]] applies a
// saved segment, as segment= does in v1.
func (q *V2Query) parseFilters(raw []any) ([]queryFilter, error) {
	var out []queryFilter
	props, count := 0, 0
	for i, r := range raw {
		field := fmt.Sprintf("filters.%d", i)
		leaves, err := readFilter(r, field, 0)
		if err != nil {
			return nil, err
		}
		for _, l := range leaves {
			if l.name == SegmentParam {
				if l.op != "is" || len(l.values) != 1 || q.Segment != "" || strings.TrimSpace(l.values[0]) == "" {
					return nil, errs.InvalidField(field, "a query applies one segment: [\"is\", \"segment\", [id]]")
				}
				q.Segment, q.segmentField = model.SegmentID(strings.TrimSpace(l.values[0])), field
				continue
			}
			var group []Filter
			if count += len(l.leaves()); count > maxQueryFilters {
				return nil, errs.InvalidField(field, "a query has at most %d filters, those inside and, or and not included", maxQueryFilters)
			}
			for _, x := range l.leaves() {
				f, err := leafFilter(x, field)
				if err != nil {
					return nil, err
				}
				if f.Dim.visit {
					if props++; props > MaxPropFilters {
						return nil, errs.InvalidField(field, "at most %d prop filters", MaxPropFilters)
					}
				}
				group = append(group, f)
			}
			f := group[0]
			if len(l.any) > 0 {
				f = AnyOf(group...)
			}
			out = append(out, queryFilter{index: i, filter: f})
		}
	}
	return out, nil
}

// leafFilter is the filter of l, a filter on one dimension.
func leafFilter(l filterLeaf, field string) (Filter, error) {
	f, err := queryFilterOf(l.op, l.name, l.values, field)
	if err != nil || l.visits == "" {
		return f, err
	}
	if _, ok := f.Dim.exprs[Events]; !ok || !l.ofEvent() {
		return Filter{}, errs.InvalidField(field, "%s takes a filter on an event's dimension (event:page, event:hostname, "+
			"event:name, event:props:<key>), not %s", l.visits, l.name)
	}
	return f.OfVisits(l.visits == "has_not_done"), nil
}

// filterOps are the operators of a filter on a dimension, each with its
// negation.
var filterOps = map[string]string{
	"is": "is_not", "is_not": "is", "contains": "contains_not", "contains_not": "contains",
	"matches": "matches_not", "matches_not": "matches",
	"matches_wildcard": "matches_wildcard_not", "matches_wildcard_not": "matches_wildcard",
}

// maxFilterDepth bounds how deep logical filters nest.
const maxFilterDepth = 8

// filterLeaf is a filter on one dimension: [op, name, values], of the
// visits with (has_done) or without (has_not_done) such an event when
// visits says so; or, when any holds filters, a group of them (an or).
type filterLeaf struct {
	op, name string
	values   []string
	visits   string
	any      []filterLeaf
}

// maxGroupFilters bounds the filters an or of several dimensions joins,
// and maxQueryFilters those of a query: each may be a scan of the events
// (a visit's, has_done), and a report applies a few.
const (
	maxGroupFilters = 20
	maxQueryFilters = 50
)

// leaves are l's filters: l, or its group's.
func (l filterLeaf) leaves() []filterLeaf {
	if len(l.any) > 0 {
		return l.any
	}
	return []filterLeaf{l}
}

// negate is l keeping what it does not: is_not for is, has_not_done for
// has_done.
func (l filterLeaf) negate() filterLeaf {
	switch l.visits {
	case "":
		l.op = filterOps[l.op]
	case "has_done":
		l.visits = "has_not_done"
	default:
		l.visits = "has_done"
	}
	return l
}

// ofEvent reports whether l is on an event's own dimension.
func (l filterLeaf) ofEvent() bool {
	return strings.HasPrefix(l.name, "event:") && l.name != "event:goal"
}

// readFilter reads a filter of the body into filters, all of which apply,
// each on one dimension or an or of such (a group): [op, dimension,
// [values]] is one; ["and", [filters]] is its filters' together; ["or",
// [filters]] is one (orOf), of filters and ors, not of ands; ["not",
// filter] negates (is_not for is, has_not_done for has_done): not of an or
// is its filters negated, all of which apply, and not of an and is an or of
// them negated; ["has_done", filter] and ["has_not_done", filter] are one,
// of an event's dimension, keeping the visits with (without) such an event.
// What tally cannot apply — an or of ands, a segment in an or or a not — is
// a 400 naming field.
func readFilter(raw any, field string, depth int) ([]filterLeaf, error) {
	f, ok := raw.([]any)
	if !ok || len(f) == 0 {
		return nil, errs.InvalidField(field, "a filter is [operator, dimension, [values]], [\"and\" or \"or\", [filters]], "+
			"[\"not\", filter] or [\"has_done\" or \"has_not_done\", filter]")
	}
	if depth > maxFilterDepth {
		return nil, errs.InvalidField(field, "logical filters nest at most %d deep", maxFilterDepth)
	}
	op, _ := f[0].(string)
	switch op {
	case "and", "or":
		list, ok := []any(nil), len(f) == 2
		if ok {
			list, ok = f[1].([]any)
		}
		if !ok || len(list) == 0 {
			return nil, errs.InvalidField(field, "%s is [%q, [filters]] with at least one filter", op, op)
		}
		var out []filterLeaf
		for _, sub := range list {
			leaves, err := readFilter(sub, field, depth+1)
			if err != nil {
				return nil, err
			}
			if op == "or" && len(leaves) != 1 {
				return nil, errs.InvalidField(field, "an or joins filters and ors, not an and: tally cannot apply an or of ands")
			}
			out = append(out, leaves...)
		}
		if op == "and" {
			return out, nil
		}
		return orOf(out, field)
	case "not":
		if len(f) != 2 {
			return nil, errs.InvalidField(field, "not is [\"not\", filter]")
		}
		leaves, err := readFilter(f[1], field, depth+1)
		if err != nil {
			return nil, err
		}
		// not of an or is none of it (an and of its filters negated), not
		// of an and is any of them negated (an or)
		var negated []filterLeaf
		for _, l := range leaves {
			if l.name == SegmentParam || (len(l.any) > 0 && len(leaves) > 1) {
				return nil, errs.InvalidField(field, "not takes filters and ors, or an and of filters; tally cannot negate a segment, "+
					"or an and holding an or")
			}
			for _, x := range l.leaves() {
				negated = append(negated, x.negate())
			}
		}
		if len(leaves) > 1 {
			return orOf(negated, field)
		}
		return negated, nil
	case "has_done", "has_not_done":
		if len(f) != 2 {
			return nil, errs.InvalidField(field, "%s is [%q, filter]", op, op)
		}
		leaves, err := readFilter(f[1], field, depth+1)
		if err != nil {
			return nil, err
		}
		bad := errs.InvalidField(field, "%s takes one filter on an event's dimension (event:page, event:hostname, "+
			"event:name, event:props:<key>), or an or of such", op)
		if len(leaves) != 1 {
			return nil, bad
		}
		// of an or: the visits with an event of one of its filters (an or
		// of has_done), or with none of them (has_not_done of each)
		var out []filterLeaf
		for _, l := range leaves[0].leaves() {
			if l.visits != "" || !l.ofEvent() {
				return nil, bad
			}
			l.visits = op
			out = append(out, l)
		}
		if op == "has_done" && len(out) > 1 {
			return []filterLeaf{{any: out}}, nil
		}
		return out, nil
	}
	if _, ok := filterOps[op]; !ok {
		return nil, errs.InvalidField(field, "the operator must be is, is_not, contains, contains_not, matches, matches_not, "+
			"matches_wildcard, matches_wildcard_not, and, or, not, has_done or has_not_done")
	}
	if len(f) == 4 {
		return nil, errs.InvalidField(field, "modifiers (such as case_sensitive) are not supported: contains is case-sensitive, and a pattern of matches may start with (?i)")
	}
	if len(f) != 3 {
		return nil, errs.InvalidField(field, "a filter is [operator, dimension, [values]]")
	}
	name, _ := f[1].(string)
	values, err := filterValues(f[2], field)
	if err != nil {
		return nil, err
	}
	return []filterLeaf{{op: op, name: name, values: values}}, nil
}

// orOf is the one filter an or of leaves is (each a filter or a group):
// of one dimension and one operator that selects, a filter of their values
// together (but for a prop, which filters by one value); else a group of
// them all, at most maxGroupFilters.
func orOf(leaves []filterLeaf, field string) ([]filterLeaf, error) {
	var all []filterLeaf
	for _, l := range leaves {
		if l.name == SegmentParam {
			return nil, errs.InvalidField(field, "an or cannot hold a segment")
		}
		all = append(all, l.leaves()...)
	}
	first := all[0]
	merged := filterLeaf{op: first.op, name: first.name, visits: first.visits}
	for _, l := range all {
		// negations do not merge: without one event or without another
		// is no one filter, nor is "not a" or "not b"; nor do a prop's
		// values, each of which is a filter of its own
		if l.name != first.name || l.op != first.op || l.visits != first.visits || strings.HasSuffix(l.op, "_not") ||
			l.visits == "has_not_done" || strings.HasPrefix(l.name, propDimPrefix) {
			if len(all) > maxGroupFilters {
				return nil, errs.InvalidField(field, "an or joins at most %d filters", maxGroupFilters)
			}
			return []filterLeaf{{any: all}}, nil
		}
		merged.values = append(merged.values, l.values...)
	}
	if len(merged.values) > maxFilterValues {
		return nil, errs.InvalidField(field, "a filter has at most %d values, an or's of one dimension together", maxFilterValues)
	}
	return []filterLeaf{merged}, nil
}

// maxFilterValues bounds the values of a filter.
const maxFilterValues = 100

// filterValues reads a filter's values: a list of 1 to maxFilterValues
// texts.
func filterValues(v any, field string) ([]string, error) {
	list, ok := v.([]any)
	if !ok || len(list) == 0 || len(list) > maxFilterValues {
		return nil, errs.InvalidField(field, "the values are a list of 1 to %d texts", maxFilterValues)
	}
	out := make([]string, len(list))
	for i, x := range list {
		s, ok := x.(string)
		if !ok || s == "" || !utf8.ValidString(s) || len(s) > 1024 {
			return nil, errs.InvalidField(field, "a value is a text of 1 to 1024 bytes")
		}
		out[i] = s
	}
	return out, nil
}

// queryFilterOf is the filter of op on the dimension named name.
func queryFilterOf(op, name string, values []string, field string) (Filter, error) {
	if key, ok := strings.CutPrefix(name, propDimPrefix); ok {
		if !model.PropKeyFits(key) {
			return Filter{}, errs.InvalidField(field, "a prop key is 1 to %d characters", model.MaxPropKeyLen)
		}
		if op != "is" || len(values) != 1 {
			return Filter{}, errs.InvalidField(field, "a prop filters visits by one value: [\"is\", %q, [value]]", name)
		}
		if utf8.RuneCountInString(values[0]) > model.MaxPropValueLen {
			return Filter{}, errs.InvalidField(field, "a prop value is 1 to %d characters", model.MaxPropValueLen)
		}
		return Eq(PropFilter(key), values[0]), nil
	}
	var dim Dimension
	// an empty value is read as its label, as the rows have it
	label := queryDims[name].empty
	if name == "event:name" {
		dim = EventName
	} else if param, ok := queryFilterParams[name]; ok {
		for _, p := range FilterParams {
			if p.Param == param {
				dim = p.Dim
				if op == "is" || op == "is_not" {
					for i, v := range values {
						if v == label {
							values[i] = ""
							continue
						}
						clean, valid := p.parse(v)
						if !valid {
							return Filter{}, errs.InvalidField(field, "a value of %s must be %s", name, p.rule)
						}
						if clean == label {
							clean = ""
						}
						values[i] = clean
					}
				}
			}
		}
	} else if name == "event:goal" {
		return Filter{}, errs.InvalidField(field, "tally cannot filter by event:goal; group by it (dimensions [\"event:goal\"])")
	} else {
		return Filter{}, errs.InvalidField(field, "tally cannot filter by %q", name)
	}
	if strings.HasPrefix(op, "matches_wildcard") {
		if name != "event:page" {
			return Filter{}, errs.InvalidField(field, "%s takes event:page (a page pattern); use matches on %s", op, name)
		}
		for i, v := range values {
			pat, err := pagepattern.Parse(v)
			if err != nil {
				return Filter{}, errs.InvalidField(field, "a page pattern %s", err)
			}
			values[i] = pat.Regexp()
		}
	}
	if op == "matches" || op == "matches_not" {
		for _, v := range values {
			if err := CheckPattern(v); err != nil {
				return Filter{}, errs.InvalidField(field, "%q is not a pattern tally can match (RE2's syntax): %v", v, err)
			}
		}
	}
	var f Filter
	switch {
	case op == "contains" || op == "contains_not":
		f = Contain(dim, values)
		for _, v := range values {
			f.OrEmpty = f.OrEmpty || label != "" && strings.Contains(label, v)
		}
	case strings.HasPrefix(op, "matches"):
		f = Match(dim, values)
		for _, v := range values {
			re, err := regexp.Compile(v)
			f.OrEmpty = f.OrEmpty || label != "" && err == nil && re.MatchString(label)
		}
	case len(values) == 1:
		f = Eq(dim, values[0])
	default:
		f = In(dim, values)
	}
	if strings.HasSuffix(op, "_not") {
		f = f.Negate()
	}
	return f, nil
}

func parseQueryOrder(raw [][]string, metrics, dims []string) ([]QueryOrder, error) {
	var out []QueryOrder
	for i, o := range raw {
		field := fmt.Sprintf("order_by.%d", i)
		if len(o) != 2 || (o[1] != "asc" && o[1] != "desc") {
			return nil, errs.InvalidField(field, "an order is [metric or dimension, \"asc\" or \"desc\"]")
		}
		if !contains(metrics, o[0]) && !contains(dims, o[0]) {
			return nil, errs.InvalidField(field, "%q is none of the query's metrics and dimensions", o[0])
		}
		out = append(out, QueryOrder{Key: o[0], Desc: o[1] == "desc"})
	}
	return out, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

package web

import (
	"context"
	"errors"
	"fmt"
	"html/template"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/httpapi"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/present"
	"github.com/tally-analytics/tally/internal/ratelimit"
	"github.com/tally-analytics/tally/internal/stats"
)

// membership is the site of the request (the :site parameter) and the
// user's role on it; a site the user is no member of is not found.
func (s *Server) membership(c echo.Context) (model.Membership, auth.Principal, error) {
	u, _ := session(c)
	p := u.principal()
	m, err := s.deps.Sites.Get(c.Request().Context(), p, model.SiteID(c.Param("site")))
	return m, p, err
}

type dashboardPage struct {
	page
	View   view
	Role   model.Role
	Ranges []rangeLink
	Cards  []cardSlot
	// CompareLink toggles the comparison with the previous period, and
	// CompareYearLink the one with the same dates a year before.
	CompareLink, CompareYearLink string
	// Segments are the site's, for a member (none on a shared dashboard);
	// CanManageSegments shows the forms that save (to SaveSegmentURL) and
	// delete them.
	Segments          []segmentItem
	CanManageSegments bool
	SaveSegmentURL    string
	SegmentForm       segmentForm
	Notice            string
}

type rangeLink struct {
	Key, Label, URL string
	Active          bool
}

// cardSlot is a place on the dashboard a card is loaded into.
type cardSlot struct {
	Name, Title, URL string
	// Refresh is how often the card reloads, in seconds (0 = never).
	Refresh int
	Wide    bool
	// First starts the card's first load before the cards above it: a
	// card that reads raw events takes longer than the rest (the funnel: a
	// sample of its steps' events, no rollup), so it runs beside them
	// instead of after them, and the page is whole sooner.
	First bool
}

// memberView is the member's site, as membership finds it, and the view of
// it the URL asks for.
func (s *Server) memberView(c echo.Context) (model.Membership, auth.Principal, view, error) {
	m, p, err := s.membership(c)
	if err != nil {
		return m, p, view{}, err
	}
	v, err := parseView(c.QueryParams(), m.Site, sitePath(m.Site.ID), s.deps.Now())
	return m, p, v, err
}

func (s *Server) dashboard(c echo.Context) error {
	m, p, v, err := s.memberView(c)
	if err != nil {
		return err
	}
	return s.memberDashboard(c, http.StatusOK, m, p, v, segmentForm{})
}

// dashboardOf is the dashboard page of a view: its ranges, its comparison
// and its cards (a shared view's without those it does not show).
func dashboardOf(pg page, v view, role model.Role) dashboardPage {
	p := dashboardPage{page: pg, View: v, Role: role}
	for _, r := range ranges {
		if r.Key == "custom" {
			continue
		}
		p.Ranges = append(p.Ranges, rangeLink{Key: r.Key, Label: r.Label, URL: v.withRange(r.Key), Active: v.Range == r.Key})
	}
	p.CompareLink, p.CompareYearLink = v.link("compare", "1"), v.link("compare", "year")
	if v.Compare && !v.CompareYear {
		p.CompareLink = v.link("compare", "")
	}
	if v.CompareYear {
		p.CompareYearLink = v.link("compare", "")
	}
	for _, cs := range []cardSlot{
		{Name: "overview", Title: "Overview", Wide: true},
		{Name: "realtime", Title: "Right now", Refresh: 10},
		{Name: "sources", Title: "Sources"},
		{Name: "pages", Title: "Pages"},
		{Name: "locations", Title: "Locations"},
		{Name: "devices", Title: "Devices"},
		{Name: "events", Title: "Custom events"},
		{Name: "goals", Title: "Goals"},
		{Name: "funnels", Title: "Funnels", Wide: true, First: true},
		{Name: "journeys", Title: "Journeys", Wide: true},
		{Name: "retention", Title: "Retention", Wide: true},
		{Name: "revenue", Title: "Revenue", Wide: true},
		{Name: "health", Title: "Tracking health"},
	} {
		if !v.shows(cs.Name) {
			continue
		}
		cs.URL = v.cardURL(cs.Name, "")
		p.Cards = append(p.Cards, cs)
	}
	return p
}

// shows reports whether the view has a card: a shared view has no
// tracking health (it is about the site's setup, not its visitors), and
// revenue only when its link shows it.
func (v view) shows(card string) bool {
	switch {
	case card == "summary": // the sites list's, of a member's sites
		return !v.Shared
	case !v.Shared:
		return true
	case card == "health":
		return false
	case card == "revenue":
		return !v.NoRevenue
	}
	return true
}

// tableCard is a card listing rows, with tabs for its variants.
type tableCard struct {
	View    view
	Card    string
	Tabs    []cardTab
	Columns []string
	Rows    []cardRow
	Empty   template.HTML
	Note    string
	// Map is drawn under the rows (the countries' map).
	Map template.HTML
}

type cardTab struct {
	Label, URL string
	Active     bool
}

type cardRow struct {
	Label string
	// Link filters the dashboard by the row ("" when it cannot: unknown values).
	Link string
	// Drill opens the row's breakdown in the card (a card URL), with
	// DrillTitle saying what it shows; for rows without a Link.
	Drill, DrillTitle string
	Bar               string // share of the first column's largest value, in percent
	Cells             []cardCell
}

type cardCell struct {
	Name, Text, Value string
}

func tabs(v view, card, active string, options ...[2]string) []cardTab {
	out := make([]cardTab, len(options))
	for i, o := range options {
		out[i] = cardTab{Label: o[1], URL: v.cardURL(card, o[0]), Active: o[0] == active}
	}
	return out
}

// cardRows is how many rows a card shows.
const cardRows = 10

func (s *Server) card(c echo.Context) error {
	c.Response().Header().Set("X-Robots-Tag", "noindex")
	m, p, err := s.membership(c)
	if err != nil {
		return err
	}
	if err := s.limitStats(c, p, 1); err != nil {
		return err
	}
	v, err := parseView(c.QueryParams(), m.Site, sitePath(m.Site.ID), s.deps.Now())
	if err != nil {
		return err
	}
	return s.cardOf(c, p, v)
}

// cardOf answers the card of the URL (its :card parameter) of a view, read
// as p; a card the view does not show is not found.
func (s *Server) cardOf(c echo.Context, p auth.Principal, v view) error {
	name := c.Param("card")
	if !v.shows(name) {
		return errs.E(errs.NotFound, "not_found", "no such card")
	}
	ctx, r, tab := c.Request().Context(), v.request(), c.QueryParam("tab")
	switch name {
	case "overview":
		return s.overviewCard(c, ctx, p, v, r)
	case "realtime":
		res, err := s.deps.Stats.Realtime(ctx, p, r)
		if err != nil {
			return err
		}
		return s.renderCard(c, "realtime", struct {
			View view
			Data stats.Realtime
		}{v, res})
	case "pages":
		return s.pagesCard(c, ctx, p, v, r, tab)
	case "sources":
		return s.sourcesCard(c, ctx, p, v, r, tab)
	case "devices":
		return s.devicesCard(c, ctx, p, v, r, tab)
	case "locations":
		return s.locationsCard(c, ctx, p, v, r)
	case "events":
		return s.eventsCard(c, ctx, p, v, r, c.QueryParam("event"), c.QueryParam("property"))
	case "goals":
		return s.goalsCard(c, ctx, p, v, r)
	case "funnels":
		return s.funnelsCard(c, ctx, p, v, r)
	case "journeys":
		return s.journeysCard(c, ctx, p, v, r)
	case "retention":
		return s.retentionCard(c, ctx, p, v, r, tab)
	case "revenue":
		return s.revenueCard(c, ctx, p, v, r, tab)
	case "health":
		return s.healthCard(c, ctx, p, v, r)
	case "summary":
		return s.summaryCard(c, ctx, p, v, r)
	}
	return errs.E(errs.NotFound, "not_found", "no such card")
}

// limitStats counts n reports (a card, or the files of a download) against
// their user's stats allowance, the one their API calls with a login token
// use. If Redis cannot answer, the reports are served.
func (s *Server) limitStats(c echo.Context, p auth.Principal, n int) error {
	if s.deps.StatsPerHour <= 0 {
		return nil
	}
	n = min(n, s.deps.StatsPerHour) // a download bigger than the allowance takes all of it, not forever
	res, err := s.deps.Limiter.AllowN(c.Request().Context(), httpapi.StatsLimitKey(p), ratelimit.PerHour(s.deps.StatsPerHour), n)
	if err != nil {
		return nil
	}
	return limited(c, res, fmt.Sprintf("Too many reports in the last hour; this one is back in %d s.", int(res.RetryAfter.Seconds())+1))
}

type overviewCard struct {
	View      view
	Data      stats.Overview
	Headlines []headline
	// Metric is the headline the chart draws ("" for visitors and
	// pageviews); MetricLabel names it.
	Metric, MetricLabel string
	Chart               template.HTML
	Compare             bool
	// Intervals name the units of a series
	Intervals map[string]string
}

// headline is one of the overview's headline numbers: for people and as
// it is, its change against the previous period, and the link that draws
// it on the chart (for the one drawn, back to visitors and pageviews).
type headline struct {
	Key, Label, Value, Raw string
	Change, ChangeClass    string
	URL                    string
	Active                 bool
}

// overviewCard answers the overview, its chart drawing the metric asked
// for (metric=, one of chartMetrics' keys) or visitors and pageviews.
func (s *Server) overviewCard(c echo.Context, ctx context.Context, p auth.Principal, v view, r stats.Request) error {
	metric := c.QueryParam("metric")
	if _, ok := chartMetricOf(metric); !ok && metric != "" {
		return errs.InvalidField("metric", "the chart draws visitors, visits, pageviews, views_per_visit, bounce_rate or visit_duration")
	}
	res, err := s.deps.Stats.Overview(ctx, p, r)
	if err != nil {
		return err
	}
	var prev []stats.DayCount
	if res.Comparison != nil {
		prev = res.Comparison.Series
	}
	card := overviewCard{View: v, Data: res, Compare: res.Comparison != nil, Metric: metric, Intervals: intervalNames,
		Chart: chartSVG(res.Series, prev, res.Interval, metric)}
	for _, m := range chartMetrics {
		h := headline{Key: m.key, Label: m.label, Value: m.show(res.Metrics), Raw: m.raw(res.Metrics), Active: m.key == metric,
			URL: v.cardURLWith("overview", "metric", m.key)}
		if h.Active {
			h.URL, card.MetricLabel = v.cardURL("overview", ""), m.label
		}
		if res.Comparison != nil {
			h.Change, h.ChangeClass = m.change(res.Comparison.Change)
		}
		card.Headlines = append(card.Headlines, h)
	}
	return s.renderCard(c, "overview", card)
}

// summaryLabels say a summary's range in words.
var summaryLabels = map[string]string{"today": "today", "yesterday": "yesterday", "7d": "in the last 7 days",
	"30d": "in the last 30 days", "month": "this month", "last-month": "last month", "year": "this year", "12mo": "in the last 12 months"}

// summaryCard is a site's line in the sites list: its visitors in the
// view's range, their change against the period before when the view
// compares, and a line of its days.
func (s *Server) summaryCard(c echo.Context, ctx context.Context, p auth.Principal, v view, r stats.Request) error {
	r.Interval = stats.IntervalDay
	res, err := s.deps.Stats.Overview(ctx, p, r)
	if err != nil {
		return err
	}
	label, ok := summaryLabels[v.Range]
	if !ok {
		label = "from " + v.From.Format(time.DateOnly) + " to " + v.To.Format(time.DateOnly)
	}
	return s.renderCard(c, "summary", struct {
		Data             stats.Overview
		Label, Dashboard string
		Spark            template.HTML
	}{res, label, v.link("", ""), sparklineSVG(res.Series)})
}

// pagesCard lists the pages by its tab: the top pages, the entry or exit
// pages, or the hosts of the pageviews (a site's domain and subdomains).
// Each row filters the dashboard by itself.
func (s *Server) pagesCard(c echo.Context, ctx context.Context, p auth.Principal, v view, r stats.Request, tab string) error {
	card := tableCard{View: v, Card: "pages", Tabs: tabs(v, "pages", or(tab, "top"), [2]string{"top", "Top pages"},
		[2]string{"entry", "Entry pages"}, [2]string{"exit", "Exit pages"}, [2]string{"hostnames", "Hostnames"})}
	switch tab {
	case "hostnames":
		res, err := s.deps.Stats.Hostnames(ctx, p, r)
		if err != nil {
			return err
		}
		card.Columns = []string{"Hostname", "Visitors", "Share", "Pageviews"}
		for _, row := range res.Rows {
			card.Rows = append(card.Rows, cardRow{Label: row.Hostname, Link: v.link("hostname", row.Hostname),
				Cells: []cardCell{countCell("visitors", row.Visitors), pctCell("percentage", row.Percentage),
					countCell("pageviews", row.Pageviews)}})
		}
	case "entry":
		res, err := s.deps.Stats.EntryPages(ctx, p, r)
		if err != nil {
			return err
		}
		card.Columns = []string{"Page", "Entries", "Bounce rate"}
		for _, row := range head(res.Rows) {
			card.Rows = append(card.Rows, cardRow{Label: row.Path, Link: v.link("pathname", row.Path),
				Cells: []cardCell{countCell("entries", row.Entries), pctCell("bounce_rate", row.BounceRate)}})
		}
	case "exit":
		res, err := s.deps.Stats.ExitPages(ctx, p, r)
		if err != nil {
			return err
		}
		card.Columns = []string{"Page", "Exits", "Exit rate"}
		for _, row := range head(res.Rows) {
			card.Rows = append(card.Rows, cardRow{Label: row.Path, Link: v.link("pathname", row.Path),
				Cells: []cardCell{countCell("exits", row.Exits), pctCell("exit_rate", row.ExitRate)}})
		}
	default:
		res, err := s.deps.Stats.Pages(ctx, p, r)
		if err != nil {
			return err
		}
		card.Columns = []string{"Page", "Visitors", "Pageviews", "Bounce rate", "Time on page", "Scroll depth"}
		for _, row := range res.Rows {
			card.Rows = append(card.Rows, cardRow{Label: row.Path, Link: v.link("pathname", row.Path),
				Cells: []cardCell{countCell("visitors", row.Visitors), countCell("pageviews", row.Pageviews),
					pctCell("bounce_rate", row.BounceRate), {Name: "avg_time_on_page", Text: present.Duration(row.AvgTimeOnPage),
						Value: rawFloat(row.AvgTimeOnPage)}, depthCell(row.ScrollDepth)}})
		}
	}
	return s.renderTable(c, card)
}

func (t tableCard) tabLabel() string {
	for _, tab := range t.Tabs {
		if tab.Active {
			return tab.Label
		}
	}
	return ""
}

// devicesCard lists devices, browsers or systems by its tab. A view filtered
// by a browser opens on the browser's versions (by a system, on the
// system's), where clicking a browser row leads.
func (s *Server) devicesCard(c echo.Context, ctx context.Context, p auth.Principal, v view, r stats.Request, tab string) error {
	switch {
	case tab != "":
	case v.Has("browser"):
		tab = "browser"
	case v.Has("os"):
		tab = "os"
	}
	card := tableCard{View: v, Card: "devices", Tabs: tabs(v, "devices", or(tab, "device"), [2]string{"device", "Devices"},
		[2]string{"browser", "Browsers"}, [2]string{"os", "Operating systems"})}
	var res stats.List[stats.Share]
	var err error
	param := or(tab, "device")
	column := card.tabLabel()
	// filtered by a browser (or a system), its tab drills down to its
	// versions, as the locations card does to a country's regions
	switch {
	case param == "browser" && v.Has("browser"):
		param, column, card.Note = "browser_version", "Version", "Versions of "+v.Get("browser")
		res, err = s.deps.Stats.BrowserVersions(ctx, p, r)
	case param == "browser":
		res, err = s.deps.Stats.Browsers(ctx, p, r)
	case param == "os" && v.Has("os"):
		param, column, card.Note = "os_version", "Version", "Versions of "+v.Get("os")
		res, err = s.deps.Stats.OSVersions(ctx, p, r)
	case param == "os":
		res, err = s.deps.Stats.OperatingSystems(ctx, p, r)
	default:
		param = "device"
		res, err = s.deps.Stats.Devices(ctx, p, r)
	}
	if err != nil {
		return err
	}
	card.Columns = []string{column, "Visitors", "Share"}
	for _, row := range head(res.Rows) {
		link := v.link(param, row.Value)
		if row.Value == stats.UnknownLabel {
			link = ""
		}
		card.Rows = append(card.Rows, cardRow{Label: row.Value, Link: link,
			Cells: []cardCell{countCell("visitors", row.Visitors), pctCell("percentage", row.Percentage)}})
	}
	return s.renderTable(c, card)
}

// locationsCard drills down: countries; with a country filter, its regions;
// with a region filter, its cities.
func (s *Server) locationsCard(c echo.Context, ctx context.Context, p auth.Principal, v view, r stats.Request) error {
	card := tableCard{View: v, Card: "locations"}
	add := func(label, param, value string, visitors int64, pct float64) {
		link := v.link(param, value)
		if value == "" || value == stats.UnknownLabel || value == "ZZ" {
			link = ""
		}
		card.Rows = append(card.Rows, cardRow{Label: label, Link: link,
			Cells: []cardCell{countCell("visitors", visitors), pctCell("percentage", pct)}})
	}
	switch {
	case v.Has("region"):
		res, err := s.deps.Stats.Cities(ctx, p, r)
		if err != nil {
			return err
		}
		card.Columns = []string{"City", "Visitors", "Share"}
		card.Note = "Cities of " + v.Get("region")
		for _, row := range head(res.Rows) {
			add(row.Value, "city", row.Value, row.Visitors, row.Percentage)
		}
	case v.Has("country"):
		res, err := s.deps.Stats.Regions(ctx, p, r)
		if err != nil {
			return err
		}
		card.Columns = []string{"Region", "Visitors", "Share"}
		card.Note = "Regions of " + v.Get("country")
		for _, row := range head(res.Rows) {
			add(row.Name, "region", row.Value, row.Visitors, row.Percentage)
		}
	default:
		res, err := s.deps.Stats.Countries(ctx, p, r)
		if err != nil {
			return err
		}
		card.Columns = []string{"Country", "Visitors", "Share"}
		for _, row := range head(res.Rows) {
			add(row.Name, "country", row.Value, row.Visitors, row.Percentage)
		}
		// every country of the report, not only the rows of the table
		card.Map = mapSVG(s.world, res.Rows, func(code string) string { return v.link("country", code) })
	}
	return s.renderTable(c, card)
}

func (s *Server) goalsCard(c echo.Context, ctx context.Context, p auth.Principal, v view, r stats.Request) error {
	res, err := s.deps.Stats.Conversions(ctx, p, r)
	if err != nil {
		return err
	}
	card := tableCard{View: v, Card: "goals", Columns: []string{"Goal", "Visitors", "Conversions", "Conversion rate", "Change"},
		Empty: template.HTML(`No goals yet. <a href="` + template.HTMLEscapeString(sitePath(v.Site.ID)) + `/settings#goals">Add a goal</a>.`)}
	if v.Shared {
		card.Empty = "No goals yet."
	}
	for _, g := range res.Goals {
		card.Rows = append(card.Rows, cardRow{Label: g.Goal.Name, Cells: []cardCell{countCell("unique_visitors", g.Converters),
			countCell("total_conversions", g.Completions), pctCell("conversion_rate", g.Rate),
			{Name: "change_percent", Text: present.Change(g.Change)}}})
	}
	return s.renderTable(c, card)
}

type revenueCard struct {
	View     view
	Tabs     []cardTab
	Models   []cardTab // the attribution models, each a link to the dashboard with it
	Data     stats.RevenueReport
	Rows     []revenueRow
	Column   string
	Disabled string
	// PerVisitor is the revenue per visitor in whole minor units, to show.
	PerVisitor int64
}

// attributionLabels name the attribution models for people.
var attributionLabels = map[string]string{
	stats.LastNonDirect: "Last non-direct visit", stats.LastTouch: "Last visit", stats.FirstTouch: "First visit",
}

// attributionLinks are the dashboard URLs of the view with each attribution
// model (the default one without the parameter): a page, not a card, so the
// download and the links of the page keep the model too.
func attributionLinks(v view) []cardTab {
	out := make([]cardTab, len(stats.AttributionModels))
	for i, m := range stats.AttributionModels {
		value := m
		if m == stats.LastNonDirect {
			value = ""
		}
		out[i] = cardTab{Label: attributionLabels[m], URL: v.link("attribution", value), Active: m == v.Attribution}
	}
	return out
}

type revenueRow struct {
	Label, Link string
	Row         stats.RevenueRow
}

// revenueFilters are the dashboard filters a payment knows of its visit.
var revenueLinks = map[string]string{"source": "source", "channel": "channel", "campaign": "utm_campaign", "country": "country",
	"device": "device", "page": ""}

func (s *Server) revenueCard(c echo.Context, ctx context.Context, p auth.Principal, v view, r stats.Request, tab string) error {
	tab = or(tab, "source")
	if _, ok := revenueLinks[tab]; !ok {
		tab = "source"
	}
	card := revenueCard{View: v, Tabs: tabs(v, "revenue", tab, [2]string{"source", "Sources"}, [2]string{"channel", "Channels"},
		[2]string{"page", "Entry pages"}, [2]string{"campaign", "Campaigns"}, [2]string{"country", "Countries"},
		[2]string{"device", "Devices"}), Models: attributionLinks(v)}
	card.Column = card.Tabs[0].Label
	for _, t := range card.Tabs {
		if t.Active {
			card.Column = t.Label
		}
	}
	r.Breakdown = tab
	res, err := s.deps.Stats.Revenue(ctx, p, r)
	if errs.KindOf(err) == errs.Invalid {
		// a filter revenue cannot apply (a page, a browser): say so
		var e *errs.Error
		if errors.As(err, &e) {
			card.Disabled = e.Message
		}
		return s.renderCard(c, "revenue", card)
	}
	if err != nil {
		return err
	}
	card.Data = res
	card.PerVisitor = int64(math.Round(res.Totals.RevenuePerVisitor))
	for _, row := range head(res.Breakdown) {
		link := ""
		if param := revenueLinks[tab]; param != "" && row.Value != stats.UnattributedLabel && row.Value != stats.NoneLabel {
			link = v.link(param, row.Value)
		}
		card.Rows = append(card.Rows, revenueRow{Label: row.Value, Link: link, Row: row})
	}
	return s.renderCard(c, "revenue", card)
}

// renderTable renders a table card, with each row's bar scaled to the
// largest first column.
func (s *Server) renderTable(c echo.Context, card tableCard) error {
	var top int64
	for _, row := range card.Rows {
		if len(row.Cells) > 0 {
			top = max(top, parseInt(row.Cells[0].Value))
		}
	}
	for i := range card.Rows {
		card.Rows[i].Bar = barWidth(parseInt(card.Rows[i].Cells[0].Value), top)
	}
	if card.Empty == "" {
		card.Empty = "Nothing in this range."
	}
	return s.renderCard(c, "table", card)
}

func countCell(name string, n int64) cardCell {
	return cardCell{Name: name, Text: present.Number(n), Value: itoa(n)}
}

func pctCell(name string, v float64) cardCell {
	return cardCell{Name: name, Text: present.Percent(v), Value: rawFloat(v)}
}

// depthCell is a page's scroll depth, or a dash when no visitor's browser
// reported one.
func depthCell(percent *int64) cardCell {
	if percent == nil {
		return cardCell{Name: "scroll_depth", Text: "–"}
	}
	return cardCell{Name: "scroll_depth", Text: strconv.FormatInt(*percent, 10) + "%", Value: strconv.FormatInt(*percent, 10)}
}

func parseInt(s string) int64 {
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}

func head[T any](rows []T) []T {
	if len(rows) > cardRows {
		return rows[:cardRows]
	}
	return rows
}

func or(v, fallback string) string {
	if v == "" {
		return fallback
	}
	return v
}

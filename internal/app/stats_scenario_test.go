package app_test

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tally-analytics/tally/internal/accounts"
	"github.com/tally-analytics/tally/internal/ingest/geo"
	"github.com/tally-analytics/tally/internal/ingest/geo/geotest"
	"github.com/tally-analytics/tally/internal/testenv"
	"github.com/tally-analytics/tally/pkg/api"
	"github.com/tally-analytics/tally/pkg/client"
)

// The scenario: nine named visitors of a site whose time zone is
// America/New_York, reported for 2026-05-01..07. Every expected number below
// was worked out by hand from these fixtures (see the comments).
//
//	alice  Google search, Desktop Chrome Windows, London (GB-ENG)
//	       May 2 10:00 /landing, 10:01 /pricing, 10:03:30 /signup, 10:04 signup event
//	       → 1 session, 3 pageviews, 240 s, no bounce; 60 s on /landing, 150 s on /pricing
//	bob    Twitter (t.co), Mobile Safari iOS, Milton (US-WA)
//	       May 3 12:00 /blog/post-1 → bounce
//	carol  direct, Tablet Safari iPad, private address (unknown country)
//	       May 3 09:00 /, 09:01 + 09:01:30 signup events, 09:02 /pricing, then 43 min idle,
//	       09:45 / → 2 sessions: (/ → /pricing, 120 s) and (/ bounce)
//	dave   utm_source=acme-mail, utm_campaign=spring, Desktop Firefox Linux, Manchester (GB-ENG)
//	       May 4 08:00 /landing, 08:00:30 /pricing → 30 s
//	erin   Hacker News, Mobile Chrome Android, San Francisco (US-CA)
//	       May 4 23:50 UTC /blog/post-1, May 5 00:10 UTC /blog/post-2 → one session across
//	       midnight UTC, 1,200 s (May 4 in New York, May 5 in Tokyo)
//	frank  myblog.example.org, Desktop Edge macOS, no address
//	       May 6 15:00 /pricing, 15:01 download event → not a bounce (interactive), 60 s
//	gina   Google search, Mobile Chrome Android, Edinburgh (GB-SCT)
//	       May 7 23:30 UTC /landing → bounce (May 8 in Tokyo: outside the range there)
//	hank   direct, Desktop Chrome, Apr 30 23:30 UTC /landing → bounce (May 1 in Tokyo only)
//	ivy    direct, Desktop Chrome, Apr 25 10:00 /landing → bounce (previous period)
//	bots   May 5 12:00: Googlebot (crawler), GPTBot (AI agent), HeadlessChrome (automation); Apr 20: Googlebot
type scenarioEvent struct {
	at       string // UTC, "2006-01-02 15:04:05"
	visitor  string
	ua       int    // index into fixtureUAs; -n: botUAs[n-1]
	ip       string // "" = none sent
	url      string
	referrer string
	event    string // custom event name; "" = pageview
}

var scenario = []scenarioEvent{
	{"2026-04-20 08:00:00", "", -1, "", "https://example.com/", "", ""},
	{"2026-04-25 10:00:00", "ivy", 0, "", "https://example.com/landing", "", ""},
	{"2026-04-30 23:30:00", "hank", 0, "", "https://example.com/landing", "", ""},
	{"2026-05-02 10:00:00", "alice", 0, "81.2.69.10", "https://example.com/landing", "https://www.google.com/", ""},
	{"2026-05-02 10:01:00", "alice", 0, "81.2.69.10", "https://example.com/pricing", "https://example.com/landing", ""},
	{"2026-05-02 10:03:30", "alice", 0, "81.2.69.10", "https://example.com/signup", "https://example.com/pricing", ""},
	{"2026-05-02 10:04:00", "alice", 0, "81.2.69.10", "https://example.com/signup", "", "signup"},
	{"2026-05-03 09:00:00", "carol", 3, "10.0.0.1", "https://example.com/", "", ""},
	{"2026-05-03 09:01:00", "carol", 3, "10.0.0.1", "https://example.com/", "", "signup"},
	{"2026-05-03 09:01:30", "carol", 3, "10.0.0.1", "https://example.com/", "", "signup"},
	{"2026-05-03 09:02:00", "carol", 3, "10.0.0.1", "https://example.com/pricing", "https://example.com/", ""},
	{"2026-05-03 09:45:00", "carol", 3, "10.0.0.1", "https://example.com/", "", ""},
	{"2026-05-03 12:00:00", "bob", 1, "216.160.83.5", "https://example.com/blog/post-1", "https://t.co/abc", ""},
	{"2026-05-04 08:00:00", "dave", 2, "81.2.71.20", "https://example.com/landing?utm_source=acme-mail&utm_medium=email&utm_campaign=spring", "", ""},
	{"2026-05-04 08:00:30", "dave", 2, "81.2.71.20", "https://example.com/pricing", "https://example.com/landing", ""},
	{"2026-05-04 23:50:00", "erin", 4, "67.43.156.9", "https://example.com/blog/post-1", "https://news.ycombinator.com/item?id=1", ""},
	{"2026-05-05 00:10:00", "erin", 4, "67.43.156.9", "https://example.com/blog/post-2", "https://example.com/blog/post-1", ""},
	{"2026-05-05 12:00:00", "", -1, "", "https://example.com/a", "", ""},
	{"2026-05-05 12:00:00", "", -2, "", "https://example.com/b", "", ""},
	{"2026-05-05 12:00:00", "", -3, "", "https://example.com/c", "", ""},
	{"2026-05-06 15:00:00", "frank", 5, "", "https://example.com/pricing", "https://myblog.example.org/p/1", ""},
	{"2026-05-06 15:01:00", "frank", 5, "", "https://example.com/pricing", "", "download"},
	{"2026-05-07 23:30:00", "gina", 4, "81.2.70.30", "https://example.com/landing", "https://www.google.com/search?q=x", ""},
}

const googlebotUA = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"

// botUAs are the scenario's bots, by -ua-1: a crawler, an AI agent, automation.
var botUAs = []string{googlebotUA,
	"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)",
	"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/120.0.6099.28 Safari/537.36"}

// scenarioSite ingests the scenario through the API of one instance and
// returns a client for the stats of its site, and the site id.
func scenarioSite(t *testing.T) (*harness, *client.Client, string) {
	cfg := testenv.Config(t)
	cfg.GeoIPPath = filepath.Join(t.TempDir(), "city.mmdb")
	geotest.WriteCityDB(t, cfg.GeoIPPath, map[string]geo.Location{
		"81.2.69.0/24":    {CountryCode: "GB", RegionCode: "GB-ENG", RegionName: "England", City: "London"},
		"81.2.71.0/24":    {CountryCode: "GB", RegionCode: "GB-ENG", RegionName: "England", City: "Manchester"},
		"81.2.70.0/24":    {CountryCode: "GB", RegionCode: "GB-SCT", RegionName: "Scotland", City: "Edinburgh"},
		"216.160.83.0/24": {CountryCode: "US", RegionCode: "US-WA", RegionName: "Washington", City: "Milton"},
		"67.43.156.0/24":  {CountryCode: "US", RegionCode: "US-CA", RegionName: "California", City: "San Francisco"},
	})
	h := newHarnessWith(t, cfg)
	ctx := context.Background()
	site, err := h.app.Accounts.CreateSite(ctx, accounts.NewSite{OwnerEmail: h.email, Domain: "example.com", Timezone: "America/New_York"})
	if err != nil {
		t.Fatal(err)
	}
	c := h.client(h.key)
	pageviews, customs, bots := 0, 0, 0
	for _, ev := range scenario {
		at, err := time.Parse(time.DateTime, ev.at)
		if err != nil {
			t.Fatal(err)
		}
		h.clock.Set(at)
		req := api.PageviewRequest{SiteID: string(site.ID), URL: ev.url, Referrer: ev.referrer, IPAddress: ev.ip, VisitorID: ev.visitor}
		if ev.ua < 0 {
			req.UserAgent = botUAs[-ev.ua-1]
			bots++
		} else {
			req.UserAgent = fixtureUAs[ev.ua].ua
		}
		if ev.event != "" {
			_, err = c.CustomEvent(ctx, api.CustomEventRequest{PageviewRequest: req, EventName: ev.event})
			customs++
		} else {
			_, err = c.Pageview(ctx, req)
			if ev.ua >= 0 {
				pageviews++
			}
		}
		if err != nil {
			t.Fatalf("%s %s: %v", ev.at, ev.url, err)
		}
	}
	h.waitCount(int64(pageviews+customs), "SELECT count() FROM events WHERE site_id = ?", string(site.ID))
	h.waitCount(int64(bots), "SELECT count() FROM bot_events WHERE site_id = ?", string(site.ID))
	// the scenario's days have closed: reports read their visitor blocks
	// once built, as a server's build does within 10 minutes
	if _, err := h.app.CH.BuildClosedBlocks(ctx); err != nil {
		t.Fatal(err)
	}
	if n := h.count("SELECT uniqExact(block_table) FROM rollup_blocks_built WHERE level = 0 AND started_at = toDateTime('2026-05-03 00:00:00', 'UTC')"); n != 4 {
		t.Fatalf("May 3 is built in %d blocks tables, want 4", n)
	}
	return h, c, string(site.ID)
}

func TestStatsScenario(t *testing.T) {
	h, c, site := scenarioSite(t)
	ctx := context.Background()
	week := client.StatsParams{SiteID: site, DateFrom: "2026-05-01", DateTo: "2026-05-07", Timezone: "UTC"}
	// pt is a unit of a series: visitors and pageviews of its events; visits,
	// views per visit, bounce rate and duration of the sessions started in it
	pt := func(date string, visitors, visits, pageviews int64, perVisit, bounce, duration float64) api.TimeseriesPoint {
		return api.TimeseriesPoint{Date: date, Visitors: visitors, Visits: visits, Pageviews: pageviews,
			ViewsPerVisit: perVisit, BounceRate: bounce, VisitDuration: duration}
	}
	empty := func(date string) api.TimeseriesPoint { return api.TimeseriesPoint{Date: date} }
	f := func(x float64) *float64 { return &x }

	t.Run("overview in UTC with comparison", func(t *testing.T) {
		p := week
		p.Compare = true
		res, err := c.Overview(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		want := api.Overview{
			// 7 visitors (alice..gina), 13 pageviews; 8 sessions, 3 bounces (bob, carol's
			// second, gina) = 37.5 %; durations 240+0+120+0+30+1200+60+0 = 1650 / 8 = 206.25;
			// the sessions' pageviews 3+1+2+1+2+2+1+1 = 13 / 8 = 1.625 a visit
			Metrics: api.Metrics{Visitors: 7, Visits: 8, Pageviews: 13, ViewsPerVisit: 1.63, BounceRate: 37.5, VisitDuration: 206.3},
			// a session counts on the day it started: erin's, May 4 23:50, holds her May 5 pageview
			Timeseries: []api.TimeseriesPoint{empty("2026-05-01"),
				pt("2026-05-02", 1, 1, 3, 3, 0, 240), // alice
				// carol twice (2 pageviews, 120 s; a bounce) and bob (a bounce): 4 / 3, 2 of 3, 120 / 3
				pt("2026-05-03", 2, 3, 4, 1.33, 66.7, 40),
				pt("2026-05-04", 2, 2, 3, 2, 0, 615), // dave (2, 30 s) and erin (2, 1200 s)
				pt("2026-05-05", 1, 0, 1, 0, 0, 0),   // erin's second pageview, of her May 4 session
				pt("2026-05-06", 1, 1, 1, 1, 0, 60),  // frank
				pt("2026-05-07", 1, 1, 1, 1, 100, 0), // gina
			},
			// previous 7 days, Apr 24..30: ivy and hank, one bouncing pageview each
			Comparison: &api.Comparison{DateFrom: "2026-04-24", DateTo: "2026-04-30",
				Metrics: api.Metrics{Visitors: 2, Visits: 2, Pageviews: 2, ViewsPerVisit: 1, BounceRate: 100, VisitDuration: 0},
				Timeseries: []api.TimeseriesPoint{empty("2026-04-24"), pt("2026-04-25", 1, 1, 1, 1, 100, 0), empty("2026-04-26"),
					empty("2026-04-27"), empty("2026-04-28"), empty("2026-04-29"), pt("2026-04-30", 1, 1, 1, 1, 100, 0)},
				// (7-2)/2 = +250 %, (8-2)/2 = +300 %, (13-2)/2 = +550 %, 1.625 a visit against 1 = +62.5 %,
				// 37.5-100 = -62.5 points, duration from 0: none
				Change: api.Change{Visitors: f(250), Visits: f(300), Pageviews: f(550), ViewsPerVisit: f(62.5), BounceRate: -62.5,
					VisitDuration: nil}},
		}
		if diff := cmp.Diff(want, res.Data); diff != "" {
			t.Errorf("overview (-want +got):\n%s", diff)
		}
		wantMeta := api.OverviewMeta{StatsMeta: api.StatsMeta{SiteID: site, DateFrom: "2026-05-01", DateTo: "2026-05-07", Timezone: "UTC"},
			FilteredBotTraffic: 3, FilteredBotTrafficByCategory: api.BotTraffic{Crawler: 1, AIAgent: 1, Automation: 1}}
		if diff := cmp.Diff(wantMeta, res.Meta); diff != "" {
			t.Errorf("meta (-want +got):\n%s", diff)
		}
	})

	t.Run("overview in the site's time zone (New York) and in Tokyo", func(t *testing.T) {
		p := week
		p.Timezone = ""
		res, err := c.Overview(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		// New York (UTC-4): hank (Apr 30 19:30) is out, gina (May 7 19:30) in, erin's two
		// pageviews both on May 4; every session starts on the day it does in UTC
		ny := []api.TimeseriesPoint{empty("2026-05-01"), pt("2026-05-02", 1, 1, 3, 3, 0, 240),
			pt("2026-05-03", 2, 3, 4, 1.33, 66.7, 40), pt("2026-05-04", 2, 2, 4, 2, 0, 615), empty("2026-05-05"),
			pt("2026-05-06", 1, 1, 1, 1, 0, 60), pt("2026-05-07", 1, 1, 1, 1, 100, 0)}
		if diff := cmp.Diff(ny, res.Data.Timeseries); diff != "" || res.Meta.Timezone != "America/New_York" ||
			res.Data.Metrics.Visitors != 7 || res.Data.Metrics.Pageviews != 13 || res.Data.Metrics.Visits != 8 {
			t.Errorf("New York: %+v %s (-want +got):\n%s", res.Data.Metrics, res.Meta.Timezone, diff)
		}
		p.Timezone = "Asia/Tokyo"
		res, err = c.Overview(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		// Tokyo (UTC+9): hank is in (May 1 08:30), gina out (May 8 08:30), erin on May 5,
		// frank's 15:00 UTC pageview is May 7 00:00; sessions: hank, alice, carol twice,
		// bob, dave, erin, frank, the same bounces (hank for gina) and 13 of their pageviews
		tokyo := []api.TimeseriesPoint{pt("2026-05-01", 1, 1, 1, 1, 100, 0), pt("2026-05-02", 1, 1, 3, 3, 0, 240),
			pt("2026-05-03", 2, 3, 4, 1.33, 66.7, 40), pt("2026-05-04", 1, 1, 2, 2, 0, 30), pt("2026-05-05", 1, 1, 2, 2, 0, 1200),
			empty("2026-05-06"), pt("2026-05-07", 1, 1, 1, 1, 0, 60)}
		wantMetrics := api.Metrics{Visitors: 7, Visits: 8, Pageviews: 13, ViewsPerVisit: 1.63, BounceRate: 37.5, VisitDuration: 206.3}
		if diff := cmp.Diff(tokyo, res.Data.Timeseries); diff != "" || res.Data.Metrics != wantMetrics {
			t.Errorf("Tokyo: %+v (-want +got):\n%s", res.Data.Metrics, diff)
		}
	})

	t.Run("the overview card: six headline numbers, each charted alone", func(t *testing.T) {
		w := newWebUser(t, h)
		w.login(h.email)
		card := "/sites/" + site + "/cards/overview?range=custom&from=2026-05-01&to=2026-05-07" // New York's week
		body := w.expect(http.MethodGet, card, nil, http.StatusOK)
		for _, want := range []string{`data-metric="visitors" data-value="7">7<`, `data-metric="visits" data-value="8">8<`,
			`data-metric="pageviews" data-value="13">13<`, `data-metric="views_per_visit" data-value="1.63">1.63<`,
			`data-metric="bounce_rate" data-value="37.5">37.5%<`, `data-metric="visit_duration" data-value="206.3">3m 26s<`,
			"Visitors and pageviews per day",
			`href="/sites/` + site + `/cards/overview?from=2026-05-01&amp;metric=visits&amp;range=custom&amp;to=2026-05-07" data-tab title="Chart Total visits">Total visits<`,
		} {
			if !strings.Contains(body, want) {
				t.Errorf("the overview card lacks %s", want)
			}
		}
		if strings.Contains(body, "aria-current") {
			t.Error("a headline is marked as charted in the chart of visitors and pageviews")
		}
		body = w.expect(http.MethodGet, card+"&metric=visits", nil, http.StatusOK)
		for _, want := range []string{"Total visits per day", `<span class="key visitors">Total visits</span>`,
			// the chosen headline links back to the chart of visitors and pageviews
			`href="/sites/` + site + `/cards/overview?from=2026-05-01&amp;range=custom&amp;to=2026-05-07" data-tab aria-current="true"`,
			// May 3: carol's two visits and bob's (4 of their pageviews, 2 bounces, 120 s);
			// May 4 in New York: dave's and erin's (4 pageviews, 30 + 1200 s)
			`<th scope="row">2026-05-03</th><td>2</td><td>4</td><td>3</td><td>1.33</td><td>66.7%</td><td>40s</td>`,
			`<th scope="row">2026-05-04</th><td>2</td><td>4</td><td>2</td><td>2.00</td><td>0.0%</td><td>10m 15s</td>`,
		} {
			if !strings.Contains(body, want) {
				t.Errorf("the card charting visits lacks %s", want)
			}
		}
		if strings.Contains(body, "Visitors and pageviews per day") {
			t.Error("the card charting visits still charts visitors and pageviews")
		}
		w.expect(http.MethodGet, card+"&metric=revenue", nil, http.StatusBadRequest)
	})

	t.Run("pages", func(t *testing.T) {
		res, err := c.Pages(ctx, week)
		if err != nil {
			t.Fatal(err)
		}
		want := []api.Page{
			// bounce rate: of the sessions entering on the page; time: to the next pageview
			{Pathname: "/pricing", Pageviews: 4, Visitors: 4, BounceRate: 0, AvgTimeOnPage: 150},       // frank entered; alice 150 s
			{Pathname: "/landing", Pageviews: 3, Visitors: 3, BounceRate: 33.3, AvgTimeOnPage: 45},     // gina bounced; (60+30)/2
			{Pathname: "/", Pageviews: 2, Visitors: 1, BounceRate: 50, AvgTimeOnPage: 120},             // carol twice, once bouncing
			{Pathname: "/blog/post-1", Pageviews: 2, Visitors: 2, BounceRate: 50, AvgTimeOnPage: 1200}, // bob bounced; erin 1200 s
			{Pathname: "/blog/post-2", Pageviews: 1, Visitors: 1, BounceRate: 0, AvgTimeOnPage: 0},     // no entries, last page
			{Pathname: "/signup", Pageviews: 1, Visitors: 1, BounceRate: 0, AvgTimeOnPage: 0},
		}
		if diff := cmp.Diff(want, res.Data.Pages); diff != "" {
			t.Errorf("pages (-want +got):\n%s", diff)
		}
		if res.Data.Pagination != (api.Pagination{Total: 6, Page: 1, Limit: 100}) {
			t.Errorf("pagination %+v", res.Data.Pagination)
		}
		p := week
		p.Limit, p.Page = 2, 2
		res, err = c.Pages(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want[2:4], res.Data.Pages); diff != "" || res.Data.Pagination != (api.Pagination{Total: 6, Page: 2, Limit: 2}) {
			t.Errorf("page 2 of 2 %+v (-want +got):\n%s", res.Data.Pagination, diff)
		}

		// Ranges in other time zones read whole UTC days from the page rollups
		// and the hours at either end from events. Tokyo's week (Apr 30 15:00
		// to May 7 15:00 UTC) takes hank's /landing from its first hours and
		// loses gina's: the same list (hank bounced, as gina did).
		p = week
		p.Timezone = "Asia/Tokyo"
		if res, err = c.Pages(ctx, p); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, res.Data.Pages); diff != "" {
			t.Errorf("pages in Tokyo (-want +got):\n%s", diff)
		}
		// New York, May 1-4 (to May 5 04:00 UTC): erin's /blog/post-2 at
		// 00:10 UTC, and with it her 1,200 s on /blog/post-1, come from the
		// last hours; frank and gina are out.
		p = week
		p.Timezone, p.DateTo = "", "2026-05-04"
		if res, err = c.Pages(ctx, p); err != nil {
			t.Fatal(err)
		}
		wantNY := []api.Page{
			{Pathname: "/pricing", Pageviews: 3, Visitors: 3, BounceRate: 0, AvgTimeOnPage: 150}, // alice, carol, dave; no entries
			{Pathname: "/", Pageviews: 2, Visitors: 1, BounceRate: 50, AvgTimeOnPage: 120},
			{Pathname: "/blog/post-1", Pageviews: 2, Visitors: 2, BounceRate: 50, AvgTimeOnPage: 1200},
			{Pathname: "/landing", Pageviews: 2, Visitors: 2, BounceRate: 0, AvgTimeOnPage: 45}, // alice 60 s, dave 30 s
			{Pathname: "/blog/post-2", Pageviews: 1, Visitors: 1, BounceRate: 0, AvgTimeOnPage: 0},
			{Pathname: "/signup", Pageviews: 1, Visitors: 1, BounceRate: 0, AvgTimeOnPage: 0},
		}
		if diff := cmp.Diff(wantNY, res.Data.Pages); diff != "" {
			t.Errorf("pages in New York, May 1-4 (-want +got):\n%s", diff)
		}
	})

	t.Run("entry and exit pages", func(t *testing.T) {
		entries, err := c.EntryPages(ctx, week)
		if err != nil {
			t.Fatal(err)
		}
		// 8 sessions: /landing alice, dave, gina; / carol ×2; /blog/post-1 bob, erin; /pricing frank
		wantEntries := []api.EntryPage{
			{Pathname: "/landing", Entries: 3, EntryRate: 37.5, BounceRate: 33.3},
			{Pathname: "/", Entries: 2, EntryRate: 25, BounceRate: 50},
			{Pathname: "/blog/post-1", Entries: 2, EntryRate: 25, BounceRate: 50},
			{Pathname: "/pricing", Entries: 1, EntryRate: 12.5, BounceRate: 0},
		}
		if diff := cmp.Diff(wantEntries, entries.Data.EntryPages); diff != "" {
			t.Errorf("entry pages (-want +got):\n%s", diff)
		}
		exits, err := c.ExitPages(ctx, week)
		if err != nil {
			t.Fatal(err)
		}
		// exits / pageviews of the page: /pricing carol, dave, frank 3/4; the rest one exit each
		wantExits := []api.ExitPage{
			{Pathname: "/pricing", Exits: 3, ExitRate: 75},
			{Pathname: "/", Exits: 1, ExitRate: 50},
			{Pathname: "/blog/post-1", Exits: 1, ExitRate: 50},
			{Pathname: "/blog/post-2", Exits: 1, ExitRate: 100},
			{Pathname: "/landing", Exits: 1, ExitRate: 33.3},
			{Pathname: "/signup", Exits: 1, ExitRate: 100},
		}
		if diff := cmp.Diff(wantExits, exits.Data.ExitPages); diff != "" {
			t.Errorf("exit pages (-want +got):\n%s", diff)
		}
	})

	t.Run("sources", func(t *testing.T) {
		res, err := c.Sources(ctx, week)
		if err != nil {
			t.Fatal(err)
		}
		want := []api.SourceRow{
			{Source: "Google", SourceType: "search", Visitors: 2, Pageviews: 4, BounceRate: 50},        // alice 3, gina 1 (bounce)
			{Source: "Direct / None", SourceType: "direct", Visitors: 1, Pageviews: 3, BounceRate: 50}, // carol's 2 sessions
			{Source: "Hacker News", SourceType: "social", Visitors: 1, Pageviews: 2, BounceRate: 0},
			{Source: "Twitter", SourceType: "social", Visitors: 1, Pageviews: 1, BounceRate: 100},
			{Source: "acme-mail", SourceType: "referral", Visitors: 1, Pageviews: 2, BounceRate: 0},
			{Source: "myblog.example.org", SourceType: "referral", Visitors: 1, Pageviews: 1, BounceRate: 0},
		}
		if diff := cmp.Diff(want, res.Data.Sources); diff != "" {
			t.Errorf("sources (-want +got):\n%s", diff)
		}
	})

	t.Run("devices, browsers, operating systems", func(t *testing.T) {
		devices, err := c.Devices(ctx, week)
		if err != nil {
			t.Fatal(err)
		}
		wantDevices := []api.DeviceRow{{Device: "Desktop", Visitors: 3, Percentage: 42.9}, {Device: "Mobile", Visitors: 3, Percentage: 42.9}, {Device: "Tablet", Visitors: 1, Percentage: 14.3}}
		if diff := cmp.Diff(wantDevices, devices.Data.Devices); diff != "" {
			t.Errorf("devices (-want +got):\n%s", diff)
		}
		browsers, err := c.Browsers(ctx, week)
		if err != nil {
			t.Fatal(err)
		}
		wantBrowsers := []api.BrowserRow{{Browser: "Chrome", Visitors: 3, Percentage: 42.9}, {Browser: "Safari", Visitors: 2, Percentage: 28.6}, {Browser: "Edge", Visitors: 1, Percentage: 14.3}, {Browser: "Firefox", Visitors: 1, Percentage: 14.3}}
		if diff := cmp.Diff(wantBrowsers, browsers.Data.Browsers); diff != "" {
			t.Errorf("browsers (-want +got):\n%s", diff)
		}
		mobile := week
		mobile.Device = "Mobile"
		browsers, err = c.Browsers(ctx, mobile)
		if err != nil {
			t.Fatal(err)
		}
		// bob Safari, erin and gina Chrome: shares of the 3 mobile visitors
		if diff := cmp.Diff([]api.BrowserRow{{Browser: "Chrome", Visitors: 2, Percentage: 66.7}, {Browser: "Safari", Visitors: 1, Percentage: 33.3}}, browsers.Data.Browsers); diff != "" {
			t.Errorf("mobile browsers (-want +got):\n%s", diff)
		}
		systems, err := c.OperatingSystems(ctx, week)
		if err != nil {
			t.Fatal(err)
		}
		wantOS := []api.OSRow{{OS: "Android", Visitors: 2, Percentage: 28.6}, {OS: "iOS", Visitors: 2, Percentage: 28.6}, {OS: "Linux", Visitors: 1, Percentage: 14.3}, {OS: "Windows", Visitors: 1, Percentage: 14.3}, {OS: "macOS", Visitors: 1, Percentage: 14.3}}
		if diff := cmp.Diff(wantOS, systems.Data.OperatingSystems); diff != "" {
			t.Errorf("operating systems (-want +got):\n%s", diff)
		}
		desktop := week
		desktop.Device = "Desktop"
		systems, err = c.OperatingSystems(ctx, desktop)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]api.OSRow{{OS: "Linux", Visitors: 1, Percentage: 33.3}, {OS: "Windows", Visitors: 1, Percentage: 33.3}, {OS: "macOS", Visitors: 1, Percentage: 33.3}}, systems.Data.OperatingSystems); diff != "" {
			t.Errorf("desktop operating systems (-want +got):\n%s", diff)
		}
		// Chrome's versions: alice 121.0 (Windows), erin and gina 120.0
		// (Android); hank's Chrome is out of the range
		chrome := week
		chrome.Browser = "Chrome"
		versions, err := c.BrowserVersions(ctx, chrome)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]api.BrowserVersionRow{{BrowserVersion: "120.0", Visitors: 2, Percentage: 66.7}, {BrowserVersion: "121.0", Visitors: 1, Percentage: 33.3}}, versions.Data.BrowserVersions); diff != "" {
			t.Errorf("Chrome versions (-want +got):\n%s", diff)
		}
		// a version filters every report: Chrome 120.0 is erin (US) and gina (GB)
		chrome.BrowserVersion = "120.0"
		countries, err := c.Countries(ctx, chrome)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]api.CountryRow{{CountryCode: "GB", CountryName: "United Kingdom", Visitors: 1, Percentage: 50}, {CountryCode: "US", CountryName: "United States", Visitors: 1, Percentage: 50}}, countries.Data.Countries); diff != "" {
			t.Errorf("countries of Chrome 120.0 (-want +got):\n%s", diff)
		}
		// iOS: bob's iPhone 17.1, carol's iPad 16.6 (equal counts: by version)
		ios := week
		ios.OS = "iOS"
		osVersions, err := c.OSVersions(ctx, ios)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]api.OSVersionRow{{OSVersion: "16.6", Visitors: 1, Percentage: 50}, {OSVersion: "17.1", Visitors: 1, Percentage: 50}}, osVersions.Data.OSVersions); diff != "" {
			t.Errorf("iOS versions (-want +got):\n%s", diff)
		}
		ios.OSVersion = "17.1"
		devices, err = c.Devices(ctx, ios)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]api.DeviceRow{{Device: "Mobile", Visitors: 1, Percentage: 100}}, devices.Data.Devices); diff != "" {
			t.Errorf("devices of iOS 17.1 (-want +got):\n%s", diff)
		}
		// the versions of no browser, or of no system, are no report
		if _, err := c.BrowserVersions(ctx, week); !isAPIError(err, 400, "invalid_request") || err.(*client.Error).Field != "browser" {
			t.Errorf("browser versions without a browser: %v, want a 400 naming browser", err)
		}
		if _, err := c.OSVersions(ctx, week); !isAPIError(err, 400, "invalid_request") || err.(*client.Error).Field != "os" {
			t.Errorf("OS versions without a system: %v, want a 400 naming os", err)
		}
	})

	t.Run("countries, regions, cities", func(t *testing.T) {
		countries, err := c.Countries(ctx, week)
		if err != nil {
			t.Fatal(err)
		}
		// carol (private address) and frank (none) are unknown: ZZ
		want := []api.CountryRow{{CountryCode: "GB", CountryName: "United Kingdom", Visitors: 3, Percentage: 42.9}, {CountryCode: "US", CountryName: "United States", Visitors: 2, Percentage: 28.6}, {CountryCode: "ZZ", CountryName: "Unknown", Visitors: 2, Percentage: 28.6}}
		if diff := cmp.Diff(want, countries.Data.Countries); diff != "" {
			t.Errorf("countries (-want +got):\n%s", diff)
		}
		gb := week
		gb.Country = "gb"
		regions, err := c.Regions(ctx, gb)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]api.RegionRow{{RegionCode: "GB-ENG", RegionName: "England", Visitors: 2, Percentage: 66.7}, {RegionCode: "GB-SCT", RegionName: "Scotland", Visitors: 1, Percentage: 33.3}}, regions.Data.Regions); diff != "" {
			t.Errorf("GB regions (-want +got):\n%s", diff)
		}
		us := week
		us.Country = "US"
		regions, err = c.Regions(ctx, us)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]api.RegionRow{{RegionCode: "US-CA", RegionName: "California", Visitors: 1, Percentage: 50}, {RegionCode: "US-WA", RegionName: "Washington", Visitors: 1, Percentage: 50}}, regions.Data.Regions); diff != "" {
			t.Errorf("US regions (-want +got):\n%s", diff)
		}
		eng := week
		eng.Region = "GB-ENG"
		cities, err := c.Cities(ctx, eng)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]api.CityRow{{City: "London", Visitors: 1, Percentage: 50}, {City: "Manchester", Visitors: 1, Percentage: 50}}, cities.Data.Cities); diff != "" {
			t.Errorf("GB-ENG cities (-want +got):\n%s", diff)
		}
	})

	t.Run("custom events", func(t *testing.T) {
		res, err := c.Events(ctx, week)
		if err != nil {
			t.Fatal(err)
		}
		// signup: alice once, carol twice = 3 by 2 visitors; rate = count / 7 visitors
		want := []api.EventRow{{EventName: "signup", TotalCount: 3, UniqueVisitors: 2, ConversionRate: 42.9}, {EventName: "download", TotalCount: 1, UniqueVisitors: 1, ConversionRate: 14.3}}
		if diff := cmp.Diff(want, res.Data.Events); diff != "" {
			t.Errorf("events (-want +got):\n%s", diff)
		}
		p := week
		p.EventName = "download"
		res, err = c.Events(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want[1:], res.Data.Events); diff != "" {
			t.Errorf("events named download (-want +got):\n%s", diff)
		}
	})

	t.Run("UTM filters apply to every report", func(t *testing.T) {
		p := week
		p.UTMSource, p.UTMCampaign = "acme-mail", "spring"
		res, err := c.Overview(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		// dave only: 2 pageviews in one 30 s session
		if res.Data.Metrics != (api.Metrics{Visitors: 1, Visits: 1, Pageviews: 2, ViewsPerVisit: 2, BounceRate: 0, VisitDuration: 30}) {
			t.Errorf("overview for the campaign: %+v", res.Data.Metrics)
		}
		pages, err := c.Pages(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		wantPages := []api.Page{{Pathname: "/landing", Pageviews: 1, Visitors: 1, AvgTimeOnPage: 30},
			{Pathname: "/pricing", Pageviews: 1, Visitors: 1}}
		if diff := cmp.Diff(wantPages, pages.Data.Pages); diff != "" {
			t.Errorf("pages for the campaign (-want +got):\n%s", diff)
		}
		sources, err := c.Sources(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		if len(sources.Data.Sources) != 1 || sources.Data.Sources[0].Source != "acme-mail" {
			t.Errorf("sources for the campaign: %+v", sources.Data.Sources)
		}
		p.UTMCampaign = "autumn"
		res, err = c.Overview(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		if res.Data.Metrics != (api.Metrics{}) || res.Meta.FilteredBotTraffic != 3 {
			t.Errorf("overview for an unknown campaign: %+v, bots %d", res.Data.Metrics, res.Meta.FilteredBotTraffic)
		}
	})

	t.Run("source, pathname and other filters", func(t *testing.T) {
		p := week
		p.Source = "Google"
		res, err := c.Overview(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		// alice (3 pageviews, 240 s) and gina (1, bounce): 2 visits, 4 / 2 pageviews a visit,
		// 120 s average, 50 % bounce
		if res.Data.Metrics != (api.Metrics{Visitors: 2, Visits: 2, Pageviews: 4, ViewsPerVisit: 2, BounceRate: 50, VisitDuration: 120}) {
			t.Errorf("overview for Google: %+v", res.Data.Metrics)
		}
		pages, err := c.Pages(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		// /landing: alice 60 s then on, gina bounced; alice spent 150 s on /pricing
		wantPages := []api.Page{{Pathname: "/landing", Pageviews: 2, Visitors: 2, BounceRate: 50, AvgTimeOnPage: 60},
			{Pathname: "/pricing", Pageviews: 1, Visitors: 1, AvgTimeOnPage: 150}, {Pathname: "/signup", Pageviews: 1, Visitors: 1}}
		if diff := cmp.Diff(wantPages, pages.Data.Pages); diff != "" {
			t.Errorf("pages for Google (-want +got):\n%s", diff)
		}

		// a page filters visits by whether they viewed it: /pricing was seen in
		// alice's, carol's first, dave's and frank's sessions
		p = week
		p.Pathname = "/pricing"
		sources, err := c.Sources(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		wantSources := []api.SourceRow{
			{Source: "Direct / None", SourceType: "direct", Visitors: 1, Pageviews: 2},
			{Source: "Google", SourceType: "search", Visitors: 1, Pageviews: 3},
			{Source: "acme-mail", SourceType: "referral", Visitors: 1, Pageviews: 2},
			{Source: "myblog.example.org", SourceType: "referral", Visitors: 1, Pageviews: 1},
		}
		if diff := cmp.Diff(wantSources, sources.Data.Sources); diff != "" {
			t.Errorf("sources of the visits that viewed /pricing (-want +got):\n%s", diff)
		}
		res, err = c.Overview(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		// events on /pricing: 4 pageviews by 4 visitors; the 4 sessions with one
		// last 240, 120, 30 and 60 s, none bounced, and hold 3+2+2+1 pageviews
		if res.Data.Metrics != (api.Metrics{Visitors: 4, Visits: 4, Pageviews: 4, ViewsPerVisit: 2, BounceRate: 0, VisitDuration: 112.5}) {
			t.Errorf("overview of /pricing: %+v", res.Data.Metrics)
		}

		p = week
		p.Country, p.Device = "GB", "mobile"
		res, err = c.Overview(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		if res.Data.Metrics != (api.Metrics{Visitors: 1, Visits: 1, Pageviews: 1, ViewsPerVisit: 1, BounceRate: 100, VisitDuration: 0}) { // gina
			t.Errorf("overview for mobile visitors from GB: %+v", res.Data.Metrics)
		}

		// revenue filters on what a payment knows of its visit
		p = week
		p.UTMSource = "acme-mail"
		if _, err := c.Revenue(ctx, p); err != nil {
			t.Errorf("revenue for a campaign source: %v", err)
		}
		p.Browser = "Chrome"
		if _, err := c.Revenue(ctx, p); !isAPIError(err, 400, "invalid_request") || err.(*client.Error).Field != "browser" {
			t.Errorf("revenue by browser: %v, want 400 on browser", err)
		}
		p = week
		p.Pathname = "pricing"
		if _, err := c.Pages(ctx, p); !isAPIError(err, 400, "invalid_request") {
			t.Errorf("a pathname without /: %v, want 400", err)
		}
	})

	t.Run("campaigns", func(t *testing.T) {
		res, err := c.Campaigns(ctx, week)
		if err != nil {
			t.Fatal(err)
		}
		// only dave came with UTM parameters: one visit of two pageviews
		// (/landing, /pricing), no bounce
		want := []api.CampaignRow{{Value: "spring", Visitors: 1, Percentage: 100, Pageviews: 2, BounceRate: 0}}
		if diff := cmp.Diff(want, res.Data.Campaigns); diff != "" || res.Data.By != "utm_campaign" {
			t.Errorf("campaigns by %s (-want +got):\n%s", res.Data.By, diff)
		}
		p := week
		p.By = "utm_medium"
		res, err = c.Campaigns(ctx, p)
		if err != nil || len(res.Data.Campaigns) != 1 || res.Data.Campaigns[0].Value != "email" {
			t.Errorf("campaigns by medium: %+v, %v", res.Data, err)
		}
		p.By = "utm_term"
		if _, err := c.Campaigns(ctx, p); !isAPIError(err, 400, "invalid_request") {
			t.Errorf("by utm_term: %v, want 400", err)
		}
	})

	t.Run("realtime, read through another instance", func(t *testing.T) {
		other := h.secondInstance()
		h.clock.Set(time.Date(2026, 5, 7, 23, 33, 0, 0, time.UTC))
		res, err := other.client(h.key).Realtime(ctx, site)
		if err != nil {
			t.Fatal(err)
		}
		// only gina (23:30) is within the last 5 minutes
		want := api.Realtime{ActiveVisitors: 1, CurrentPages: []api.RealtimePage{{Pathname: "/landing", Visitors: 1}},
			CurrentSources: []api.RealtimeSrc{{Source: "Google", Visitors: 1}}}
		if diff := cmp.Diff(want, res.Data); diff != "" {
			t.Errorf("realtime (-want +got):\n%s", diff)
		}
		if !res.Meta.Timestamp.Equal(h.clock.Now()) {
			t.Errorf("timestamp %v, want %v", res.Meta.Timestamp, h.clock.Now())
		}
	})
}

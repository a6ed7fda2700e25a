package app_test

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tally-analytics/tally/pkg/api"
	"github.com/tally-analytics/tally/pkg/client"
)

// channelVisits are ten visitors of a UTC site in the week of 2026-06-01,
// each visit a list of pageviews a given number of seconds apart (the
// first with the referrer and the landing URL that decide its channel):
//
//	ana   Google search, / then /pricing 60 s later     Organic Search, 60 s
//	ben   Google search, /                              Organic Search, bounce
//	cat   utm_source=google&utm_medium=cpc, / then /signup 120 s later
//	                                                    Paid Search, 120 s
//	dan   utm_source=facebook&utm_medium=paid-social    Paid Social, bounce
//	eve   utm_source=newsletter&utm_medium=email, twice: June 2 a bounce,
//	      June 4 / then /pricing 30 s later             Email, 2 visits
//	fay   no referrer, /                                Direct, bounce
//	gus   no referrer, / then /about 90 s later          Direct, 90 s
//	hal   Hacker News (social in the vendored list)     Organic Social, bounce
//	ida   utm_source=newsletter, no medium              Unassigned, bounce
//	jo    blog.example.org                              Referral, bounce
type channelVisit struct {
	at       string // UTC, of the first pageview
	visitor  string
	referrer string
	urls     []string
	gap      time.Duration // between the pageviews
}

var channelVisits = []channelVisit{
	{"2026-06-01 09:00:00", "ana", "https://www.google.com/search?q=tally", []string{"/", "/pricing"}, time.Minute},
	{"2026-06-01 10:00:00", "ben", "https://www.google.com/", []string{"/"}, 0},
	{"2026-06-01 11:00:00", "cat", "", []string{"/?utm_source=google&utm_medium=cpc", "/signup"}, 2 * time.Minute},
	{"2026-06-01 12:00:00", "dan", "https://l.facebook.com/", []string{"/?utm_source=facebook&utm_medium=paid-social"}, 0},
	{"2026-06-02 08:00:00", "eve", "", []string{"/?utm_source=newsletter&utm_medium=email"}, 0},
	{"2026-06-04 08:00:00", "eve", "", []string{"/?utm_source=newsletter&utm_medium=email", "/pricing"}, 30 * time.Second},
	{"2026-06-02 13:00:00", "fay", "", []string{"/"}, 0},
	{"2026-06-03 14:00:00", "gus", "", []string{"/", "/about"}, 90 * time.Second},
	{"2026-06-03 15:00:00", "hal", "https://news.ycombinator.com/item?id=1", []string{"/"}, 0},
	{"2026-06-05 16:00:00", "ida", "", []string{"/?utm_source=newsletter"}, 0},
	{"2026-06-05 17:00:00", "jo", "https://blog.example.org/post", []string{"/"}, 0},
}

// channelsSite sends the visits through the Events API and returns the
// week's parameters.
func channelsSite(t *testing.T, h *harness) client.StatsParams {
	t.Helper()
	ctx := context.Background()
	c := h.client(h.key)
	n := 0
	for _, v := range channelVisits {
		at, err := time.Parse(time.DateTime, v.at)
		if err != nil {
			t.Fatal(err)
		}
		for i, u := range v.urls {
			h.clock.Set(at.Add(time.Duration(i) * v.gap))
			req := api.PageviewRequest{SiteID: string(h.siteID), URL: "https://example.com" + u, VisitorID: v.visitor,
				UserAgent: fixtureUAs[0].ua}
			if i == 0 {
				req.Referrer = v.referrer
			}
			if _, err := c.Pageview(ctx, req); err != nil {
				t.Fatalf("%s %s: %v", v.visitor, u, err)
			}
			n++
		}
	}
	h.waitCount(int64(n), "SELECT count() FROM events WHERE site_id = ?", string(h.siteID))
	h.waitCount(int64(len(channelVisits)), "SELECT toUInt64(sum(sign)) FROM sessions WHERE site_id = ?", string(h.siteID))
	return client.StatsParams{SiteID: string(h.siteID), DateFrom: "2026-06-01", DateTo: "2026-06-07", Timezone: "UTC"}
}

// The channels report, by hand from channelVisits; the channel filter on
// the sources and pages reports; a channel that is none is a 400; the
// dashboard's Channels tab.
func TestChannels(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	p := channelsSite(t, h)
	c := h.client(h.key)

	got, err := c.Channels(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	// 10 visitors: a channel of 2 is 20 %, of 1 10 %. Direct: fay's bounce
	// and gus's 2 pageviews in 90 s → 2 visits, 3 pageviews, 50 %, 45 s;
	// Organic Search: ana's 2 in 60 s and ben's bounce → 50 %, 30 s; Email:
	// eve's 2 visits, a bounce and 2 pageviews in 30 s → 50 %, 15 s; Paid
	// Search: cat's 2 pageviews in 120 s. Ties by name.
	want := []api.ChannelRow{
		{Channel: "Direct", Visitors: 2, Percentage: 20, Visits: 2, Pageviews: 3, BounceRate: 50, VisitDuration: 45},
		{Channel: "Organic Search", Visitors: 2, Percentage: 20, Visits: 2, Pageviews: 3, BounceRate: 50, VisitDuration: 30},
		{Channel: "Email", Visitors: 1, Percentage: 10, Visits: 2, Pageviews: 3, BounceRate: 50, VisitDuration: 15},
		{Channel: "Organic Social", Visitors: 1, Percentage: 10, Visits: 1, Pageviews: 1, BounceRate: 100},
		{Channel: "Paid Search", Visitors: 1, Percentage: 10, Visits: 1, Pageviews: 2, VisitDuration: 120},
		{Channel: "Paid Social", Visitors: 1, Percentage: 10, Visits: 1, Pageviews: 1, BounceRate: 100},
		{Channel: "Referral", Visitors: 1, Percentage: 10, Visits: 1, Pageviews: 1, BounceRate: 100},
		{Channel: "Unassigned", Visitors: 1, Percentage: 10, Visits: 1, Pageviews: 1, BounceRate: 100},
	}
	if diff := cmp.Diff(want, got.Data.Channels); diff != "" {
		t.Errorf("channels (-want +got):\n%s", diff)
	}
	if got.Meta.Sampled {
		t.Error("meta.sampled: the week is far below the thresholds")
	}

	// the filter, in any case, on other reports: Organic Search is ana's and
	// ben's visits from Google; Email is eve's, named newsletter
	sources := func(channel string) []api.SourceRow {
		q := p
		q.Channel = channel
		res, err := c.Sources(ctx, q)
		if err != nil {
			t.Fatalf("sources of %s: %v", channel, err)
		}
		return res.Data.Sources
	}
	if diff := cmp.Diff([]api.SourceRow{{Source: "Google", SourceType: "search", Visitors: 2, Pageviews: 3, BounceRate: 50}},
		sources("organic search")); diff != "" {
		t.Errorf("sources of Organic Search (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]api.SourceRow{{Source: "newsletter", SourceType: "referral", Visitors: 1, Pageviews: 3, BounceRate: 50}},
		sources("Email")); diff != "" {
		t.Errorf("sources of Email (-want +got):\n%s", diff)
	}
	// Direct's pages: / of fay and gus, then gus's /about after 90 s
	q := p
	q.Channel = "Direct"
	pages, err := c.Pages(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]pageCells{{"/", 2, 2, 50, 90}, {"/about", 1, 1, 0, 0}}, pageCellsOf(pages.Data.Pages)); diff != "" {
		t.Errorf("pages of Direct (-want +got):\n%s", diff)
	}

	// a segment keeps the channel as the report spells it and applies it;
	// the same filter by hand beside it is refused, naming segment
	paid, err := c.CreateSegment(ctx, p.SiteID, api.SegmentRequest{Name: "Paid search", Filters: map[string]string{"channel": "paid SEARCH"}})
	if err != nil || paid.Filters["channel"] != "Paid Search" {
		t.Fatalf("segment: %+v, %v; want its channel kept as Paid Search", paid, err)
	}
	q = p
	q.Segment = paid.ID
	if res, err := c.Sources(ctx, q); err != nil || len(res.Data.Sources) != 1 || res.Data.Sources[0].Source != "Google" ||
		res.Data.Sources[0].Visitors != 1 || res.Data.Sources[0].Pageviews != 2 {
		t.Errorf("sources of the Paid search segment: %+v, %v; want cat's visit from Google", res.Data.Sources, err)
	}
	status, e := get(t, h, h.key, "/api/v1/stats/sources", url.Values{"site_id": {p.SiteID}, "date_from": {p.DateFrom},
		"date_to": {p.DateTo}, "segment": {paid.ID}, "channel": {"Email"}})
	if status != http.StatusBadRequest || e.Error.Field != "segment" {
		t.Errorf("channel beside a segment of a channel: %d %+v, want 400 naming segment", status, e.Error)
	}
	if _, err := c.CreateSegment(ctx, p.SiteID, api.SegmentRequest{Name: "Bad", Filters: map[string]string{"channel": "Paid"}}); err == nil ||
		!strings.Contains(err.Error(), "filters.channel") {
		t.Errorf("a segment of a channel that is none: %v, want 400 naming filters.channel", err)
	}

	// a channel that is none is refused, naming channel, on every report
	for _, path := range []string{"/api/v1/stats/channels", "/api/v1/stats/sources", "/api/v1/stats/pages"} {
		status, e := get(t, h, h.key, path, url.Values{"site_id": {p.SiteID}, "date_from": {p.DateFrom}, "date_to": {p.DateTo},
			"channel": {"Organic"}})
		if status != http.StatusBadRequest || e.Error.Code != "invalid_request" || e.Error.Field != "channel" {
			t.Errorf("%s?channel=Organic: %d %+v, want 400 invalid_request naming channel", path, status, e.Error)
		}
	}

	// the dashboard's Channels tab: the report's first rows, each a link
	// that filters the dashboard by its channel, which the filter bar names
	h.clock.Set(time.Date(2026, 6, 7, 18, 0, 0, 0, time.UTC))
	w := newWebUser(t, h)
	w.login(h.email)
	body := w.expect(http.MethodGet, "/sites/"+p.SiteID+"/cards/sources?range=7d&tab=channels", nil, http.StatusOK)
	row := regexp.MustCompile(`(?s)<tr data-row="([^"]*)">.*?href="([^"]*)".*?</tr>`)
	cell := regexp.MustCompile(`data-col="([a-z_]+)" data-value="([^"]*)">([^<]*)<`)
	var rows []string
	for _, m := range row.FindAllStringSubmatch(body, -1) {
		line := m[1] + " " + html.UnescapeString(m[2])
		for _, c := range cell.FindAllStringSubmatch(m[0], -1) {
			line += " " + c[1] + "=" + c[3]
		}
		rows = append(rows, line)
	}
	link := "/sites/" + p.SiteID + "?channel="
	wantRows := []string{
		"Direct " + link + "Direct&range=7d visitors=2 percentage=20.0% visits=2 bounce_rate=50.0% visit_duration=45s",
		"Organic Search " + link + "Organic+Search&range=7d visitors=2 percentage=20.0% visits=2 bounce_rate=50.0% visit_duration=30s",
		"Email " + link + "Email&range=7d visitors=1 percentage=10.0% visits=2 bounce_rate=50.0% visit_duration=15s",
		"Organic Social " + link + "Organic+Social&range=7d visitors=1 percentage=10.0% visits=1 bounce_rate=100.0% visit_duration=0s",
		"Paid Search " + link + "Paid+Search&range=7d visitors=1 percentage=10.0% visits=1 bounce_rate=0.0% visit_duration=2m 00s",
		"Paid Social " + link + "Paid+Social&range=7d visitors=1 percentage=10.0% visits=1 bounce_rate=100.0% visit_duration=0s",
		"Referral " + link + "Referral&range=7d visitors=1 percentage=10.0% visits=1 bounce_rate=100.0% visit_duration=0s",
		"Unassigned " + link + "Unassigned&range=7d visitors=1 percentage=10.0% visits=1 bounce_rate=100.0% visit_duration=0s",
	}
	if diff := cmp.Diff(wantRows, rows); diff != "" {
		t.Errorf("the Channels tab (-want +got):\n%s", diff)
	}
	if !strings.Contains(body, `aria-current="true" class="active">Channels</a>`) {
		t.Error("the Channels tab is not the active one")
	}
	page := w.expect(http.MethodGet, "/sites/"+p.SiteID+"?range=7d&channel=organic+search", nil, http.StatusOK)
	if !strings.Contains(page, `<span class="chip" data-filter="channel">Channel: <strong>Organic Search</strong>`) {
		t.Error("the filter bar does not show the channel filter, spelt as the report spells it")
	}
	// a shared dashboard has the tab too, its links under the link
	share, err := c.CreateSharedLink(ctx, p.SiteID, api.SharedLinkRequest{Label: "public"})
	if err != nil {
		t.Fatal(err)
	}
	anon := newWebUser(t, h)
	shared := anon.expect(http.MethodGet, "/share/"+share.Token+"/cards/sources?range=7d&tab=channels", nil, http.StatusOK)
	if !strings.Contains(shared, `<tr data-row="Paid Search">`) ||
		!strings.Contains(shared, `href="/share/`+share.Token+`?channel=Paid&#43;Search&amp;range=7d"`) {
		t.Errorf("the shared dashboard's Channels tab:\n%s", shared)
	}
	// filtered by Paid Search, the sources card lists cat's google
	filtered := w.expect(http.MethodGet, "/sites/"+p.SiteID+"/cards/sources?range=7d&channel=Paid+Search", nil, http.StatusOK)
	if !strings.Contains(filtered, `<tr data-row="Google">`) || strings.Contains(filtered, `<tr data-row="Direct / None">`) {
		t.Errorf("the sources card filtered by Paid Search:\n%s", filtered)
	}
}

// pageCells are a pages report row's figures but its scroll depth: a
// row's page, pageviews, visitors, bounce rate and time on page.
type pageCells struct {
	Path                string
	Pageviews, Visitors int64
	BounceRate, Time    float64
}

func pageCellsOf(pages []api.Page) []pageCells {
	out := make([]pageCells, 0, len(pages))
	for _, pg := range pages {
		out = append(out, pageCells{pg.Pathname, pg.Pageviews, pg.Visitors, pg.BounceRate, pg.AvgTimeOnPage})
	}
	return out
}

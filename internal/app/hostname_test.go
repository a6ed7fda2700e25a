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

	"github.com/tally-analytics/tally/internal/accounts"
	"github.com/tally-analytics/tally/pkg/api"
	"github.com/tally-analytics/tally/pkg/client"
)

// hostEvents are six visitors of the harness's site (example.com, UTC) on
// June 2, 2026, on two of its hosts:
//
//	ann  Google  10:00 example.com/, 10:01 blog.example.com/post, 10:02 blog.example.com/
//	                                       (one visit crossing hosts: 3 pageviews, 120 s)
//	ben  direct  11:00 blog.example.com/post, 11:01 Subscribe there   (60 s, no bounce)
//	cat  direct  12:00 example.com/, 12:01 example.com/pricing         (60 s)
//	dan  Google  13:00 www.example.com/ (stored as example.com)       (a bounce)
//	eve  Google  14:00 Blog.Example.com/ (stored in lower case)       (a bounce)
//	fay  direct  15:00 example.com/                                   (a bounce)
var hostEvents = []struct {
	at, visitor, url, referrer, name string
}{
	{"10:00", "ann", "https://example.com/", "https://www.google.com/", ""},
	{"10:01", "ann", "https://blog.example.com/post", "", ""},
	{"10:02", "ann", "https://blog.example.com/", "", ""},
	{"11:00", "ben", "https://blog.example.com/post", "", ""},
	{"11:01", "ben", "https://blog.example.com/post", "", "Subscribe"},
	{"12:00", "cat", "https://example.com/", "", ""},
	{"12:01", "cat", "https://example.com/pricing", "", ""},
	{"13:00", "dan", "https://www.example.com/", "https://www.google.com/", ""},
	{"14:00", "eve", "https://Blog.Example.com/", "https://www.google.com/", ""},
	{"15:00", "fay", "https://example.com/", "", ""},
}

// hostSite sends hostEvents through the Events API and returns the week's
// parameters.
func hostSite(t *testing.T, h *harness) client.StatsParams {
	t.Helper()
	ctx := context.Background()
	c := h.client(h.key)
	for _, ev := range hostEvents {
		at, err := time.Parse(time.DateTime, "2026-06-02 "+ev.at+":00")
		if err != nil {
			t.Fatal(err)
		}
		h.clock.Set(at)
		pv := api.PageviewRequest{SiteID: string(h.siteID), URL: ev.url, Referrer: ev.referrer, VisitorID: ev.visitor,
			UserAgent: fixtureUAs[0].ua}
		if ev.name == "" {
			_, err = c.Pageview(ctx, pv)
		} else {
			_, err = c.CustomEvent(ctx, api.CustomEventRequest{PageviewRequest: pv, EventName: ev.name})
		}
		if err != nil {
			t.Fatalf("%s %s: %v", ev.visitor, ev.url, err)
		}
	}
	h.waitCount(int64(len(hostEvents)), "SELECT count() FROM events WHERE site_id = ?", string(h.siteID))
	h.waitCount(6, "SELECT toUInt64(sum(sign)) FROM sessions WHERE site_id = ?", string(h.siteID))
	h.clock.Set(time.Date(2026, 6, 7, 18, 0, 0, 0, time.UTC))
	return client.StatsParams{SiteID: string(h.siteID), DateFrom: "2026-06-01", DateTo: "2026-06-07", Timezone: "UTC"}
}

// The hostnames report and the hostname filter, by hand from hostEvents,
// on the API, v2, a segment, CSV and the dashboard's pages card.
func TestHostnames(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	p := hostSite(t, h)
	c := h.client(h.key)
	site := p.SiteID

	// Hosts of pageviews: example.com has ann's, cat's two, dan's and
	// fay's (4 visitors, 5 pageviews), blog.example.com ann's two, ben's
	// and eve's (3 visitors, 4 pageviews); of the 6 visitors of pageviews
	// (ann in both), 66.7 % and 50 %.
	hosts, err := c.Hostnames(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	want := []api.HostnameRow{
		{Hostname: "example.com", Visitors: 4, Pageviews: 5, Percentage: 66.7},
		{Hostname: "blog.example.com", Visitors: 3, Pageviews: 4, Percentage: 50},
	}
	if diff := cmp.Diff(want, hosts.Data.Hostnames); diff != "" {
		t.Errorf("hostnames (-want +got):\n%s", diff)
	}
	if hosts.Data.Pagination != (api.Pagination{Total: 2, Page: 1, Limit: 100}) || hosts.Meta.Sampled {
		t.Errorf("pagination %+v, sampled %v", hosts.Data.Pagination, hosts.Meta.Sampled)
	}
	second := p
	second.Limit, second.Page = 1, 2
	if page, err := c.Hostnames(ctx, second); err != nil || !cmp.Equal(want[1:], page.Data.Hostnames) ||
		page.Data.Pagination != (api.Pagination{Total: 2, Page: 2, Limit: 1}) {
		t.Errorf("the second host alone: %+v, %v", page.Data, err)
	}
	// the percentage is of the report's visitors: under a filter, of theirs
	google := p
	google.Source = "Google"
	if res, err := c.Hostnames(ctx, google); err != nil || !cmp.Equal([]api.HostnameRow{
		{Hostname: "blog.example.com", Visitors: 2, Pageviews: 3, Percentage: 66.7},
		{Hostname: "example.com", Visitors: 2, Pageviews: 2, Percentage: 66.7},
	}, res.Data.Hostnames) {
		t.Errorf("the hosts of the visits from Google (ann, dan, eve): %+v, %v", res.Data.Hostnames, err)
	}

	_, body := apiGet(t, h, "/api/v1/stats/hostnames", url.Values{"site_id": {site}, "date_from": {p.DateFrom},
		"date_to": {p.DateTo}, "format": {"csv"}}, "")
	if want := "hostname,visitors,pageviews,percentage\r\nexample.com,4,5,66.7\r\nblog.example.com,3,4,50\r\n"; string(body) != want {
		t.Errorf("CSV %q, want %q", body, want)
	}

	// The blog: the events on it are ann's two pageviews, ben's pageview
	// and Subscribe, eve's pageview (3 visitors, 4 pageviews); the visits
	// with an event on it are ann's (3 pageviews, 120 s), ben's (1, 60 s,
	// no bounce: a custom event) and eve's (a bounce): 3 visits of 5
	// pageviews, 1.67 a visit, 33.3 % bounce, 60 s.
	blog := p
	blog.Hostname = "Blog.Example.com "
	overview, err := c.Overview(ctx, blog)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(api.Metrics{Visitors: 3, Visits: 3, Pageviews: 4, ViewsPerVisit: 1.67, BounceRate: 33.3, VisitDuration: 60},
		overview.Data.Metrics); diff != "" {
		t.Errorf("the blog's overview (-want +got):\n%s", diff)
	}
	// www. is dropped as ingestion drops it: example.com's events are ann's
	// first pageview, cat's two, dan's and fay's (4 visitors, 5 pageviews);
	// their 4 visits hold 3+2+1+1 = 7 pageviews (ann's last two on the
	// blog), 1.75 a visit, 2 bounces (dan, fay), 120+60 s over 4 visits
	www := p
	www.Hostname = "WWW.example.com"
	if res, err := c.Overview(ctx, www); err != nil || !cmp.Equal(api.Metrics{Visitors: 4, Visits: 4, Pageviews: 5,
		ViewsPerVisit: 1.75, BounceRate: 50, VisitDuration: 45}, res.Data.Metrics) {
		t.Errorf("example.com's overview: %+v, %v", res.Data.Metrics, err)
	}

	// The blog's pages: / of ann and eve, /post of ann and ben; a page's
	// bounce rate is that of the selected visits entering on it: / ann's
	// (on example.com) and eve's, /post ben's. Its time is that of the
	// stays on the blog's page: /post ann's 60 s (then the blog's /), /
	// none (ann's last page, eve's bounce; ann's 60 s on / were on
	// example.com, though her next pageview is on the blog).
	pages, err := c.Pages(ctx, blog)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]pageCells{{"/", 2, 2, 50, 0}, {"/post", 2, 2, 0, 60}}, pageCellsOf(pages.Data.Pages)); diff != "" {
		t.Errorf("the blog's pages (-want +got):\n%s", diff)
	}
	// A page's time under a page filter is that of its stays: / ann's 60 s
	// on example.com (then the blog's /post) and cat's 60 s (then
	// /pricing); under the blog's host too, none (ann's last page, eve's
	// bounce).
	for _, tc := range []struct {
		host string
		want float64
	}{{"", 60}, {"example.com", 60}, {"blog.example.com", 0}} {
		home := p
		home.Pathname, home.Hostname = "/", tc.host
		if res, err := c.Pages(ctx, home); err != nil || len(res.Data.Pages) != 1 || res.Data.Pages[0].AvgTimeOnPage != tc.want {
			t.Errorf("the time on / of host %q: %+v, %v; want %v s", tc.host, res.Data.Pages, err, tc.want)
		}
	}
	// Its sources: the visits of ann and eve from Google (4 pageviews, eve's
	// a bounce), ben's direct.
	sources, err := c.Sources(ctx, blog)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]api.SourceRow{
		{Source: "Google", SourceType: "search", Visitors: 2, Pageviews: 4, BounceRate: 50},
		{Source: "Direct / None", SourceType: "direct", Visitors: 1, Pageviews: 1},
	}, sources.Data.Sources); diff != "" {
		t.Errorf("the blog's sources (-want +got):\n%s", diff)
	}
	// its events: ben's Subscribe, of its 3 visitors
	if res, err := c.Events(ctx, blog); err != nil || !cmp.Equal([]api.EventRow{{EventName: "Subscribe", TotalCount: 1,
		UniqueVisitors: 1, ConversionRate: 33.3}}, res.Data.Events) {
		t.Errorf("the blog's events: %+v, %v", res.Data.Events, err)
	}

	t.Run("v2", func(t *testing.T) {
		run := func(q api.QueryRequest) []api.QueryResult {
			t.Helper()
			q.SiteID, q.DateRange = site, []string{p.DateFrom, p.DateTo}
			res, err := c.Query(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			return res.Results
		}
		// grouped by host, every event counts (ben's Subscribe among them)
		if diff := cmp.Diff([]api.QueryResult{
			{Metrics: []float64{4, 5, 5}, Dimensions: []string{"example.com"}},
			{Metrics: []float64{3, 4, 5}, Dimensions: []string{"blog.example.com"}},
		}, run(api.QueryRequest{Metrics: []string{"visitors", "pageviews", "events"}, Dimensions: []string{"event:hostname"}})); diff != "" {
			t.Errorf("by event:hostname (-want +got):\n%s", diff)
		}
		// filtered, the overview's figures
		if diff := cmp.Diff([]api.QueryResult{{Metrics: []float64{3, 3, 4, 33.3}, Dimensions: []string{}}},
			run(api.QueryRequest{Metrics: []string{"visitors", "visits", "pageviews", "bounce_rate"},
				Filters: []any{[]any{"is", "event:hostname", []any{"Blog.Example.com"}}}})); diff != "" {
			t.Errorf("filtered by event:hostname (-want +got):\n%s", diff)
		}
		// the pageviews off example.com, by page; and those of blog hosts
		if diff := cmp.Diff([]api.QueryResult{
			{Metrics: []float64{2}, Dimensions: []string{"/"}}, {Metrics: []float64{2}, Dimensions: []string{"/post"}},
		}, run(api.QueryRequest{Metrics: []string{"pageviews"}, Dimensions: []string{"event:page"},
			Filters: []any{[]any{"is_not", "event:hostname", []any{"example.com"}}}})); diff != "" {
			t.Errorf("pages off example.com (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]api.QueryResult{{Metrics: []float64{4}, Dimensions: []string{}}},
			run(api.QueryRequest{Metrics: []string{"pageviews"}, Filters: []any{[]any{"contains", "event:hostname", []any{"blog."}}}})); diff != "" {
			t.Errorf("pageviews of hosts containing blog. (-want +got):\n%s", diff)
		}
	})

	t.Run("segment", func(t *testing.T) {
		sg, err := c.CreateSegment(ctx, site, api.SegmentRequest{Name: "The blog", Filters: map[string]string{"hostname": "BLOG.example.com"}})
		if err != nil || sg.Filters["hostname"] != "blog.example.com" {
			t.Fatalf("segment %+v, %v; want its host in lower case", sg, err)
		}
		bySegment := p
		bySegment.Segment = sg.ID
		res, err := c.Overview(ctx, bySegment)
		if err != nil || !cmp.Equal(overview.Data.Metrics, res.Data.Metrics) {
			t.Errorf("the segment's overview %+v, %v; want the filter's %+v", res.Data.Metrics, err, overview.Data.Metrics)
		}
		status, e := get(t, h, h.key, "/api/v1/stats/pages", url.Values{"site_id": {site}, "date_from": {p.DateFrom},
			"date_to": {p.DateTo}, "segment": {sg.ID}, "hostname": {"example.com"}})
		if status != http.StatusBadRequest || e.Error.Field != "segment" {
			t.Errorf("hostname beside a segment of a host: %d %+v, want 400 naming segment", status, e.Error)
		}
		if _, err := c.CreateSegment(ctx, site, api.SegmentRequest{Name: "Bad", Filters: map[string]string{"hostname": "https://x"}}); err == nil ||
			!strings.Contains(err.Error(), "filters.hostname") {
			t.Errorf("a segment of a URL: %v, want 400 naming filters.hostname", err)
		}
	})

	t.Run("refusals", func(t *testing.T) {
		query := func(kv ...string) url.Values {
			q := url.Values{"site_id": {site}, "date_from": {p.DateFrom}, "date_to": {p.DateTo}}
			for i := 0; i < len(kv); i += 2 {
				q.Set(kv[i], kv[i+1])
			}
			return q
		}
		for _, bad := range []string{"https://x", "x/y", "x:80", strings.Repeat("x", 300)} {
			for _, path := range []string{"/api/v1/stats/hostnames", "/api/v1/stats/overview", "/api/v1/stats/sources"} {
				status, e := get(t, h, h.key, path, query("hostname", bad))
				if status != http.StatusBadRequest || e.Error.Code != "invalid_request" || e.Error.Field != "hostname" {
					t.Errorf("%s?hostname=%.20s: %d %+v, want 400 invalid_request naming hostname", path, bad, status, e.Error)
				}
			}
		}
		// payments know no page's host, as they know no page
		status, e := get(t, h, h.key, "/api/v1/stats/revenue", query("hostname", "blog.example.com"))
		if status != http.StatusBadRequest || e.Error.Field != "hostname" {
			t.Errorf("revenue by host: %d %+v, want 400 naming hostname", status, e.Error)
		}
		// the raw export takes no filter
		status, e = get(t, h, h.key, "/api/v1/export/events", query("hostname", "blog.example.com", "date_to", p.DateFrom))
		if status != http.StatusBadRequest || e.Error.Field != "hostname" {
			t.Errorf("export by host: %d %+v, want 400 naming hostname", status, e.Error)
		}
		// another account's site is not found
		other, err := h.app.Accounts.CreateUser(ctx, accounts.NewUser{Email: "other@hosts.example", Password: password, Name: "O"})
		if err != nil {
			t.Fatal(err)
		}
		theirs, err := h.app.Accounts.CreateSite(ctx, accounts.NewSite{OwnerEmail: other.Email, Domain: "other.example"})
		if err != nil {
			t.Fatal(err)
		}
		q := query()
		q.Set("site_id", string(theirs.ID))
		status, e = get(t, h, h.key, "/api/v1/stats/hostnames", q)
		if status != http.StatusNotFound || e.Error.Code != "site_not_found" {
			t.Errorf("another account's hosts: %d %+v, want 404 site_not_found", status, e.Error)
		}
	})

	t.Run("dashboard", func(t *testing.T) {
		w := newWebUser(t, h)
		w.login(h.email)
		view := "range=custom&from=2026-06-01&to=2026-06-07"
		body := w.expect(http.MethodGet, "/sites/"+site+"/cards/pages?"+view+"&tab=hostnames", nil, http.StatusOK)
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
		link := "/sites/" + site + "?from=2026-06-01&hostname="
		if diff := cmp.Diff([]string{
			"example.com " + link + "example.com&range=custom&to=2026-06-07 visitors=4 percentage=66.7% pageviews=5",
			"blog.example.com " + link + "blog.example.com&range=custom&to=2026-06-07 visitors=3 percentage=50.0% pageviews=4",
		}, rows); diff != "" {
			t.Errorf("the Hostnames tab (-want +got):\n%s", diff)
		}
		if !strings.Contains(body, ">Hostnames</a>") {
			t.Errorf("no Hostnames tab:\n%s", body)
		}
		// the link filters the dashboard, whose filter bar names it
		page := w.expect(http.MethodGet, "/sites/"+site+"?"+view+"&hostname=blog.example.com", nil, http.StatusOK)
		if !strings.Contains(page, `data-filter="hostname">Hostname: <strong>blog.example.com</strong>`) {
			t.Errorf("the filter bar does not name the host filter:\n%s", page)
		}
		// and the cards follow it: the blog's pages
		cardBody := w.expect(http.MethodGet, "/sites/"+site+"/cards/pages?"+view+"&hostname=blog.example.com", nil, http.StatusOK)
		if !strings.Contains(cardBody, `<tr data-row="/post">`) || strings.Contains(cardBody, `<tr data-row="/pricing">`) {
			t.Errorf("the blog's pages card:\n%s", cardBody)
		}
	})
}

package app_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tally-analytics/tally/internal/accounts"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/testenv"
	"github.com/tally-analytics/tally/pkg/api"
	"github.com/tally-analytics/tally/pkg/client"
)

// seedSegmentSite sends the harness's site (UTC) five visits on May 4,
// 2026 (GB: 81.2.69.10, London, England; US: 216.160.83.5):
//
//	ann  GB  Desktop (Chrome)   from Google  10:00 /, 10:01 /pricing, 10:02 Signup {plan: pro}
//	ben  US  Mobile (iPhone)    from Google  11:00 /, 11:01 Signup {plan: pro}
//	cat  GB  Desktop (Firefox)  direct       12:00 /pricing, 12:01 Signup {plan: pro}
//	dan  GB  Desktop (Chrome)   from Google  13:00 /                      (a bounce)
//	eve  US  Mobile (Android)   direct       14:00 /, 14:01 Signup {plan: free}
func seedSegmentSite(t *testing.T) *harness {
	t.Helper()
	cfg := testenv.Config(t)
	londonAndMilton(t, cfg)
	h := newHarnessWith(t, cfg)
	ctx := context.Background()
	c := h.client(h.key)
	const gb, us, google = "81.2.69.10", "216.160.83.5", "https://www.google.com/"
	type event struct {
		at, visitor, ip, path, referrer, name, plan string
		ua                                          int
	}
	events := []event{
		{"10:00", "ann", gb, "/", google, "", "", 0}, {"10:01", "ann", gb, "/pricing", "", "", "", 0},
		{"10:02", "ann", gb, "/pricing", "", "Signup", "pro", 0},
		{"11:00", "ben", us, "/", google, "", "", 1}, {"11:01", "ben", us, "/", "", "Signup", "pro", 1},
		{"12:00", "cat", gb, "/pricing", "", "", "", 2}, {"12:01", "cat", gb, "/pricing", "", "Signup", "pro", 2},
		{"13:00", "dan", gb, "/", google, "", "", 0},
		{"14:00", "eve", us, "/", "", "", "", 4}, {"14:01", "eve", us, "/", "", "Signup", "free", 4},
	}
	for _, ev := range events {
		at, err := time.Parse(time.DateTime, "2026-05-04 "+ev.at+":00")
		if err != nil {
			t.Fatal(err)
		}
		h.clock.Set(at)
		pv := api.PageviewRequest{SiteID: string(h.siteID), URL: "https://example.com" + ev.path, Referrer: ev.referrer,
			UserAgent: fixtureUAs[ev.ua].ua, IPAddress: ev.ip, VisitorID: ev.visitor}
		if ev.name == "" {
			_, err = c.Pageview(ctx, pv)
		} else {
			_, err = c.CustomEvent(ctx, api.CustomEventRequest{PageviewRequest: pv, EventName: ev.name, Props: map[string]any{"plan": ev.plan}})
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	h.waitCount(int64(len(events)), "SELECT count() FROM events WHERE site_id = ?", string(h.siteID))
	h.clock.Set(time.Date(2026, 5, 8, 9, 0, 0, 0, time.UTC))
	return h
}

// A report with segment= is the report with the segment's filters given by
// hand, in every report, for a viewer too; beside the request's own
// filters both apply; a filter both give is refused naming segment.
func TestSegmentsInReports(t *testing.T) {
	h := seedSegmentSite(t)
	ctx := context.Background()
	site := string(h.siteID)
	c := h.client(h.key)
	viewer := segmentUser(t, h, "viewer@segments.example", model.RoleViewer)
	pro, err := c.CreateSegment(ctx, site, api.SegmentRequest{Name: "Desktop on pro",
		Filters: map[string]string{"device": "desktop", "props[plan]": "pro"}})
	if err != nil {
		t.Fatal(err)
	}
	week := client.StatsParams{SiteID: site, DateFrom: "2026-05-01", DateTo: "2026-05-07"}
	bySegment, byHand := week, week
	bySegment.Segment = pro.ID
	byHand.Device, byHand.Props = "Desktop", map[string]string{"plan": "pro"}

	// The desktop visits with a plan-pro Signup are ann's and cat's: 2
	// visitors; 3 pageviews (ann's / and /pricing, cat's /pricing); no
	// bounce (each visit has a custom event, ann's two pages); durations
	// 120 s (ann 10:00-10:02) and 60 s (cat 12:00-12:01), 90 s on average;
	// 2 visits of 3 pageviews, 1.5 a visit.
	overview, err := c.Overview(ctx, bySegment)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(api.Metrics{Visitors: 2, Visits: 2, Pageviews: 3, ViewsPerVisit: 1.5, BounceRate: 0, VisitDuration: 90}, overview.Data.Metrics); diff != "" {
		t.Errorf("the segment's overview (-want +got):\n%s", diff)
	}
	// Sources: ann from Google (2 pageviews), cat direct (1); equal
	// visitors go by name. Pages: /pricing 2 (ann, cat), / 1 (ann).
	// Countries: both GB. Events: 2 Signups by 2 of 2 visitors.
	sources, err := c.Sources(ctx, bySegment)
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		Name          string
		Visitors, Pvs int64
	}
	var gotSources []row
	for _, s := range sources.Data.Sources {
		gotSources = append(gotSources, row{s.Source, s.Visitors, s.Pageviews})
	}
	if diff := cmp.Diff([]row{{"Direct / None", 1, 1}, {"Google", 1, 2}}, gotSources); diff != "" {
		t.Errorf("the segment's sources (-want +got):\n%s", diff)
	}
	events, err := c.Events(ctx, bySegment)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]api.EventRow{{EventName: "Signup", TotalCount: 2, UniqueVisitors: 2, ConversionRate: 100}}, events.Data.Events); diff != "" {
		t.Errorf("the segment's events (-want +got):\n%s", diff)
	}

	// every report: the segment's answer is the hand-filtered one's, the
	// owner's and a viewer's
	reports := map[string]func(*client.Client, client.StatsParams) (any, error){
		"overview":    func(c *client.Client, p client.StatsParams) (any, error) { return c.Overview(ctx, p) },
		"sources":     func(c *client.Client, p client.StatsParams) (any, error) { return c.Sources(ctx, p) },
		"pages":       func(c *client.Client, p client.StatsParams) (any, error) { return c.Pages(ctx, p) },
		"entry pages": func(c *client.Client, p client.StatsParams) (any, error) { return c.EntryPages(ctx, p) },
		"exit pages":  func(c *client.Client, p client.StatsParams) (any, error) { return c.ExitPages(ctx, p) },
		"countries":   func(c *client.Client, p client.StatsParams) (any, error) { return c.Countries(ctx, p) },
		"devices":     func(c *client.Client, p client.StatsParams) (any, error) { return c.Devices(ctx, p) },
		"browsers":    func(c *client.Client, p client.StatsParams) (any, error) { return c.Browsers(ctx, p) },
		"events":      func(c *client.Client, p client.StatsParams) (any, error) { return c.Events(ctx, p) },
		"campaigns":   func(c *client.Client, p client.StatsParams) (any, error) { return c.Campaigns(ctx, p) },
		"conversions": func(c *client.Client, p client.StatsParams) (any, error) { return c.Conversions(ctx, p) },
		"retention":   func(c *client.Client, p client.StatsParams) (any, error) { return c.Retention(ctx, p) },
	}
	for name, report := range reports {
		want, err := report(c, byHand)
		if err != nil {
			t.Fatalf("%s by hand: %v", name, err)
		}
		for who, cl := range map[string]*client.Client{"owner": c, "viewer": viewer} {
			got, err := report(cl, bySegment)
			if err != nil {
				t.Fatalf("%s with the segment, as the %s: %v", name, who, err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s with the segment, as the %s, differs from the filters by hand (-hand +segment):\n%s", name, who, diff)
			}
		}
	}
	pages, err := c.Pages(ctx, bySegment)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(pages.Data.Pages); n != 2 || pages.Data.Pages[0].Pathname != "/pricing" || pages.Data.Pages[0].Pageviews != 2 ||
		pages.Data.Pages[1].Pageviews != 1 {
		t.Errorf("the segment's pages: %+v, want /pricing 2 and / 1", pages.Data.Pages)
	}

	// beside the request's own filters: of ann and cat, ann came from
	// Google: 1 visitor, 2 pageviews
	withGoogle, handGoogle := bySegment, byHand
	withGoogle.Source, handGoogle.Source = "Google", "Google"
	got, err := c.Overview(ctx, withGoogle)
	if err != nil {
		t.Fatal(err)
	}
	want, err := c.Overview(ctx, handGoogle)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" || got.Data.Metrics.Visitors != 1 || got.Data.Metrics.Pageviews != 2 {
		t.Errorf("the segment and source=Google: %+v, want ann's 1 visitor and 2 pageviews as by hand (-hand +segment):\n%s",
			got.Data.Metrics, diff)
	}

	// a filter both give is refused, whether the values agree or not; so
	// are more than 3 prop filters together (the segment's plan and three)
	for _, p := range []client.StatsParams{
		{Device: "Mobile"}, {Device: "Desktop"}, {Props: map[string]string{"plan": "free"}},
		{Props: map[string]string{"a": "1", "b": "2", "c": "3"}},
	} {
		p.SiteID, p.DateFrom, p.DateTo, p.Segment = site, week.DateFrom, week.DateTo, pro.ID
		_, err := c.Overview(ctx, p)
		wantError(t, err, http.StatusBadRequest, "invalid_request", "segment")
	}
	// two more props are three in all: fine (and nobody sent them)
	p := bySegment
	p.Props = map[string]string{"a": "1", "b": "2"}
	if res, err := c.Overview(ctx, p); err != nil || res.Data.Metrics.Visitors != 0 {
		t.Errorf("the segment and two props of nobody: %+v, %v; want 0 visitors", res.Data.Metrics, err)
	}
}

// A segment brings the filter the regions and cities reports need; one
// that does not exist, is of another site or was deleted is
// segment_not_found; what takes no filters refuses a segment, realtime
// ignores it; the funnel report refuses its props as it refuses theirs.
func TestSegmentsRules(t *testing.T) {
	h := seedSegmentSite(t)
	ctx := context.Background()
	site := string(h.siteID)
	c := h.client(h.key)
	britain, err := c.CreateSegment(ctx, site, api.SegmentRequest{Name: "Britain", Filters: map[string]string{"country": "gb"}})
	if err != nil {
		t.Fatal(err)
	}
	england, err := c.CreateSegment(ctx, site, api.SegmentRequest{Name: "England", Filters: map[string]string{"region": "gb-eng"}})
	if err != nil {
		t.Fatal(err)
	}
	week := client.StatsParams{SiteID: site, DateFrom: "2026-05-01", DateTo: "2026-05-07"}

	// ann, cat and dan are in London, England
	p := week
	p.Segment = britain.ID
	regions, err := c.Regions(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]api.RegionRow{{RegionCode: "GB-ENG", RegionName: "England", Visitors: 3, Percentage: 100}}, regions.Data.Regions); diff != "" {
		t.Errorf("the regions of the Britain segment (-want +got):\n%s", diff)
	}
	p.Segment = england.ID
	cities, err := c.Cities(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]api.CityRow{{City: "London", Visitors: 3, Percentage: 100}}, cities.Data.Cities); diff != "" {
		t.Errorf("the cities of the England segment (-want +got):\n%s", diff)
	}
	_, err = c.Regions(ctx, week)
	wantError(t, err, http.StatusBadRequest, "invalid_request", "country")
	p.Segment = britain.ID
	_, err = c.Cities(ctx, p)
	wantError(t, err, http.StatusBadRequest, "invalid_request", "region")

	// not found: no such segment, another site's, a deleted one
	ctxOther := segmentUser(t, h, "other@segments.example", "")
	elsewhere, err := h.app.Accounts.CreateSite(ctx, accounts.NewSite{OwnerEmail: "other@segments.example", Domain: "elsewhere.example"})
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := ctxOther.CreateSegment(ctx, string(elsewhere.ID), api.SegmentRequest{Name: "Theirs", Filters: map[string]string{"country": "US"}})
	if err != nil {
		t.Fatal(err)
	}
	gone, err := c.CreateSegment(ctx, site, api.SegmentRequest{Name: "Gone", Filters: map[string]string{"os": "Linux"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteSegment(ctx, site, gone.ID); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"nope", "00000000-0000-0000-0000-000000000000", theirs.ID, gone.ID} {
		p := week
		p.Segment = id
		_, err := c.Overview(ctx, p)
		wantError(t, err, http.StatusNotFound, "segment_not_found", "segment")
	}
	// the other account's segment on the other account's site is theirs alone
	p = week
	p.SiteID, p.Segment = string(elsewhere.ID), theirs.ID
	_, err = c.Overview(ctx, p)
	wantError(t, err, http.StatusNotFound, "site_not_found", "site_id")

	// what takes no filters refuses a segment; realtime ignores it
	q := url.Values{"site_id": {site}, "date_from": {"2026-05-01"}, "date_to": {"2026-05-07"}, "segment": {britain.ID}}
	for _, path := range []string{"/api/v1/export/events", "/api/v1/stats/ingestion"} {
		status, e := get(t, h, h.key, path, q)
		if status != http.StatusBadRequest || e.Error.Field != "segment" {
			t.Errorf("%s with a segment: %d %+v, want 400 on segment", path, status, e.Error)
		}
	}
	if status, e := get(t, h, h.key, "/api/v1/stats/realtime", url.Values{"site_id": {site}, "segment": {"nope"}}); status != http.StatusOK {
		t.Errorf("realtime with a segment: %d %+v, want 200", status, e.Error)
	}
	q.Set("segment", " ")
	if status, e := get(t, h, h.key, "/api/v1/stats/overview", q); status != http.StatusBadRequest || e.Error.Field != "segment" {
		t.Errorf("an empty segment: %d %+v, want 400 on segment", status, e.Error)
	}

	// the funnel report refuses a segment's prop, naming it, as it refuses a prop given by hand
	pro, err := c.CreateSegment(ctx, site, api.SegmentRequest{Name: "Pro", Filters: map[string]string{"props[plan]": "pro"}})
	if err != nil {
		t.Fatal(err)
	}
	f, err := c.CreateFunnel(ctx, api.FunnelRequest{SiteID: site, Name: "Pricing", Steps: []api.FunnelStep{
		{Type: "pageview", PagePath: "/"}, {Type: "pageview", PagePath: "/pricing"}}})
	if err != nil {
		t.Fatal(err)
	}
	p = week
	p.FunnelID, p.Segment = f.FunnelID, pro.ID
	_, err = c.FunnelReport(ctx, p)
	wantError(t, err, http.StatusBadRequest, "invalid_request", "props[plan]")
	// a segment of the site's visits is fine there: ann and dan saw / (2),
	// ann then /pricing (1); ben, eve are US, cat never saw /
	p.Segment = britain.ID
	funnel, err := c.FunnelReport(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(funnel.Data.Steps); n != 2 || funnel.Data.Steps[0].Visitors != 2 || funnel.Data.Steps[1].Visitors != 1 {
		t.Errorf("the funnel of the Britain segment: %+v, want 2 then 1", funnel.Data.Steps)
	}
}

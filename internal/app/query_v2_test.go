package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/tally-analytics/tally/internal/accounts"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/testenv"
	"github.com/tally-analytics/tally/pkg/api"
	"github.com/tally-analytics/tally/pkg/client"
)

// queryVisits are five visitors of a UTC site in the week of 2026-06-01
// (GB: 81.2.69.10, US: 216.160.83.5), each one visit:
//
//	ann  GB Desktop  Google        Jun 1 10:00 /, 10:01 /pricing, 10:02 Signup {plan: pro} on /pricing   120 s
//	ben  US Mobile   direct        Jun 1 12:00 /                                                          bounce
//	cat  GB Mobile   Google        Jun 2 09:00 /blog/a, 09:03 /blog/b                                     180 s
//	dan  US Desktop  Hacker News   Jun 3 15:00 /blog/a                                                    bounce
//	eve  GB Desktop  direct        Jun 4 08:00 /, 08:00:30 /pricing                                       30 s
//
// So the week has 5 visitors, 5 visits, 8 pageviews, 9 events, 2 bounces
// (40 %), 330 s of visits (66 s each) and 1.6 views a visit.
var queryVisits = []struct {
	visitor, ip, referrer string
	ua                    int // of fixtureUAs: 0 Chrome on Windows (Desktop), 1 Safari on iOS (Mobile), 2 Firefox on Linux (Desktop)
	at                    string
	steps                 []queryStep
}{
	{"ann", "81.2.69.10", "https://www.google.com/", 0, "2026-06-01 10:00:00",
		[]queryStep{{0, "/", ""}, {time.Minute, "/pricing", ""}, {2 * time.Minute, "/pricing", "Signup"}}},
	{"ben", "216.160.83.5", "", 1, "2026-06-01 12:00:00", []queryStep{{0, "/", ""}}},
	{"cat", "81.2.69.10", "https://www.google.com/", 1, "2026-06-02 09:00:00",
		[]queryStep{{0, "/blog/a", ""}, {3 * time.Minute, "/blog/b", ""}}},
	{"dan", "216.160.83.5", "https://news.ycombinator.com/", 2, "2026-06-03 15:00:00", []queryStep{{0, "/blog/a", ""}}},
	{"eve", "81.2.69.10", "", 0, "2026-06-04 08:00:00", []queryStep{{0, "/", ""}, {30 * time.Second, "/pricing", ""}}},
}

type queryStep struct {
	after      time.Duration
	path, name string // name: a custom event's, "" for a pageview
}

func querySite(t *testing.T) (*harness, *client.Client, string) {
	t.Helper()
	cfg := testenv.Config(t)
	londonAndMilton(t, cfg)
	h := newHarnessWith(t, cfg)
	ctx := context.Background()
	site, err := h.app.Accounts.CreateSite(ctx, accounts.NewSite{OwnerEmail: h.email, Domain: "q.example.com", Timezone: "UTC"})
	if err != nil {
		t.Fatal(err)
	}
	c := h.client(h.key)
	n := 0
	for _, v := range queryVisits {
		at, err := time.Parse(time.DateTime, v.at)
		if err != nil {
			t.Fatal(err)
		}
		for i, s := range v.steps {
			h.clock.Set(at.Add(s.after))
			req := api.PageviewRequest{SiteID: string(site.ID), URL: "https://q.example.com" + s.path, UserAgent: fixtureUAs[v.ua].ua,
				IPAddress: v.ip, VisitorID: v.visitor}
			if i == 0 {
				req.Referrer = v.referrer
			}
			if s.name == "" {
				_, err = c.Pageview(ctx, req)
			} else {
				_, err = c.CustomEvent(ctx, api.CustomEventRequest{PageviewRequest: req, EventName: s.name, Props: map[string]any{"plan": "pro"}})
			}
			if err != nil {
				t.Fatalf("%s %s: %v", v.visitor, s.path, err)
			}
			n++
		}
	}
	h.waitCount(int64(n), "SELECT count() FROM events WHERE site_id = ?", string(site.ID))
	h.waitCount(int64(len(queryVisits)), "SELECT toUInt64(sum(sign)) FROM sessions WHERE site_id = ?", string(site.ID))
	for _, g := range []api.GoalRequest{
		{SiteID: string(site.ID), GoalName: "Signed up", GoalType: "custom_event", EventName: "Signup"},
		{SiteID: string(site.ID), GoalName: "Saw pricing", GoalType: "pageview", PagePath: "/pricing"},
		{SiteID: string(site.ID), GoalName: "Bought", GoalType: "custom_event", EventName: "Purchase"},
	} {
		if _, err := c.CreateGoal(ctx, g); err != nil {
			t.Fatal(err)
		}
	}
	return h, c, string(site.ID)
}

var queryWeek = []string{"2026-06-01", "2026-06-07"}

// TestQueryV2 checks POST /api/v2/query against queryVisits by hand, and
// against the v1 reports of the same week.
func TestQueryV2(t *testing.T) {
	h, c, site := querySite(t)
	ctx := context.Background()
	run := func(t *testing.T, q api.QueryRequest) api.QueryResponse {
		t.Helper()
		q.SiteID = site
		if q.DateRange == nil {
			q.DateRange = queryWeek
		}
		res, err := c.Query(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	type row = api.QueryResult
	results := func(t *testing.T, q api.QueryRequest, want []row) api.QueryResponse {
		t.Helper()
		res := run(t, q)
		if diff := cmp.Diff(want, res.Results, cmpopts.EquateNaNs()); diff != "" {
			t.Errorf("results (-want +got):\n%s", diff)
		}
		return res
	}
	v1 := client.StatsParams{SiteID: site, DateFrom: queryWeek[0], DateTo: queryWeek[1]}

	t.Run("aggregate", func(t *testing.T) {
		res := results(t, api.QueryRequest{Metrics: []string{"visitors", "visits", "pageviews", "views_per_visit", "bounce_rate",
			"visit_duration", "events"}},
			[]row{{Metrics: []float64{5, 5, 8, 1.6, 40, 66, 9}, Dimensions: []string{}}})
		want := api.QueryEcho{SiteID: site, DateRange: []string{"2026-06-01T00:00:00Z", "2026-06-07T23:59:59Z"},
			Metrics:    []string{"visitors", "visits", "pageviews", "views_per_visit", "bounce_rate", "visit_duration", "events"},
			Dimensions: []string{}, Filters: []any{}, OrderBy: [][]string{{"visitors", "desc"}},
			Pagination: api.QueryPageEcho{Limit: 10000}}
		if diff := cmp.Diff(want, res.Query); diff != "" {
			t.Errorf("query (-want +got):\n%s", diff)
		}
		if res.Meta.Sampled || res.Meta.Timezone != "UTC" || res.Meta.TotalRows != nil {
			t.Errorf("meta %+v", res.Meta)
		}
		ov, err := c.Overview(ctx, v1)
		if err != nil {
			t.Fatal(err)
		}
		m := res.Results[0].Metrics
		if got := (api.Metrics{Visitors: int64(m[0]), Visits: int64(m[1]), Pageviews: int64(m[2]), ViewsPerVisit: m[3], BounceRate: m[4],
			VisitDuration: m[5]}); got != ov.Data.Metrics {
			t.Errorf("v2 %+v, the overview %+v", got, ov.Data.Metrics)
		}
	})

	t.Run("by page", func(t *testing.T) {
		res := results(t, api.QueryRequest{Metrics: []string{"visitors", "pageviews", "events", "percentage"}, Dimensions: []string{"event:page"}},
			[]row{
				{Metrics: []float64{3, 3, 3, 60}, Dimensions: []string{"/"}},
				{Metrics: []float64{2, 2, 2, 40}, Dimensions: []string{"/blog/a"}},
				{Metrics: []float64{2, 2, 3, 40}, Dimensions: []string{"/pricing"}},
				{Metrics: []float64{1, 1, 1, 20}, Dimensions: []string{"/blog/b"}},
			})
		pages, err := c.Pages(ctx, v1)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string][2]int64{}
		for _, r := range res.Results {
			got[r.Dimensions[0]] = [2]int64{int64(r.Metrics[0]), int64(r.Metrics[1])}
		}
		want := map[string][2]int64{}
		for _, p := range pages.Data.Pages {
			want[p.Pathname] = [2]int64{p.Visitors, p.Pageviews}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("visitors and pageviews by page, the pages report (-) and v2 (+):\n%s", diff)
		}
	})

	t.Run("by source", func(t *testing.T) {
		res := results(t, api.QueryRequest{Metrics: []string{"visitors", "pageviews", "bounce_rate", "visits"}, Dimensions: []string{"visit:source"}},
			[]row{
				{Metrics: []float64{2, 3, 50, 2}, Dimensions: []string{"Direct / None"}},
				{Metrics: []float64{2, 4, 0, 2}, Dimensions: []string{"Google"}},
				{Metrics: []float64{1, 1, 100, 1}, Dimensions: []string{"Hacker News"}},
			})
		sources, err := c.Sources(ctx, v1)
		if err != nil {
			t.Fatal(err)
		}
		var got, want []api.SourceRow
		for _, r := range res.Results {
			got = append(got, api.SourceRow{Source: r.Dimensions[0], Visitors: int64(r.Metrics[0]), Pageviews: int64(r.Metrics[1]), BounceRate: r.Metrics[2]})
		}
		for _, s := range sources.Data.Sources {
			s.SourceType = ""
			want = append(want, s)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("the sources report (-) and v2 (+):\n%s", diff)
		}
	})

	t.Run("by device, percentage", func(t *testing.T) {
		res := results(t, api.QueryRequest{Metrics: []string{"visitors", "percentage"}, Dimensions: []string{"visit:device"}},
			[]row{{Metrics: []float64{3, 60}, Dimensions: []string{"Desktop"}}, {Metrics: []float64{2, 40}, Dimensions: []string{"Mobile"}}})
		devices, err := c.Devices(ctx, v1)
		if err != nil {
			t.Fatal(err)
		}
		var got []api.DeviceRow
		for _, r := range res.Results {
			got = append(got, api.DeviceRow{Device: r.Dimensions[0], Visitors: int64(r.Metrics[0]), Percentage: r.Metrics[1]})
		}
		if diff := cmp.Diff(devices.Data.Devices, got); diff != "" {
			t.Errorf("the devices report (-) and v2 (+):\n%s", diff)
		}
	})

	t.Run("by country and device", func(t *testing.T) {
		results(t, api.QueryRequest{Metrics: []string{"visitors"}, Dimensions: []string{"visit:country", "visit:device"}},
			[]row{
				{Metrics: []float64{2}, Dimensions: []string{"GB", "Desktop"}},
				{Metrics: []float64{1}, Dimensions: []string{"GB", "Mobile"}},
				{Metrics: []float64{1}, Dimensions: []string{"US", "Desktop"}},
				{Metrics: []float64{1}, Dimensions: []string{"US", "Mobile"}},
			})
	})

	t.Run("pages by country", func(t *testing.T) {
		results(t, api.QueryRequest{Metrics: []string{"visitors", "pageviews"}, Dimensions: []string{"event:page", "visit:country"}},
			[]row{
				{Metrics: []float64{2, 2}, Dimensions: []string{"/", "GB"}},
				{Metrics: []float64{2, 2}, Dimensions: []string{"/pricing", "GB"}},
				{Metrics: []float64{1, 1}, Dimensions: []string{"/", "US"}},
				{Metrics: []float64{1, 1}, Dimensions: []string{"/blog/a", "GB"}},
				{Metrics: []float64{1, 1}, Dimensions: []string{"/blog/a", "US"}},
				{Metrics: []float64{1, 1}, Dimensions: []string{"/blog/b", "GB"}},
			})
	})

	t.Run("by channel", func(t *testing.T) {
		res := results(t, api.QueryRequest{Metrics: []string{"visitors", "percentage", "visits", "pageviews", "bounce_rate", "visit_duration"},
			Dimensions: []string{"visit:channel"}},
			[]row{
				{Metrics: []float64{2, 40, 2, 3, 50, 15}, Dimensions: []string{"Direct"}},
				{Metrics: []float64{2, 40, 2, 4, 0, 150}, Dimensions: []string{"Organic Search"}},
				{Metrics: []float64{1, 20, 1, 1, 100, 0}, Dimensions: []string{"Organic Social"}},
			})
		channels, err := c.Channels(ctx, v1)
		if err != nil {
			t.Fatal(err)
		}
		var got []api.ChannelRow
		for _, r := range res.Results {
			m := r.Metrics
			got = append(got, api.ChannelRow{Channel: r.Dimensions[0], Visitors: int64(m[0]), Percentage: m[1], Visits: int64(m[2]),
				Pageviews: int64(m[3]), BounceRate: m[4], VisitDuration: m[5]})
		}
		if diff := cmp.Diff(channels.Data.Channels, got); diff != "" {
			t.Errorf("the channels report (-) and v2 (+):\n%s", diff)
		}
	})

	t.Run("by exit page", func(t *testing.T) {
		res := results(t, api.QueryRequest{Metrics: []string{"visits"}, Dimensions: []string{"visit:exit_page"}},
			[]row{
				{Metrics: []float64{2}, Dimensions: []string{"/pricing"}},
				{Metrics: []float64{1}, Dimensions: []string{"/"}},
				{Metrics: []float64{1}, Dimensions: []string{"/blog/a"}},
				{Metrics: []float64{1}, Dimensions: []string{"/blog/b"}},
			})
		exits, err := c.ExitPages(ctx, v1)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]int64{}
		for _, e := range exits.Data.ExitPages {
			want[e.Pathname] = e.Exits
		}
		got := map[string]int64{}
		for _, r := range res.Results {
			got[r.Dimensions[0]] = int64(r.Metrics[0])
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("the exit pages report (-) and v2 (+):\n%s", diff)
		}
	})

	t.Run("by prop", func(t *testing.T) {
		results(t, api.QueryRequest{Metrics: []string{"events", "visitors"}, Dimensions: []string{"event:props:plan"}},
			[]row{{Metrics: []float64{8, 5}, Dimensions: []string{"(none)"}}, {Metrics: []float64{1, 1}, Dimensions: []string{"pro"}}})
		results(t, api.QueryRequest{Metrics: []string{"events"}, Dimensions: []string{"event:name"}},
			[]row{{Metrics: []float64{8}, Dimensions: []string{"pageview"}}, {Metrics: []float64{1}, Dimensions: []string{"Signup"}}})
	})

	t.Run("by week and month", func(t *testing.T) {
		for _, unit := range []string{"time:week", "time:month"} {
			results(t, api.QueryRequest{Metrics: []string{"visitors", "events"}, Dimensions: []string{unit}},
				[]row{{Metrics: []float64{5, 9}, Dimensions: []string{"2026-06-01"}}})
		}
	})

	t.Run("by day", func(t *testing.T) {
		res := results(t, api.QueryRequest{Metrics: []string{"visitors", "pageviews", "visits", "bounce_rate"}, Dimensions: []string{"time:day"}},
			[]row{
				{Metrics: []float64{2, 3, 2, 50}, Dimensions: []string{"2026-06-01"}},
				{Metrics: []float64{1, 2, 1, 0}, Dimensions: []string{"2026-06-02"}},
				{Metrics: []float64{1, 1, 1, 100}, Dimensions: []string{"2026-06-03"}},
				{Metrics: []float64{1, 2, 1, 0}, Dimensions: []string{"2026-06-04"}},
			})
		ov, err := c.Overview(ctx, v1)
		if err != nil {
			t.Fatal(err)
		}
		var want, got []api.TimeseriesPoint
		for _, p := range ov.Data.Timeseries {
			if p.Visitors > 0 {
				want = append(want, api.TimeseriesPoint{Date: p.Date, Visitors: p.Visitors, Pageviews: p.Pageviews, Visits: p.Visits,
					BounceRate: p.BounceRate})
			}
		}
		for _, r := range res.Results {
			got = append(got, api.TimeseriesPoint{Date: r.Dimensions[0], Visitors: int64(r.Metrics[0]), Pageviews: int64(r.Metrics[1]),
				Visits: int64(r.Metrics[2]), BounceRate: r.Metrics[3]})
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("the overview's days with visitors (-) and v2 (+):\n%s", diff)
		}
	})

	t.Run("visit metrics by week, as the overview's week", func(t *testing.T) {
		// June 1 is a Monday: the range is one week, its visits those of the aggregate
		res := results(t, api.QueryRequest{Metrics: []string{"visits", "views_per_visit", "bounce_rate", "visit_duration"},
			Dimensions: []string{"time:week"}},
			[]row{{Metrics: []float64{5, 1.6, 40, 66}, Dimensions: []string{"2026-06-01"}}})
		p := v1
		p.Interval = "week"
		ov, err := c.Overview(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		m := res.Results[0].Metrics
		if w := ov.Data.Timeseries; len(w) != 1 || w[0] != (api.TimeseriesPoint{Date: "2026-06-01", Visitors: 5, Visits: int64(m[0]),
			Pageviews: 8, ViewsPerVisit: m[1], BounceRate: m[2], VisitDuration: m[3]}) {
			t.Errorf("the overview's weeks %+v, v2's %+v", w, m)
		}
	})

	// include.time_labels: every unit the range touches, rows or none (a
	// week from its Monday, a month from its first, as the rows label them)
	t.Run("time labels", func(t *testing.T) {
		labels := func(name string, dim string, dates []string, want []string) {
			t.Run(name, func(t *testing.T) {
				res := run(t, api.QueryRequest{Metrics: []string{"pageviews"}, Dimensions: []string{dim}, DateRange: dates,
					Include: &api.QueryInclude{TimeLabels: true}})
				if diff := cmp.Diff(want, res.Meta.TimeLabels); diff != "" {
					t.Errorf("time labels (-want +got):\n%s", diff)
				}
				if !res.Query.Include.TimeLabels {
					t.Error("the echo does not say time_labels")
				}
				for _, r := range res.Results {
					if !slices.Contains(want, r.Dimensions[0]) {
						t.Errorf("row %v is of no label", r.Dimensions)
					}
				}
			})
		}
		// rows on Jun 1 to 4 only
		labels("days", "time:day", queryWeek, []string{"2026-06-01", "2026-06-02", "2026-06-03", "2026-06-04", "2026-06-05",
			"2026-06-06", "2026-06-07"})
		labels("weeks", "time:week", []string{"2026-06-03", "2026-06-10"}, []string{"2026-06-01", "2026-06-08"})
		labels("months", "time:month", []string{"2026-05-15", "2026-07-01"}, []string{"2026-05-01", "2026-06-01", "2026-07-01"})
		var hours []string
		for h := range 24 {
			hours = append(hours, fmt.Sprintf("2026-06-01 %02d:00:00", h))
		}
		labels("hours", "time:hour", []string{"2026-06-01", "2026-06-01"}, hours)
		res := run(t, api.QueryRequest{Metrics: []string{"pageviews"}, Dimensions: []string{"time:day"}})
		if res.Meta.TimeLabels != nil || res.Query.Include.TimeLabels {
			t.Errorf("labels not asked for: %v", res.Meta.TimeLabels)
		}
	})

	// time on page, as the pages report has it: / was left after 60 s
	// (ann) and 30 s (eve), /blog/a after 180 s (cat); the last pages of
	// visits were left at no known time, and nobody reported a scroll: no
	// figure (null)
	t.Run("time on page", func(t *testing.T) {
		none := math.NaN()
		results(t, api.QueryRequest{Metrics: []string{"pageviews", "time_on_page", "scroll_depth"}, Dimensions: []string{"event:page"}},
			[]row{{Metrics: []float64{3, 45, none}, Dimensions: []string{"/"}}, {Metrics: []float64{2, 180, none}, Dimensions: []string{"/blog/a"}},
				{Metrics: []float64{2, none, none}, Dimensions: []string{"/pricing"}}, {Metrics: []float64{1, none, none}, Dimensions: []string{"/blog/b"}}})
		// alone, ordered by it (no figure first); under a page filter its
		// stays, as the pages report reads them
		results(t, api.QueryRequest{Metrics: []string{"time_on_page"}, Dimensions: []string{"event:page"},
			Filters: []any{[]any{"contains", "event:page", []string{"blog"}}}, OrderBy: [][]string{{"time_on_page", "asc"}}},
			[]row{{Metrics: []float64{none}, Dimensions: []string{"/blog/b"}}, {Metrics: []float64{180}, Dimensions: []string{"/blog/a"}}})
		// on the wire, null
		var raw struct {
			Results []struct {
				Metrics []*float64 `json:"metrics"`
			} `json:"results"`
		}
		status, body := postQueryRaw(t, h, h.key, `{"site_id":"`+site+`","date_range":["2026-06-01","2026-06-07"],"metrics":["time_on_page"],`+
			`"dimensions":["event:page"],"filters":[["is","event:page",["/blog/b"]]]}`)
		if err := json.Unmarshal(body, &raw); status != http.StatusOK || err != nil || len(raw.Results) != 1 || raw.Results[0].Metrics[0] != nil {
			t.Errorf("/blog/b's time on page: %d %s, want null", status, body)
		}
		pages, err := c.Pages(ctx, v1)
		if err != nil {
			t.Fatal(err)
		}
		for _, pg := range pages.Data.Pages {
			if pg.Pathname == "/" && pg.AvgTimeOnPage != 45 {
				t.Errorf("the pages report's time on / is %v, v2's 45", pg.AvgTimeOnPage)
			}
		}
	})

	t.Run("by hour", func(t *testing.T) {
		results(t, api.QueryRequest{Metrics: []string{"pageviews"}, Dimensions: []string{"time:hour"}, DateRange: []string{"2026-06-01", "2026-06-01"}},
			[]row{{Metrics: []float64{2}, Dimensions: []string{"2026-06-01 10:00:00"}}, {Metrics: []float64{1}, Dimensions: []string{"2026-06-01 12:00:00"}}})
	})

	t.Run("filters", func(t *testing.T) {
		agg := func(name string, filters []any, metrics []string, want ...float64) {
			t.Run(name, func(t *testing.T) {
				results(t, api.QueryRequest{Metrics: metrics, Filters: filters}, []row{{Metrics: want, Dimensions: []string{}}})
			})
		}
		vp := []string{"visitors", "pageviews"}
		agg("is", []any{[]any{"is", "visit:country", []string{"gb"}}}, vp, 3, 6)
		agg("is_not", []any{[]any{"is_not", "visit:country", []string{"GB"}}}, vp, 2, 2)
		agg("is_not of two", []any{[]any{"is_not", "visit:source", []string{"Google", "Hacker News"}}}, vp, 2, 3)
		agg("is one of", []any{[]any{"is", "visit:source", []string{"Google", "Hacker News"}}}, vp, 3, 5)
		agg("and", []any{[]any{"is", "visit:country", []string{"GB"}}, []any{"is", "visit:device", []string{"mobile"}}}, vp, 1, 2)
		agg("a page selects its visits", []any{[]any{"is", "event:page", []string{"/pricing"}}},
			[]string{"visitors", "pageviews", "visits", "bounce_rate", "visit_duration"}, 2, 2, 2, 0, 75)
		agg("a prop", []any{[]any{"is", "event:props:plan", []string{"pro"}}}, []string{"visitors", "pageviews", "visits"}, 1, 2, 1)
		agg("an or of a prop's values", []any{[]any{"or", []any{[]any{"is", "event:props:plan", []string{"free"}},
			[]any{"is", "event:props:plan", []string{"pro"}}}}}, []string{"visitors", "pageviews", "visits"}, 1, 2, 1)
		agg("an event", []any{[]any{"is", "event:name", []string{"Signup"}}}, []string{"visitors", "events"}, 1, 1)
		agg("source contains", []any{[]any{"contains", "visit:source", []string{"oog", "News"}}}, []string{"visitors", "visits"}, 3, 3)
		// negations, patterns and logical filters: "direct" is no Google, and
		// 18.16's ClickHouse must not read (?i)^GOOGLE$ as a text to find
		agg("source contains_not", []any{[]any{"contains_not", "visit:source", []string{"oog"}}}, vp, 3, 4)
		agg("source matches, any case", []any{[]any{"matches", "visit:source", []string{"(?i)^GOOGLE$"}}}, vp, 2, 4)
		agg("page matches_not", []any{[]any{"matches_not", "event:page", []string{"^/blog/"}}}, vp, 3, 5)
		agg("not", []any{[]any{"not", []any{"is", "visit:country", []string{"GB"}}}}, vp, 2, 2)
		// page patterns as goals': /blog/* is cat's two pages and dan's one
		agg("page matches_wildcard", []any{[]any{"matches_wildcard", "event:page", []string{"/blog/*"}}}, vp, 2, 3)
		agg("page matches_wildcard_not", []any{[]any{"matches_wildcard_not", "event:page", []string{"/blog/**", "/pric*"}}}, vp, 3, 3)
		agg("or of one dimension", []any{[]any{"or", []any{[]any{"is", "visit:source", []string{"Google"}},
			[]any{"is", "visit:source", []string{"Hacker News"}}}}}, vp, 3, 5)
		agg("and with a not", []any{[]any{"and", []any{[]any{"is", "visit:country", []string{"GB"}},
			[]any{"not", []any{"contains", "event:page", []string{"pricing"}}}}}}, vp, 3, 4)
		// across dimensions: US (ben, dan) or Google (ann, cat); Mobile (ben,
		// cat) or a visit with /pricing (ann, eve), ben's bounce 1 of 4;
		// not GB on a Desktop (ann, eve): ben, cat, dan
		agg("or across dimensions", []any{[]any{"or", []any{[]any{"is", "visit:country", []string{"US"}},
			[]any{"is", "visit:source", []string{"Google"}}}}}, vp, 4, 6)
		agg("or of a visit's and an event's", []any{[]any{"or", []any{[]any{"is", "visit:device", []string{"Mobile"}},
			[]any{"is", "event:page", []string{"/pricing"}}}}}, []string{"visitors", "pageviews", "visits", "bounce_rate"}, 4, 5, 4, 25)
		// without /pricing (ben, cat, dan) or without /blog/a (ann, ben,
		// eve): every visit; without either (has_not_done of the or): ben's
		// alone
		agg("or of has_not_done", []any{[]any{"or", []any{[]any{"has_not_done", []any{"is", "event:page", []string{"/pricing"}}},
			[]any{"has_not_done", []any{"is", "event:page", []string{"/blog/a"}}}}}}, []string{"visits"}, 5)
		agg("has_not_done of an or", []any{[]any{"has_not_done", []any{"or", []any{[]any{"is", "event:page", []string{"/pricing"}},
			[]any{"is", "event:page", []string{"/blog/a"}}}}}}, []string{"visits"}, 1)
		agg("not of an and", []any{[]any{"not", []any{"and", []any{[]any{"is", "visit:country", []string{"GB"}},
			[]any{"is", "visit:device", []string{"Desktop"}}}}}}, vp, 3, 4)
		// an event's dimension selects the visits with such an event: cat's
		// and dan's (who bounced) for a page containing blog; ann's, cat's
		// and eve's for /pricing or /blog/b
		agg("a page's part selects its visits", []any{[]any{"contains", "event:page", []string{"blog"}}},
			[]string{"visitors", "visits", "bounce_rate"}, 2, 2, 50)
		agg("pages by pattern select their visits", []any{[]any{"matches", "event:page", []string{"^/pricing$", "^/blog/b$"}}},
			[]string{"visitors", "visits", "bounce_rate"}, 3, 3, 0)
		// an empty value is its label to a filter, as to the rows: no visit
		// had a UTM parameter, and all five are (none)
		vpv := []string{"visitors", "pageviews", "visits"}
		agg("is the label of none", []any{[]any{"is", "visit:utm_source", []string{"(none)"}}}, vpv, 5, 8, 5)
		agg("is_not the label of none", []any{[]any{"is_not", "visit:utm_source", []string{"(none)", "x"}}}, vpv, 0, 0, 0)
		agg("the label matches", []any{[]any{"matches", "visit:utm_medium", []string{`^\(none\)$`}}}, vpv, 5, 8, 5)
		agg("the label contains", []any{[]any{"contains_not", "visit:utm_campaign", []string{"one"}}}, vpv, 0, 0, 0)
		agg("the label does not match", []any{[]any{"matches", "visit:utm_content", []string{"^x", `^\($`}}}, vpv, 0, 0, 0)
		// has_done and has_not_done keep the visits with (without) such an
		// event, and all their events: ann signed up, on a visit of 2
		// pageviews; the four others did not (ben and dan bounced)
		signup := []any{"is", "event:name", []string{"Signup"}}
		agg("has_done", []any{[]any{"has_done", signup}}, []string{"visitors", "pageviews", "visits"}, 1, 2, 1)
		agg("has_not_done", []any{[]any{"has_not_done", signup}}, []string{"visitors", "pageviews", "visits", "bounce_rate"}, 4, 6, 4, 50)
		agg("not of has_done", []any{[]any{"not", []any{"has_done", []any{"contains", "event:page", []string{"blog"}}}}},
			[]string{"visitors", "pageviews", "visits"}, 3, 5, 3)
		// cat's and dan's visits have a page that is neither / nor /pricing
		agg("has_done of is_not", []any{[]any{"has_done", []any{"is_not", "event:page", []string{"/", "/pricing"}}}}, vp, 2, 3)
		// a Signup (ann) or /blog/b (cat); neither (ben, dan, eve)
		signupOrB := []any{"or", []any{signup, []any{"is", "event:page", []string{"/blog/b"}}}}
		agg("has_done of an or across dimensions", []any{[]any{"has_done", signupOrB}}, []string{"visits"}, 2)
		agg("has_not_done of an or across dimensions", []any{[]any{"has_not_done", signupOrB}}, []string{"visits"}, 3)
		t.Run("has_done, by page and by source", func(t *testing.T) {
			results(t, api.QueryRequest{Metrics: []string{"pageviews"}, Dimensions: []string{"event:page"},
				Filters: []any{[]any{"has_done", signup}}},
				[]row{{Metrics: []float64{1}, Dimensions: []string{"/"}}, {Metrics: []float64{1}, Dimensions: []string{"/pricing"}}})
			results(t, api.QueryRequest{Metrics: []string{"visits"}, Dimensions: []string{"visit:source"},
				Filters: []any{[]any{"has_done", signup}}},
				[]row{{Metrics: []float64{1}, Dimensions: []string{"Google"}}})
		})
		t.Run("page contains, by page", func(t *testing.T) {
			results(t, api.QueryRequest{Metrics: []string{"visitors"}, Dimensions: []string{"event:page"},
				Filters: []any{[]any{"contains", "event:page", []string{"blog"}}}},
				[]row{{Metrics: []float64{2}, Dimensions: []string{"/blog/a"}}, {Metrics: []float64{1}, Dimensions: []string{"/blog/b"}}})
		})
	})

	// Goals: Saw pricing, ann and eve (2 of 5 visitors, 40 %); Signed up,
	// ann's one Signup (20 %); Bought, never completed, is left out.
	t.Run("by goal", func(t *testing.T) {
		res := results(t, api.QueryRequest{Metrics: []string{"visitors", "events", "conversion_rate"}, Dimensions: []string{"event:goal"}},
			[]row{{Metrics: []float64{2, 2, 40}, Dimensions: []string{"Saw pricing"}}, {Metrics: []float64{1, 1, 20}, Dimensions: []string{"Signed up"}}})
		conv, err := c.Conversions(ctx, v1)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string][3]float64{}
		for _, g := range conv.Data {
			if g.TotalConversions > 0 {
				want[g.GoalName] = [3]float64{float64(g.UniqueVisitors), float64(g.TotalConversions), g.VisitorConversionRate}
			}
		}
		got := map[string][3]float64{}
		for _, r := range res.Results {
			got[r.Dimensions[0]] = [3]float64{r.Metrics[0], r.Metrics[1], r.Metrics[2]}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("the conversions report (-) and v2 (+):\n%s", diff)
		}
		results(t, api.QueryRequest{Metrics: []string{"conversion_rate"}, Dimensions: []string{"event:goal"},
			Filters: []any{[]any{"is", "visit:country", []string{"GB"}}}},
			[]row{{Metrics: []float64{66.7}, Dimensions: []string{"Saw pricing"}}, {Metrics: []float64{33.3}, Dimensions: []string{"Signed up"}}})
	})

	// A segment of the British visitors: ann, cat, eve.
	t.Run("segment", func(t *testing.T) {
		seg, err := c.CreateSegment(ctx, site, api.SegmentRequest{Name: "Britain", Filters: map[string]string{"country": "GB"}})
		if err != nil {
			t.Fatal(err)
		}
		results(t, api.QueryRequest{Metrics: []string{"visitors", "bounce_rate"},
			Filters: []any{[]any{"is", "visit:device", []string{"Desktop"}}, []any{"is", "segment", []string{seg.ID}}}},
			[]row{{Metrics: []float64{2, 0}, Dimensions: []string{}}})
		_, err = c.Query(ctx, api.QueryRequest{SiteID: site, DateRange: queryWeek, Metrics: []string{"visitors"},
			Filters: []any{[]any{"is", "segment", []string{seg.ID}}, []any{"is_not", "visit:country", []string{"US"}}}})
		if e, ok := err.(*client.Error); !ok || e.Status != http.StatusBadRequest || e.Field != "filters.0" {
			t.Errorf("a segment and a filter of the same dimension: %v, want 400 naming filters.0", err)
		}
		// an or naming the segment's dimension names it too
		_, err = c.Query(ctx, api.QueryRequest{SiteID: site, DateRange: queryWeek, Metrics: []string{"visitors"},
			Filters: []any{[]any{"or", []any{[]any{"is", "visit:source", []string{"Google"}}, []any{"is", "visit:country", []string{"US"}}}},
				[]any{"is", "segment", []string{seg.ID}}}})
		if e, ok := err.(*client.Error); !ok || e.Status != http.StatusBadRequest || e.Field != "filters.1" {
			t.Errorf("a segment and an or of its dimension: %v, want 400 naming filters.1", err)
		}
		// a segment's prop and three in an or are four props, one more than a query may have
		pro, err := c.CreateSegment(ctx, site, api.SegmentRequest{Name: "Pro", Filters: map[string]string{"props[plan]": "pro"}})
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Query(ctx, api.QueryRequest{SiteID: site, DateRange: queryWeek, Metrics: []string{"visitors"},
			Filters: []any{[]any{"is", "segment", []string{pro.ID}}, []any{"or", []any{[]any{"is", "event:props:a", []string{"1"}},
				[]any{"is", "event:props:b", []string{"1"}}, []any{"is", "event:props:c", []string{"1"}}}}}})
		if e, ok := err.(*client.Error); !ok || e.Status != http.StatusBadRequest || e.Field != "filters.0" {
			t.Errorf("a segment's prop and an or of three: %v, want 400 naming filters.0", err)
		}
		_, err = c.Query(ctx, api.QueryRequest{SiteID: site, DateRange: queryWeek, Metrics: []string{"visitors"},
			Filters: []any{[]any{"is", "segment", []string{"7a0c5a6e-0000-4000-8000-000000000000"}}}})
		if e, ok := err.(*client.Error); !ok || e.Status != http.StatusNotFound || e.Code != "segment_not_found" ||
			e.Field != "filters.0" {
			t.Errorf("a segment that is none: %v, want 404 segment_not_found naming filters.0", err)
		}
	})

	t.Run("order and pages", func(t *testing.T) {
		limit, offset := 2, 1
		res := results(t, api.QueryRequest{Metrics: []string{"pageviews"}, Dimensions: []string{"event:page"},
			OrderBy:    [][]string{{"pageviews", "asc"}, {"event:page", "desc"}},
			Pagination: &api.QueryPagination{Limit: &limit, Offset: &offset}, Include: &api.QueryInclude{TotalRows: true}},
			[]row{{Metrics: []float64{2}, Dimensions: []string{"/pricing"}}, {Metrics: []float64{2}, Dimensions: []string{"/blog/a"}}})
		if res.Meta.TotalRows == nil || *res.Meta.TotalRows != 4 {
			t.Errorf("meta.total_rows %v, want 4", res.Meta.TotalRows)
		}
		if want := (api.QueryPageEcho{Limit: 2, Offset: 1}); res.Query.Pagination != want || !res.Query.Include.TotalRows {
			t.Errorf("query.pagination %+v, include %+v", res.Query.Pagination, res.Query.Include)
		}
		past := 10
		res = run(t, api.QueryRequest{Metrics: []string{"pageviews"}, Dimensions: []string{"event:page"},
			Pagination: &api.QueryPagination{Offset: &past}})
		if len(res.Results) != 0 || res.Results == nil {
			t.Errorf("past the last row: %+v, want []", res.Results)
		}
	})

	t.Run("relative range", func(t *testing.T) {
		h.clock.Set(time.Date(2026, 6, 5, 12, 0, 0, 0, time.UTC))
		res := results(t, api.QueryRequest{Metrics: []string{"visitors"}, DateRange: "7d"},
			[]row{{Metrics: []float64{5}, Dimensions: []string{}}})
		if want := []string{"2026-05-30T00:00:00Z", "2026-06-05T23:59:59Z"}; !cmp.Equal(want, res.Query.DateRange) {
			t.Errorf("query.date_range %v, want %v", res.Query.DateRange, want)
		}
		results(t, api.QueryRequest{Metrics: []string{"visitors"}, DateRange: "day"}, []row{{Metrics: []float64{0}, Dimensions: []string{}}})
	})
}

// postQuery sends body to POST /api/v2/query with token and returns the
// status and the error envelope, if any.
func postQuery(t *testing.T, h *harness, token, body string) (int, api.Error) {
	t.Helper()
	status, raw := postQueryRaw(t, h, token, body)
	var e api.Error
	if status != http.StatusOK {
		if err := json.Unmarshal(raw, &e); err != nil || e.Error.Code == "" {
			t.Errorf("status %d without the error envelope", status)
		}
	}
	return status, e
}

// postQueryRaw sends body to POST /api/v2/query and returns the answer's
// status and bytes.
func postQueryRaw(t *testing.T, h *harness, token, body string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, h.srv.URL+"/api/v2/query", bytes.NewBufferString(body))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, raw
}

// Bad queries are 400s naming their field; access is the stats routes'.
func TestQueryV2Refusals(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	site := string(h.siteID)
	q := func(rest string) string {
		return `{"site_id":"` + site + `","date_range":["2026-06-01","2026-06-07"]` + rest + `}`
	}
	for _, tt := range []struct {
		name, body, field string
	}{
		{"no metrics", q(``), "metrics"},
		{"metrics not a list", q(`,"metrics":"visitors"`), "metrics"},
		{"unknown metric", q(`,"metrics":["revenue"]`), "metrics"},
		{"conversion rate", q(`,"metrics":["conversion_rate"]`), "metrics"},
		{"bounce rate by goal", q(`,"metrics":["bounce_rate"],"dimensions":["event:goal"]`), "metrics"},
		{"percentage without dimensions", q(`,"metrics":["percentage"]`), "metrics"},
		{"events by source", q(`,"metrics":["events"],"dimensions":["visit:source"]`), "metrics"},
		{"bounce rate by page", q(`,"metrics":["bounce_rate"],"dimensions":["event:page"]`), "metrics"},
		{"unknown dimension", q(`,"metrics":["visitors"],"dimensions":["visit:planet"]`), "dimensions"},
		{"goal beside a page", q(`,"metrics":["visitors"],"dimensions":["event:goal","event:page"]`), "dimensions"},
		{"conversion rate without goals", q(`,"metrics":["visitors","conversion_rate"],"dimensions":["event:page"]`), "metrics"},
		{"group conversion rate", q(`,"metrics":["group_conversion_rate"],"dimensions":["event:goal"]`), "metrics"},
		{"hours of a month", `{"site_id":"` + site + `","date_range":"month","metrics":["visitors"],"dimensions":["time:hour"]}`, "dimensions"},
		{"time on page without pages", q(`,"metrics":["time_on_page"]`), "metrics"},
		{"scroll depth by page and source", q(`,"metrics":["scroll_depth"],"dimensions":["event:page","visit:source"]`), "metrics"},
		{"time labels without time", q(`,"metrics":["visitors"],"dimensions":["visit:os"],"include":{"time_labels":true}`), "include.time_labels"},
		{"or of an and", q(`,"metrics":["visitors"],"filters":[["or",[["and",[["is","visit:os",["iOS"]],["is","visit:country",["DE"]]]]]]]`), "filters.0"},
		{"not a pattern", q(`,"metrics":["visitors"],"filters":[["is","visit:os",["iOS"]],["matches","event:page",["(?<n>x)"]]]`), "filters.1"},
		{"a quote without its end", q(`,"metrics":["visitors"],"filters":[["matches","visit:source",["^\\Q(a"]]]`), "filters.0"},
		{"a class RE2 does not name", q(`,"metrics":["visitors"],"filters":[["matches","event:page",["\\p{Letter}"]]]`), "filters.0"},
		{"a page matches_not with visits", q(`,"metrics":["visits"],"filters":[["matches_not","event:page",["^/$"]]]`), "filters.0"},
		{"a bad country", q(`,"metrics":["visitors"],"filters":[["is","visit:os",["iOS"]],["is","visit:country",["Germany"]]]`), "filters.1"},
		{"a page is_not with visits", q(`,"metrics":["visits"],"filters":[["is_not","event:page",["/"]]]`), "filters.0"},
		{"order by what is not asked", q(`,"metrics":["visitors"],"order_by":[["pageviews","desc"]]`), "order_by.0"},
		{"limit", q(`,"metrics":["visitors"],"pagination":{"limit":0}`), "pagination.limit"},
		{"no range", `{"site_id":"` + site + `","metrics":["visitors"]}`, "date_range"},
		{"a range of all time", `{"site_id":"` + site + `","date_range":"all","metrics":["visitors"]}`, "date_range"},
		{"reversed", `{"site_id":"` + site + `","date_range":["2026-06-07","2026-06-01"],"metrics":["visitors"]}`, "date_range"},
		{"no site", `{"date_range":"7d","metrics":["visitors"]}`, "site_id"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			status, e := postQuery(t, h, h.key, tt.body)
			if status != http.StatusBadRequest || e.Error.Field != tt.field {
				t.Errorf("%d %+v, want 400 naming %s", status, e.Error, tt.field)
			}
		})
	}

	body := q(`,"metrics":["visitors"]`)
	if status, _ := postQuery(t, h, "", body); status != http.StatusUnauthorized {
		t.Errorf("no credential: %d, want 401", status)
	}
	ingestOnly, err := h.app.Accounts.CreateKey(ctx, accounts.NewKey{OwnerEmail: h.email, Name: "ingest", Scopes: []model.Scope{model.ScopeEventsWrite}})
	if err != nil {
		t.Fatal(err)
	}
	if status, e := postQuery(t, h, ingestOnly.Secret, body); status != http.StatusForbidden || e.Error.Code != "forbidden" {
		t.Errorf("a key without stats:read: %d %+v, want 403 forbidden", status, e.Error)
	}
	other, err := h.app.Accounts.CreateUser(ctx, accounts.NewUser{Email: "other@example.com", Password: password, Name: "O"})
	if err != nil {
		t.Fatal(err)
	}
	otherSite, err := h.app.Accounts.CreateSite(ctx, accounts.NewSite{OwnerEmail: other.Email, Domain: "other.com"})
	if err != nil {
		t.Fatal(err)
	}
	theirs := `{"site_id":"` + string(otherSite.ID) + `","date_range":"7d","metrics":["visitors"]}`
	if status, e := postQuery(t, h, h.key, theirs); status != http.StatusNotFound || e.Error.Code != "site_not_found" {
		t.Errorf("another account's site: %d %+v, want 404 site_not_found", status, e.Error)
	}
}

// A payment's event belongs to no visit (its session is none): has_done and
// has_not_done, which keep visits and their events, keep no such event,
// whatever its page.
func TestQueryV2VisitsWithoutPayments(t *testing.T) {
	h, c, site := querySite(t)
	ctx := context.Background()
	// ann pays after her visit from Google (its entry page /), dan after his
	// from Hacker News (/blog/a): two events named Paid, on those pages
	for _, p := range []struct{ visitor, at string }{{"ann", "2026-06-01 10:05:00"}, {"dan", "2026-06-03 15:05:00"}} {
		at, _ := time.Parse(time.DateTime, p.at)
		h.clock.Set(at)
		pay := payment(site, "20", "USD")
		pay.VisitorID, pay.EventName, pay.TransactionID = p.visitor, "Paid", "t-"+p.visitor
		if _, err := c.Payment(ctx, pay); err != nil {
			t.Fatal(err)
		}
	}
	h.waitCount(int64(11), "SELECT count() FROM events WHERE site_id = ?", site)
	for _, tt := range []struct {
		name   string
		filter []any
		want   []float64 // events, visitors
	}{
		// cat's visit (2 pageviews) and dan's (1)
		{"has_done of a page", []any{"has_done", []any{"is", "event:page", []string{"/blog/a"}}}, []float64{3, 2}},
		// ann's (3 events), ben's (1), eve's (2)
		{"has_not_done of a page", []any{"has_not_done", []any{"is", "event:page", []string{"/blog/a"}}}, []float64{6, 3}},
		// every visit, none of them on /nowhere
		{"has_not_done of no page", []any{"has_not_done", []any{"is", "event:page", []string{"/nowhere"}}}, []float64{9, 5}},
		{"has_done of the payment", []any{"has_done", []any{"is", "event:name", []string{"Paid"}}}, []float64{0, 0}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res, err := c.Query(ctx, api.QueryRequest{SiteID: site, DateRange: queryWeek, Metrics: []string{"events", "visitors"},
				Filters: []any{tt.filter}})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]api.QueryResult{{Metrics: tt.want, Dimensions: []string{}}}, res.Results); diff != "" {
				t.Errorf("results (-want +got):\n%s", diff)
			}
		})
	}
}

// A page's time_on_page under a filter on the host is that of its stays on
// the host, whatever the filter's test, as under one host and as the pages
// report has it (hostEvents): on the blog, /post ann's 60 s (then the
// blog's /), / none (ann's last page, eve's bounce; ann's 60 s on / were
// on example.com, though her next pageview is on the blog).
func TestQueryV2TimeOnPageByHost(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	p := hostSite(t, h)
	c := h.client(h.key)
	none := math.NaN()
	want := []api.QueryResult{{Metrics: []float64{60}, Dimensions: []string{"/post"}}, {Metrics: []float64{none}, Dimensions: []string{"/"}}}
	for _, f := range []any{
		[]any{"is", "event:hostname", []string{"blog.example.com"}},
		[]any{"is", "event:hostname", []string{"blog.example.com", "shop.example.com"}},
		[]any{"contains", "event:hostname", []string{"blog."}},
		[]any{"is_not", "event:hostname", []string{"example.com"}},
		[]any{"or", []any{[]any{"matches", "event:hostname", []string{"^blog"}}, []any{"is", "event:page", []string{"/nowhere"}}}},
	} {
		res, err := c.Query(ctx, api.QueryRequest{SiteID: p.SiteID, DateRange: []string{p.DateFrom, p.DateTo}, Metrics: []string{"time_on_page"},
			Dimensions: []string{"event:page"}, Filters: []any{f}})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, res.Results, cmpopts.EquateNaNs()); diff != "" {
			t.Errorf("time on page by %v (-want +got):\n%s", f, diff)
		}
	}
	blog := p
	blog.Hostname = "blog.example.com"
	pages, err := c.Pages(ctx, blog)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, pg := range pages.Data.Pages {
		got[pg.Pathname] = pg.AvgTimeOnPage
	}
	if diff := cmp.Diff(map[string]float64{"/": 0, "/post": 60}, got); diff != "" {
		t.Errorf("the pages report's times on the blog (-want +got):\n%s", diff)
	}
}

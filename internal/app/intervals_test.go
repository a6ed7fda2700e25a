package app_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tally-analytics/tally/internal/accounts"
	"github.com/tally-analytics/tally/pkg/api"
	"github.com/tally-analytics/tally/pkg/client"
)

// The overview's series by the hour, the week and the month. Five
// pageviews (UTC):
//
//	v1  Mar 28 23:30   (Mar 29 00:30 in Berlin, CET)
//	v2  Mar 29 00:30   (01:30 CET)
//	v3  Mar 29 01:30   (03:30 CEST: Berlin's clocks went from 02:00 to 03:00 at 01:00 UTC)
//	v1  Mar 30 10:00   (12:00 CEST; a visit of its own)
//	v4  Apr  2 12:00
//
// Each pageview is a visit of its own that bounces: a unit's visits are its
// pageviews, one a visit, all bounces of 0 s.
func TestOverviewIntervals(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	site, err := h.app.Accounts.CreateSite(ctx, accounts.NewSite{OwnerEmail: h.email, Domain: "clock.example.com", Timezone: "UTC"})
	if err != nil {
		t.Fatal(err)
	}
	c := h.client(h.key)
	for _, pv := range []struct{ at, visitor string }{
		{"2026-03-28 23:30:00", "v1"}, {"2026-03-29 00:30:00", "v2"}, {"2026-03-29 01:30:00", "v3"},
		{"2026-03-30 10:00:00", "v1"}, {"2026-04-02 12:00:00", "v4"},
	} {
		at, _ := time.Parse(time.DateTime, pv.at)
		h.clock.Set(at)
		if _, err := c.Pageview(ctx, api.PageviewRequest{SiteID: string(site.ID), URL: "https://clock.example.com/",
			UserAgent: chromeUA, VisitorID: pv.visitor}); err != nil {
			t.Fatal(err)
		}
	}
	h.waitCount(5, "SELECT count() FROM events WHERE site_id = ?", string(site.ID))
	series := func(p client.StatsParams) []api.TimeseriesPoint {
		t.Helper()
		p.SiteID = string(site.ID)
		res, err := c.Overview(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		return res.Data.Timeseries
	}
	// bounced is a unit of n visitors and v visits of one pageview each
	bounced := func(date string, n, v int64) api.TimeseriesPoint {
		return api.TimeseriesPoint{Date: date, Visitors: n, Visits: v, Pageviews: v, ViewsPerVisit: 1, BounceRate: 100}
	}

	t.Run("hours in Berlin across the clock change", func(t *testing.T) {
		got := series(client.StatsParams{DateFrom: "2026-03-29", DateTo: "2026-03-30", Timezone: "Europe/Berlin", Interval: "hour"})
		// Mar 29 has 23 hours there (no 02:00), Mar 30 has 24
		if len(got) != 47 {
			t.Fatalf("%d hours, want 47", len(got))
		}
		want := []api.TimeseriesPoint{
			bounced("2026-03-29T00:00:00+01:00", 1, 1),
			bounced("2026-03-29T01:00:00+01:00", 1, 1),
			bounced("2026-03-29T03:00:00+02:00", 1, 1),
			{Date: "2026-03-29T04:00:00+02:00"},
		}
		if diff := cmp.Diff(want, got[:4]); diff != "" {
			t.Errorf("the first hours (-want +got):\n%s", diff)
		}
		// Mar 30 12:00 is the 23 hours of the 29th and 12 more in
		if p := got[23+12]; p != bounced("2026-03-30T12:00:00+02:00", 1, 1) {
			t.Errorf("hour 35: %+v, want v1 at 12:00 on the 30th", p)
		}
		if last := got[46]; last.Date != "2026-03-30T23:00:00+02:00" {
			t.Errorf("the last hour is %s", last.Date)
		}
	})

	t.Run("weeks from Monday", func(t *testing.T) {
		// Mar 25 (a Wednesday) to Apr 5: the week of Mar 23 from the 25th
		// (v1, v2, v3) and the week of Mar 30 (v1 again, v4)
		got := series(client.StatsParams{DateFrom: "2026-03-25", DateTo: "2026-04-05", Timezone: "UTC", Interval: "week"})
		want := []api.TimeseriesPoint{
			bounced("2026-03-23", 3, 3),
			bounced("2026-03-30", 2, 2),
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("weeks (-want +got):\n%s", diff)
		}
	})

	t.Run("months, and the previous period's", func(t *testing.T) {
		p := client.StatsParams{SiteID: string(site.ID), DateFrom: "2026-03-01", DateTo: "2026-04-30", Timezone: "UTC",
			Interval: "month", Compare: true}
		res, err := c.Overview(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		// March: v1 twice, v2, v3 (3 visitors, 4 visits); April: v4
		want := []api.TimeseriesPoint{bounced("2026-03-01", 3, 4), bounced("2026-04-01", 1, 1)}
		if diff := cmp.Diff(want, res.Data.Timeseries); diff != "" {
			t.Errorf("months (-want +got):\n%s", diff)
		}
		if res.Data.Metrics.Visitors != 4 || res.Data.Metrics.Pageviews != 5 {
			t.Errorf("the range's metrics: %+v, want 4 visitors and 5 pageviews", res.Data.Metrics)
		}
		// the 61 days before: Dec 30 to Feb 28, by month, nothing in them
		prev := []api.TimeseriesPoint{{Date: "2025-12-01"}, {Date: "2026-01-01"}, {Date: "2026-02-01"}}
		if diff := cmp.Diff(prev, res.Data.Comparison.Timeseries); diff != "" {
			t.Errorf("the previous period's months (-want +got):\n%s", diff)
		}
	})

	t.Run("the dashboard's today by the hour", func(t *testing.T) {
		// the clock is at v4's pageview, Apr 2 12:00 UTC, the site's zone
		w := newWebUser(t, h)
		w.login(h.email)
		body := w.expect(http.MethodGet, "/sites/"+string(site.ID)+"/cards/overview?range=today", nil, http.StatusOK)
		for _, want := range []string{"Visitors and pageviews per hour", `<th scope="row">2026-04-02 12:00</th><td>1</td><td>1</td>`,
			`<th scope="row">2026-04-02 23:00</th>`} {
			if !strings.Contains(body, want) {
				t.Errorf("today's overview card lacks %s:\n%s", want, body)
			}
		}
		if n := strings.Count(body, `<tr><th scope="row">2026-04-02 `); n != 24 {
			t.Errorf("today's overview card has %d hours, want 24", n)
		}
	})

	t.Run("refusals", func(t *testing.T) {
		for _, p := range []client.StatsParams{
			{DateFrom: "2026-03-01", DateTo: "2026-03-08", Interval: "hour"}, // 8 days
			{DateFrom: "2026-03-01", DateTo: "2026-03-08", Interval: "year"},
		} {
			_, err := c.Overview(ctx, client.StatsParams{SiteID: string(site.ID), DateFrom: p.DateFrom, DateTo: p.DateTo, Interval: p.Interval})
			wantError(t, err, http.StatusBadRequest, "invalid_request", "interval")
		}
		// seven days by the hour are fine
		if got := series(client.StatsParams{DateFrom: "2026-03-01", DateTo: "2026-03-07", Timezone: "UTC", Interval: "hour"}); len(got) != 7*24 {
			t.Errorf("seven days: %d hours, want 168", len(got))
		}
	})
}

// compare=year compares with the same dates a year before; compare=true and
// previous_period with the period of equal length just before.
func TestOverviewComparedWithAYearBefore(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	site, err := h.app.Accounts.CreateSite(ctx, accounts.NewSite{OwnerEmail: h.email, Domain: "years.example.com", Timezone: "UTC"})
	if err != nil {
		t.Fatal(err)
	}
	c := h.client(h.key)
	for _, pv := range []struct{ at, visitor string }{
		{"2025-05-04 10:00:00", "a"}, {"2025-05-05 10:00:00", "b"}, // a year before the week
		{"2026-04-30 10:00:00", "c"}, // the week before it
		{"2026-05-04 10:00:00", "d"}, {"2026-05-05 10:00:00", "e"}, {"2026-05-06 10:00:00", "f"},
	} {
		at, _ := time.Parse(time.DateTime, pv.at)
		h.clock.Set(at)
		if _, err := c.Pageview(ctx, api.PageviewRequest{SiteID: string(site.ID), URL: "https://years.example.com/",
			UserAgent: chromeUA, VisitorID: pv.visitor}); err != nil {
			t.Fatal(err)
		}
	}
	h.waitCount(6, "SELECT count() FROM events WHERE site_id = ?", string(site.ID))
	week := client.StatsParams{SiteID: string(site.ID), DateFrom: "2026-05-01", DateTo: "2026-05-07", Timezone: "UTC"}
	for _, tc := range []struct {
		name     string
		p        client.StatsParams
		from, to string
		visitors int64
		change   float64
	}{
		// 3 visitors against a and b
		{"a year before", client.StatsParams{CompareYear: true}, "2025-05-01", "2025-05-07", 2, 50},
		// 3 against c
		{"the week before", client.StatsParams{Compare: true}, "2026-04-24", "2026-04-30", 1, 200},
	} {
		p := week
		p.Compare, p.CompareYear = tc.p.Compare, tc.p.CompareYear
		res, err := c.Overview(ctx, p)
		if err != nil || res.Data.Comparison == nil {
			t.Fatalf("%s: %+v, %v", tc.name, res.Data, err)
		}
		cmpn := res.Data.Comparison
		if cmpn.DateFrom != tc.from || cmpn.DateTo != tc.to || cmpn.Metrics.Visitors != tc.visitors ||
			cmpn.Change.Visitors == nil || *cmpn.Change.Visitors != tc.change {
			t.Errorf("%s: %s..%s, %d visitors, change %v; want %s..%s, %d, %v", tc.name, cmpn.DateFrom, cmpn.DateTo,
				cmpn.Metrics.Visitors, cmpn.Change.Visitors, tc.from, tc.to, tc.visitors, tc.change)
		}
	}
	// previous_period is compare=true by its name
	status, e := get(t, h, h.key, "/api/v1/stats/overview", url.Values{"site_id": {string(site.ID)}, "date_from": {"2026-05-01"},
		"date_to": {"2026-05-07"}, "compare": {"previous_period"}})
	if status != http.StatusOK {
		t.Errorf("compare=previous_period: %d %+v", status, e.Error)
	}

	w := newWebUser(t, h)
	w.login(h.email)
	view := "?range=custom&from=2026-05-01&to=2026-05-07&compare=year"
	page := w.expect(http.MethodGet, "/sites/"+string(site.ID)+view, nil, http.StatusOK)
	if !strings.Contains(page, "Stop comparing with a year before") || !strings.Contains(page, `name="compare" value="year"`) {
		t.Errorf("the dashboard compared with a year before does not say so:\n%s", page)
	}
	card := w.expect(http.MethodGet, "/sites/"+string(site.ID)+"/cards/overview"+view, nil, http.StatusOK)
	if !strings.Contains(card, "Visitors, a year before") {
		t.Errorf("the overview card's legend does not name the year before:\n%s", card)
	}
}

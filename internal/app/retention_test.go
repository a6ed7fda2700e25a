package app_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tally-analytics/tally/internal/accounts"
	"github.com/tally-analytics/tally/internal/testenv"
	"github.com/tally-analytics/tally/pkg/api"
	"github.com/tally-analytics/tally/pkg/client"
)

// Two weeks of visits, 2026-05-01 (a Friday) to 05-14 (a Thursday), on a
// site in UTC. Each line is a visitor's pageviews, at 12:00 UTC unless
// said (GB: 81.2.69.10, US: 216.160.83.5):
//
//	ann  GB  May 1, May 5, May 12
//	ben  GB  May 2, May 12
//	cat  US  May 3
//	hal  US  May 2, May 15 (after the range)
//	dan  US  May 4, May 6
//	gus  US  Apr 29 (before the range), May 5
//	eve  GB  May 7 (and a Signup {plan: pro} at 12:01), May 11 00:30 UTC (May 10 20:30 in New York)
//	fay  US  May 12
//
// Never counted: a visitor without visitor_id (its id is the day's: May 1
// and May 5 are two ids that cannot return), a Googlebot pageview with a
// visitor_id on May 1 (bots never reach the events), and a payment sent
// for visitor ivy on May 6 (no visit).
func retentionSite(t *testing.T) (*harness, *client.Client, string) {
	cfg := testenv.Config(t)
	londonAndMilton(t, cfg)
	h := newHarnessWith(t, cfg)
	ctx := context.Background()
	site, err := h.app.Accounts.CreateSite(ctx, accounts.NewSite{OwnerEmail: h.email, Domain: "shop.example.com", Timezone: "UTC"})
	if err != nil {
		t.Fatal(err)
	}
	c := h.client(h.key)
	const gb, us = "81.2.69.10", "216.160.83.5"
	visits := []struct{ at, visitor, ip, ua string }{
		{"2026-05-01 12:00:00", "ann", gb, chromeUA},
		{"2026-05-05 12:00:00", "ann", gb, chromeUA},
		{"2026-05-12 12:00:00", "ann", gb, chromeUA},
		{"2026-05-02 12:00:00", "ben", gb, chromeUA},
		{"2026-05-12 12:00:00", "ben", gb, chromeUA},
		{"2026-05-03 12:00:00", "cat", us, chromeUA},
		{"2026-05-02 12:00:00", "hal", us, chromeUA},
		{"2026-05-15 12:00:00", "hal", us, chromeUA},
		{"2026-05-04 12:00:00", "dan", us, chromeUA},
		{"2026-05-06 12:00:00", "dan", us, chromeUA},
		{"2026-04-29 12:00:00", "gus", us, chromeUA},
		{"2026-05-05 12:00:00", "gus", us, chromeUA},
		{"2026-05-07 12:00:00", "eve", gb, chromeUA},
		{"2026-05-11 00:30:00", "eve", gb, chromeUA},
		{"2026-05-12 12:00:00", "fay", us, chromeUA},
		{"2026-05-01 12:00:00", "", us, chromeUA},
		{"2026-05-05 12:00:00", "", us, chromeUA},
		{"2026-05-01 12:00:00", "crawler", us, "Googlebot/2.1 (+http://www.google.com/bot.html)"},
	}
	for _, v := range visits {
		at, err := time.Parse(time.DateTime, v.at)
		if err != nil {
			t.Fatal(err)
		}
		h.clock.Set(at)
		req := api.PageviewRequest{SiteID: string(site.ID), URL: "https://shop.example.com/", UserAgent: v.ua, IPAddress: v.ip,
			VisitorID: v.visitor}
		if _, err := c.Pageview(ctx, req); err != nil {
			t.Fatal(err)
		}
		if v.visitor == "eve" && at.Day() == 7 {
			// she signs up a minute later, in the same visit
			h.clock.Set(at.Add(time.Minute))
			if _, err := c.CustomEvent(ctx, api.CustomEventRequest{PageviewRequest: req, EventName: "Signup",
				Props: map[string]any{"plan": "pro"}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	h.clock.Set(time.Date(2026, 5, 6, 12, 0, 0, 0, time.UTC))
	pay := payment(string(site.ID), "1000", "USD")
	pay.VisitorID, pay.TransactionID, pay.EventName = "ivy", "ivy-1", "Purchase"
	if _, err := c.Payment(ctx, pay); err != nil {
		t.Fatal(err)
	}
	// 17 pageviews (the bot's is not an event), eve's Signup and the payment's event
	h.waitCount(19, "SELECT count() FROM events WHERE site_id = ?", string(site.ID))
	h.waitCount(16, "SELECT count() FROM events WHERE site_id = ? AND stable_visitor = 1", string(site.ID))
	return h, c, string(site.ID)
}

func TestRetention(t *testing.T) {
	_, c, site := retentionSite(t)
	ctx := context.Background()
	twoWeeks := client.StatsParams{SiteID: site, DateFrom: "2026-05-01", DateTo: "2026-05-14"}
	meta := func(from, to, tz string) api.StatsMeta {
		return api.StatsMeta{SiteID: site, DateFrom: from, DateTo: to, Timezone: tz}
	}

	// By the week (the default), from Monday; the range cuts the first
	// (May 1–3) and the last (May 11–14). A visitor's cohort is the week of
	// their first visit in the range:
	//   Apr 27: ann, ben, cat, hal = 4; in the week of May 4 ann (1 of 4:
	//           25 %), in that of May 11 ann and ben (2: 50 %); hal's May 15
	//           is past the range
	//   May 4:  dan, gus (his Apr 29 is before the range), eve = 3; in the
	//           week of May 11 eve (1 of 3: 33.3 %)
	//   May 11: fay = 1
	byWeek := api.RetentionResponse{Meta: meta("2026-05-01", "2026-05-14", "UTC"), Data: api.Retention{Interval: "week",
		Cohorts: []api.RetentionCohort{
			{Date: "2026-04-27", Visitors: 4, Periods: periods(4, 100, 1, 25, 2, 50)},
			{Date: "2026-05-04", Visitors: 3, Periods: periods(3, 100, 1, 33.3)},
			{Date: "2026-05-11", Visitors: 1, Periods: periods(1, 100)},
		}}}
	t.Run("by week", func(t *testing.T) {
		got, err := c.Retention(ctx, twoWeeks)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(byWeek, got); diff != "" {
			t.Errorf("retention (-want +got):\n%s", diff)
		}
	})

	t.Run("by day", func(t *testing.T) {
		// May 4–7: dan May 4 and 6; ann and gus May 5 (ann's May 1 is
		// before this range: her first visit in it is May 5); eve May 7.
		//   May 4: dan = 1; May 5 nobody of it, May 6 dan (100 %), May 7 nobody
		//   May 5: ann, gus = 2; neither came back by May 7
		//   May 6: nobody new (dan came May 4): an empty cohort, 0 %
		//   May 7: eve = 1
		p4 := client.StatsParams{SiteID: site, DateFrom: "2026-05-04", DateTo: "2026-05-07", Interval: "day"}
		got, err := c.Retention(ctx, p4)
		if err != nil {
			t.Fatal(err)
		}
		want := api.RetentionResponse{Meta: meta("2026-05-04", "2026-05-07", "UTC"), Data: api.Retention{Interval: "day",
			Cohorts: []api.RetentionCohort{
				{Date: "2026-05-04", Visitors: 1, Periods: periods(1, 100, 0, 0, 1, 100, 0, 0)},
				{Date: "2026-05-05", Visitors: 2, Periods: periods(2, 100, 0, 0, 0, 0)},
				{Date: "2026-05-06", Visitors: 0, Periods: periods(0, 0, 0, 0)},
				{Date: "2026-05-07", Visitors: 1, Periods: periods(1, 100)},
			}}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("retention (-want +got):\n%s", diff)
		}
	})

	t.Run("by month", func(t *testing.T) {
		// one month, May: the 8 visitors of the range, nobody later
		q := twoWeeks
		q.Interval = "month"
		got, err := c.Retention(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		want := []api.RetentionCohort{{Date: "2026-05-01", Visitors: 8, Periods: periods(8, 100)}}
		if diff := cmp.Diff(want, got.Data.Cohorts); diff != "" {
			t.Errorf("retention (-want +got):\n%s", diff)
		}
	})

	t.Run("in New York", func(t *testing.T) {
		// The range is May 1–14 of New York, 04:00 UTC to 04:00 UTC, and
		// every visit at noon UTC is on its UTC date there; eve's return at
		// 00:30 UTC on May 11 is May 10 20:30 in New York, in her own week:
		// the cohort of May 4 keeps its 3 visitors and nobody of it returns.
		q := twoWeeks
		q.Timezone = "America/New_York"
		got, err := c.Retention(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		want := byWeek
		want.Meta.Timezone = "America/New_York"
		want.Data.Cohorts = append([]api.RetentionCohort(nil), byWeek.Data.Cohorts...)
		want.Data.Cohorts[1] = api.RetentionCohort{Date: "2026-05-04", Visitors: 3, Periods: periods(3, 100, 0, 0)}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("retention (-want +got):\n%s", diff)
		}
	})

	t.Run("filtered by country", func(t *testing.T) {
		// the visits from GB: ann, ben (week of Apr 27), eve (May 4)
		//   Apr 27: 2; ann in the week of May 4 (50 %), ann and ben in that of May 11 (100 %)
		//   May 4:  eve = 1; back in the week of May 11 (100 %)
		//   May 11: nobody new
		q := twoWeeks
		q.Country = "GB"
		got, err := c.Retention(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		want := []api.RetentionCohort{
			{Date: "2026-04-27", Visitors: 2, Periods: periods(2, 100, 1, 50, 2, 100)},
			{Date: "2026-05-04", Visitors: 1, Periods: periods(1, 100, 1, 100)},
			{Date: "2026-05-11", Visitors: 0, Periods: periods(0, 0)},
		}
		if diff := cmp.Diff(want, got.Data.Cohorts); diff != "" {
			t.Errorf("retention (-want +got):\n%s", diff)
		}
	})

	t.Run("filtered by a prop", func(t *testing.T) {
		// the visits that sent plan=pro: eve's of May 7 alone; her visit
		// of May 11 sent none, so it is no return here
		q := twoWeeks
		q.Props = map[string]string{"plan": "pro"}
		got, err := c.Retention(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		want := []api.RetentionCohort{
			{Date: "2026-04-27", Visitors: 0, Periods: periods(0, 0, 0, 0, 0, 0)},
			{Date: "2026-05-04", Visitors: 1, Periods: periods(1, 100, 0, 0)},
			{Date: "2026-05-11", Visitors: 0, Periods: periods(0, 0)},
		}
		if diff := cmp.Diff(want, got.Data.Cohorts); diff != "" {
			t.Errorf("retention (-want +got):\n%s", diff)
		}
	})

	t.Run("csv", func(t *testing.T) {
		var buf bytes.Buffer
		name, err := c.CSV(ctx, "retention", twoWeeks, &buf)
		if err != nil {
			t.Fatal(err)
		}
		if want := "retention-week-" + site + "-2026-05-01-2026-05-14.csv"; name != want {
			t.Errorf("file name %q, want %q", name, want)
		}
		want := "cohort,cohort_visitors,period,visitors,percentage\r\n" +
			"2026-04-27,4,0,4,100\r\n2026-04-27,4,1,1,25\r\n2026-04-27,4,2,2,50\r\n" +
			"2026-05-04,3,0,3,100\r\n2026-05-04,3,1,1,33.3\r\n" +
			"2026-05-11,1,0,1,100\r\n"
		if diff := cmp.Diff(want, buf.String()); diff != "" {
			t.Errorf("csv (-want +got):\n%s", diff)
		}
	})
}

// periods are a cohort's periods from 0 on, given as pairs of visitors and
// percentage.
func periods(pairs ...float64) []api.RetentionPeriod {
	out := make([]api.RetentionPeriod, len(pairs)/2)
	for k := range out {
		out[k] = api.RetentionPeriod{Period: k, Visitors: int64(pairs[2*k]), Percentage: pairs[2*k+1]}
	}
	return out
}

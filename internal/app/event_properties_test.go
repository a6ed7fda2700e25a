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
	"github.com/tally-analytics/tally/internal/testenv"
	"github.com/tally-analytics/tally/pkg/api"
	"github.com/tally-analytics/tally/pkg/client"
)

// The signups of a week, 2026-05-01..07, by plan. Each visitor views a page
// a minute before their events (GB: 81.2.69.10, US: 216.160.83.5):
//
//	ann  GB  May 2 10:01 Signup {plan: pro, seats: 3}, 10:05 Signup {plan: pro},
//	         10:06 Download {plan: x} (another event: never counted here)
//	ben  US  May 3 09:00 Signup {plan: pro}
//	cat  GB  May 4 09:00 Signup {plan: pro, coupon: spring}
//	dan  US  May 5 09:00 Signup {plan: free}
//	eve  GB  May 6 09:00 Signup without props
//	—        May 6 12:00 a payment sent without a visitor names Signup: an event of visitor 0
//	fay  US  May 6 14:00 a pageview only
//	gus  —   May 7 23:30 UTC Signup {plan: pro} (May 8 in Tokyo)
//	hal  —   Apr 30 23:30 UTC Signup {plan: free} (May 1 in Tokyo)
//
// In UTC the range has 7 visitors (ann..gus; hal is out, visitor 0 is
// nobody) and 8 Signups: ann 2, ben, cat, dan, eve, visitor 0, gus.
func eventPropertiesSite(t *testing.T) (*harness, *client.Client, string) {
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
	type signup struct {
		at, visitor, ip, event string
		props                  map[string]any
	}
	events := []signup{
		{"2026-05-02 10:01:00", "ann", gb, "Signup", map[string]any{"plan": "pro", "seats": 3}},
		{"2026-05-02 10:05:00", "ann", gb, "Signup", map[string]any{"plan": "pro"}},
		{"2026-05-02 10:06:00", "ann", gb, "Download", map[string]any{"plan": "x"}},
		{"2026-05-03 09:00:00", "ben", us, "Signup", map[string]any{"plan": "pro"}},
		{"2026-05-04 09:00:00", "cat", gb, "Signup", map[string]any{"plan": "pro", "coupon": "spring"}},
		{"2026-05-05 09:00:00", "dan", us, "Signup", map[string]any{"plan": "free"}},
		{"2026-05-06 09:00:00", "eve", gb, "Signup", nil},
		{"2026-05-06 14:00:00", "fay", us, "", nil},
		{"2026-05-07 23:30:00", "gus", "", "Signup", map[string]any{"plan": "pro"}},
		{"2026-04-30 23:30:00", "hal", "", "Signup", map[string]any{"plan": "free"}},
	}
	seen := map[string]bool{}
	stored := 0
	for _, ev := range events {
		at, err := time.Parse(time.DateTime, ev.at)
		if err != nil {
			t.Fatal(err)
		}
		req := api.PageviewRequest{SiteID: string(site.ID), URL: "https://shop.example.com/join", UserAgent: chromeUA,
			IPAddress: ev.ip, VisitorID: ev.visitor}
		if !seen[ev.visitor] {
			seen[ev.visitor] = true
			h.clock.Set(at.Add(-time.Minute))
			if _, err := c.Pageview(ctx, req); err != nil {
				t.Fatal(err)
			}
			stored++
		}
		if ev.event == "" {
			continue
		}
		h.clock.Set(at)
		if _, err := c.CustomEvent(ctx, api.CustomEventRequest{PageviewRequest: req, EventName: ev.event, Props: ev.props}); err != nil {
			t.Fatal(err)
		}
		stored++
	}
	h.clock.Set(time.Date(2026, 5, 6, 12, 0, 0, 0, time.UTC))
	pay := payment(string(site.ID), "1000", "USD")
	pay.EventName, pay.TransactionID = "Signup", "anonymous-1"
	if _, err := c.Payment(ctx, pay); err != nil {
		t.Fatal(err)
	}
	h.waitCount(int64(stored), "SELECT count() FROM events WHERE site_id = ? AND visitor_id != 0", string(site.ID))
	h.waitCount(1, "SELECT count() FROM events WHERE site_id = ? AND name = 'Signup' AND visitor_id = 0", string(site.ID))
	return h, c, string(site.ID)
}

func TestEventProperties(t *testing.T) {
	h, c, site := eventPropertiesSite(t)
	ctx := context.Background()
	week := client.StatsParams{SiteID: site, DateFrom: "2026-05-01", DateTo: "2026-05-07", EventName: "Signup"}
	meta := func(tz, property string) api.EventPropertiesMeta {
		return api.EventPropertiesMeta{StatsMeta: api.StatsMeta{SiteID: site, DateFrom: "2026-05-01", DateTo: "2026-05-07", Timezone: tz},
			EventName: "Signup", Property: property}
	}

	t.Run("keys", func(t *testing.T) {
		res, err := c.EventPropertyKeys(ctx, week)
		if err != nil {
			t.Fatal(err)
		}
		want := api.EventPropertyKeysResponse{Meta: meta("UTC", ""), Data: []api.EventPropertyKey{
			// ann twice, ben, cat, dan, gus: 6 events of 5 visitors (the Download's plan is another event's)
			{Property: "plan", TotalCount: 6, UniqueVisitors: 5},
			// cat's and ann's first: 1 and 1 each, coupon before seats
			{Property: "coupon", TotalCount: 1, UniqueVisitors: 1},
			{Property: "seats", TotalCount: 1, UniqueVisitors: 1},
		}}
		if diff := cmp.Diff(want, res); diff != "" {
			t.Errorf("keys (-want +got):\n%s", diff)
		}
	})

	t.Run("values, (none) and the events report's conversion rate", func(t *testing.T) {
		p := week
		p.Property = "plan"
		res, err := c.EventPropertyValues(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		want := api.EventPropertyValuesResponse{Meta: meta("UTC", "plan"), Data: []api.EventPropertyValue{
			// ann 2, ben, cat, gus: 5 events of 4 visitors; 5 / 7 visitors of the range
			{Value: "pro", TotalCount: 5, UniqueVisitors: 4, ConversionRate: 71.4},
			// eve's and visitor 0's: 2 events of 1 visitor (0 is nobody); 2 / 7
			{Value: "(none)", TotalCount: 2, UniqueVisitors: 1, ConversionRate: 28.6},
			// dan: 1 / 7
			{Value: "free", TotalCount: 1, UniqueVisitors: 1, ConversionRate: 14.3},
		}}
		if diff := cmp.Diff(want, res); diff != "" {
			t.Errorf("values (-want +got):\n%s", diff)
		}
		// every Signup is under one value: the events report's 8 events of
		// 6 visitors, 8 / 7 = 114.3 %, computed by the same rule
		events, err := c.Events(ctx, week)
		if err != nil {
			t.Fatal(err)
		}
		wantEvents := []api.EventRow{{EventName: "Signup", TotalCount: 8, UniqueVisitors: 6, ConversionRate: 114.3}}
		if diff := cmp.Diff(wantEvents, events.Data.Events); diff != "" {
			t.Errorf("events report (-want +got):\n%s", diff)
		}
		p.Limit = 1
		if res, err := c.EventPropertyValues(ctx, p); err != nil || len(res.Data) != 1 || res.Data[0].Value != "pro" {
			t.Errorf("limit=1: %+v, %v; want pro alone", res.Data, err)
		}
		// a number is stored as its shortest form
		p.Limit, p.Property = 0, "seats"
		res, err = c.EventPropertyValues(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		wantSeats := []api.EventPropertyValue{
			// the 7 Signups without seats, of 6 visitors (ann's second counts here too): 7 / 7
			{Value: "(none)", TotalCount: 7, UniqueVisitors: 6, ConversionRate: 100},
			{Value: "3", TotalCount: 1, UniqueVisitors: 1, ConversionRate: 14.3},
		}
		if diff := cmp.Diff(wantSeats, res.Data); diff != "" {
			t.Errorf("seats (-want +got):\n%s", diff)
		}
	})

	t.Run("filtered by a country", func(t *testing.T) {
		p := week
		p.Property, p.Country = "plan", "GB"
		res, err := c.EventPropertyValues(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		// GB: ann, cat, eve are the range's 3 visitors (visitor 0's event has no country)
		want := []api.EventPropertyValue{
			{Value: "pro", TotalCount: 3, UniqueVisitors: 2, ConversionRate: 100}, // ann 2, cat: 3 / 3
			{Value: "(none)", TotalCount: 1, UniqueVisitors: 1, ConversionRate: 33.3},
		}
		if diff := cmp.Diff(want, res.Data); diff != "" {
			t.Errorf("GB (-want +got):\n%s", diff)
		}
	})

	t.Run("in Tokyo", func(t *testing.T) {
		p := week
		p.Property, p.Timezone = "plan", "Asia/Tokyo"
		res, err := c.EventPropertyValues(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		// May 1..7 in Tokyo is Apr 30 15:00 .. May 7 15:00 UTC: hal in, gus out;
		// 7 visitors (ann..fay, hal)
		want := api.EventPropertyValuesResponse{Meta: meta("Asia/Tokyo", "plan"), Data: []api.EventPropertyValue{
			{Value: "pro", TotalCount: 4, UniqueVisitors: 3, ConversionRate: 57.1},  // ann 2, ben, cat
			{Value: "free", TotalCount: 2, UniqueVisitors: 2, ConversionRate: 28.6}, // dan, hal
			{Value: "(none)", TotalCount: 2, UniqueVisitors: 1, ConversionRate: 28.6},
		}}
		if diff := cmp.Diff(want, res); diff != "" {
			t.Errorf("Tokyo (-want +got):\n%s", diff)
		}
	})

	t.Run("sampled as the events report", func(t *testing.T) {
		// 16 events in the week (7 pageviews, 8 custom events, visitor 0's)
		// against a threshold of 4: a 12 % sample of visitors, too few to
		// count on, but meta says so
		cfg := *h.cfg
		cfg.WALDir, cfg.SampleAboveEvents = t.TempDir(), 4
		sampling := startApp(t, &cfg, h.clock).client(h.key)
		p := week
		p.Property = "plan"
		values, err := sampling.EventPropertyValues(ctx, p)
		if err != nil || !values.Meta.Sampled {
			t.Errorf("values above the threshold: sampled=%v, %v", values.Meta.Sampled, err)
		}
		keys, err := sampling.EventPropertyKeys(ctx, week)
		if err != nil || !keys.Meta.Sampled {
			t.Errorf("keys above the threshold: sampled=%v, %v", keys.Meta.Sampled, err)
		}
	})

	t.Run("CSV", func(t *testing.T) {
		q := url.Values{"site_id": {site}, "date_from": {"2026-05-01"}, "date_to": {"2026-05-07"}, "event_name": {"Signup"},
			"format": {"csv"}}
		res, body := apiGet(t, h, "/api/v1/stats/event-properties", with(q, "property", "plan"), "")
		want := "value,total_count,unique_visitors,conversion_rate\r\npro,5,4,71.4\r\n(none),2,1,28.6\r\nfree,1,1,14.3\r\n"
		if res.StatusCode != 200 || string(body) != want || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/csv") ||
			res.Header.Get("Content-Disposition") != `attachment; filename="event-properties-`+site+`-2026-05-01-2026-05-07.csv"` {
			t.Errorf("values as CSV: %d %q %q\n%s", res.StatusCode, res.Header.Get("Content-Type"), res.Header.Get("Content-Disposition"), body)
		}
		res, body = apiGet(t, h, "/api/v1/stats/event-properties", q, "")
		want = "property,total_count,unique_visitors\r\nplan,6,5\r\ncoupon,1,1\r\nseats,1,1\r\n"
		if res.StatusCode != 200 || string(body) != want {
			t.Errorf("keys as CSV: %d\n%s", res.StatusCode, body)
		}
	})
}

// The report's parameters: event_name is required and sized as ingestion
// sizes it (120 characters, counted as characters), pageview has no props,
// a property is 1 to 50 characters; another account's site is not found.
func TestEventPropertiesRefusals(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	if _, err := h.app.Accounts.CreateUser(ctx, accounts.NewUser{Email: "other@example.com", Password: password, Name: "O"}); err != nil {
		t.Fatal(err)
	}
	otherSite, err := h.app.Accounts.CreateSite(ctx, accounts.NewSite{OwnerEmail: "other@example.com", Domain: "other.com"})
	if err != nil {
		t.Fatal(err)
	}
	valid := url.Values{"site_id": {string(h.siteID)}, "date_from": {"2026-05-01"}, "date_to": {"2026-05-07"}, "event_name": {"Signup"}}
	without := func(k string) url.Values {
		q := with(valid)
		q.Del(k)
		return q
	}
	tests := []struct {
		name        string
		q           url.Values
		status      int
		code, field string
	}{
		{"no event_name", without("event_name"), 400, "invalid_request", "event_name"},
		{"empty event_name", with(valid, "event_name", ""), 400, "invalid_request", "event_name"},
		{"pageview", with(valid, "event_name", "pageview"), 400, "invalid_request", "event_name"},
		{"121 characters", with(valid, "event_name", strings.Repeat("a", 121)), 400, "invalid_request", "event_name"},
		{"not UTF-8", with(valid, "event_name", "\xff"), 400, "invalid_request", "event_name"},
		{"empty property", with(valid, "property", ""), 400, "invalid_request", "property"},
		{"51 characters", with(valid, "property", strings.Repeat("k", 51)), 400, "invalid_request", "property"},
		{"limit 0", with(valid, "limit", "0"), 400, "invalid_request", "limit"},
		{"limit 1001", with(valid, "limit", "1001"), 400, "invalid_request", "limit"},
		{"another account's site", with(valid, "site_id", string(otherSite.ID)), 404, "site_not_found", "site_id"},
		{"120 characters of two bytes", with(valid, "event_name", strings.Repeat("é", 120)), 200, "", ""},
		{"50 characters of two bytes", with(valid, "property", strings.Repeat("é", 50)), 200, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, e := get(t, h, h.key, "/api/v1/stats/event-properties", tc.q)
			if status != tc.status || e.Error.Code != tc.code || e.Error.Field != tc.field {
				t.Errorf("got %d %q field %q (%s), want %d %q field %q", status, e.Error.Code, e.Error.Field, e.Error.Message,
					tc.status, tc.code, tc.field)
			}
		})
	}
	if _, err := h.client(h.key).EventPropertyValues(ctx, client.StatsParams{SiteID: string(h.siteID), EventName: "Signup"}); err == nil {
		t.Error("the client asked for values without a property")
	}
	if res, body := apiGet(t, h, "/api/v1/stats/event-properties", with(valid, "format", "csv", "event_name", "pageview"), ""); res.StatusCode != http.StatusBadRequest ||
		!strings.Contains(string(body), `"field":"event_name"`) {
		t.Errorf("a refused CSV request: %d %s, want the JSON error", res.StatusCode, body)
	}
}

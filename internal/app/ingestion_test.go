package app_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tally-analytics/tally/internal/accounts"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/pkg/api"
	"github.com/tally-analytics/tally/pkg/client"
)

// gptbotUA is an AI agent's user agent.
const gptbotUA = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)"

// Tracking health counts what a site's senders provoked, reason by reason,
// on the day (of the asked time zone) it happened; refusals for an unknown
// site, or sent with a key to a site of another account, count nowhere.
//
// At t1 = 2026-06-30 18:40 UTC (00:10 on July 1 in Asia/Kolkata, +5:30):
// 2 pageviews accepted, 1 Googlebot pageview (crawler), 1 pageview with a
// malformed URL (invalid_payload), 1 from another domain (host_mismatch).
// At t2 = 2026-07-01 12:00 UTC: 1 custom event accepted; 1 GPTBot pageview
// (ai_agent); 1 custom event with a nested prop (invalid_props); a batch
// of one good event and one with a nested prop (1 accepted, 1
// invalid_props); a tracker body cut off mid-JSON (invalid_payload); two
// tracker bodies over 64 KiB and over 1 MiB (body_too_large); 5 tracker events from one
// address allowed 3 a minute (3 accepted, 2 rate_limited); a batch of 3
// events over what is left of the account's 6 an hour (3 rate_limited,
// after 1+1+1+2 = 5 used); and, on a second instance whose write-ahead
// log has no room, 1 pageview (over_wal_budget).
//
// UTC: June 30 accepted 2, bots 1, refused 2; July 1 accepted 1+1+3 = 5,
// bots 1, refused 2+1+2+2+3+1 = 11. Totals 7, 2, 13; by reason
// rate_limited 5, invalid_payload 2, invalid_props 2, body_too_large 2,
// host_mismatch 1, over_wal_budget 1, unavailable 0. Asia/Kolkata: June 30
// holds nothing (18:40 UTC falls in the quarter starting 18:30 UTC, which
// is midnight there), July 1 all of it.
func TestTrackingHealth(t *testing.T) {
	h := newHarnessWith(t, testenvConfigWith(t, func(c *configT) {
		c.TrackerPerMinute = 3
		c.TrustedProxies = []string{"127.0.0.1/32"}
		c.ProEventsPerHour = 6
	}))
	ctx := context.Background()
	site := string(h.siteID)
	c := h.client(h.key)
	// Another account's site: the owner's key sends it a refused event.
	if _, err := h.app.Accounts.CreateUser(ctx, accounts.NewUser{Email: "other@example.com", Password: password, Name: "Other", Plan: model.PlanPro}); err != nil {
		t.Fatal(err)
	}
	other, err := h.app.Accounts.CreateSite(ctx, accounts.NewSite{OwnerEmail: "other@example.com", Domain: "other.org"})
	if err != nil {
		t.Fatal(err)
	}

	addr := 0 // each tracker request from its own address, unless rate limited on purpose
	tracker := func(body, ua string, want int) {
		t.Helper()
		addr++
		resp := postE(t, h, body, "X-Forwarded-For", fmt.Sprintf("198.51.100.%d", addr), "User-Agent", ua)
		if resp.StatusCode != want {
			t.Fatalf("/e %.60s: %d, want %d", body, resp.StatusCode, want)
		}
	}
	pageview := func(siteID, url string) string {
		b, _ := json.Marshal(api.TrackerEvent{SiteID: siteID, EventName: "pageview", URL: url})
		return string(b)
	}
	wantAPIError := func(err error, status int) {
		t.Helper()
		var e *client.Error
		if !errors.As(err, &e) || e.Status != status {
			t.Fatalf("got %v, want %d", err, status)
		}
	}

	t1 := time.Date(2026, 6, 30, 18, 40, 0, 0, time.UTC)
	h.clock.Set(t1)
	tracker(pageview(site, "https://example.com/"), chromeUA, 202)
	tracker(pageview(site, "https://example.com/a"), chromeUA, 202)
	tracker(pageview(site, "https://example.com/"), googlebotUA, 202)
	_, err = c.Pageview(ctx, api.PageviewRequest{SiteID: site, URL: "not a url", UserAgent: chromeUA}) // 1 of 6
	wantAPIError(err, 400)
	tracker(pageview(site, "https://elsewhere.net/"), chromeUA, 400)
	// counted nowhere: an unknown site, and another account's site through the owner's key
	tracker(pageview("no-such-site", "https://example.com/"), chromeUA, 400)
	tracker(`{"site_id":"no-such-site","url":`, chromeUA, 400)

	t2 := time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)
	h.clock.Set(t2)
	nested := map[string]any{"plan": map[string]any{"tier": "pro"}}
	if _, err := c.CustomEvent(ctx, api.CustomEventRequest{PageviewRequest: api.PageviewRequest{SiteID: site, URL: "https://example.com/",
		UserAgent: chromeUA}, EventName: "Signup"}); err != nil { // 2 of 6
		t.Fatal(err)
	}
	tracker(pageview(site, "https://example.com/"), gptbotUA, 202)
	_, err = c.CustomEvent(ctx, api.CustomEventRequest{PageviewRequest: api.PageviewRequest{SiteID: site, URL: "https://example.com/",
		UserAgent: chromeUA}, EventName: "Signup", Props: nested}) // 3 of 6
	wantAPIError(err, 400)
	res, err := c.Batch(ctx, []api.CustomEventRequest{ // 5 of 6
		{PageviewRequest: api.PageviewRequest{SiteID: site, URL: "https://example.com/b", UserAgent: chromeUA}},
		{PageviewRequest: api.PageviewRequest{SiteID: site, URL: "https://example.com/c", UserAgent: chromeUA}, EventName: "Signup", Props: nested},
	})
	if err != nil || res.Accepted != 1 || res.Rejected != 1 {
		t.Fatalf("batch: %+v, %v", res, err)
	}
	tracker(`{"site_id":"`+site+`","event_name":"pageview","url":`, chromeUA, 400)
	tracker(`{"site_id":"`+site+`","event_name":"pageview","url":"https://example.com/","props":{"x":"`+strings.Repeat("x", 70<<10)+`"}}`, chromeUA, 413)
	tracker(`{"site_id":"`+site+`","event_name":"pageview","url":"https://example.com/","props":{"x":"`+strings.Repeat("x", 2<<20)+`"}}`, chromeUA, 413)
	for i := range 5 {
		want := 202
		if i >= 3 {
			want = 429
		}
		if resp := postE(t, h, pageview(site, "https://example.com/"), "X-Forwarded-For", "203.0.113.9"); resp.StatusCode != want {
			t.Fatalf("flood %d: %d, want %d", i, resp.StatusCode, want)
		}
	}
	three := make([]api.CustomEventRequest, 3)
	for i := range three {
		three[i] = api.CustomEventRequest{PageviewRequest: api.PageviewRequest{SiteID: site, URL: "https://example.com/", UserAgent: chromeUA}}
	}
	_, err = c.Batch(ctx, three)
	wantAPIError(err, 429)
	_, err = c.Pageview(ctx, api.PageviewRequest{SiteID: string(other.ID), URL: "not a url", UserAgent: chromeUA}) // the last of 6
	wantAPIError(err, 400)

	// a second instance with no room in its log
	cfg := *h.cfg
	cfg.WALDir, cfg.WALMaxBytes = t.TempDir(), 1
	full := startApp(t, &cfg, h.clock)
	if resp := postE(t, full, pageview(site, "https://example.com/"), "X-Forwarded-For", "192.0.2.1"); resp.StatusCode != 503 {
		t.Fatalf("full log: %d, want 503", resp.StatusCode)
	}

	h.waitCount(7, "SELECT count() FROM events WHERE site_id = ?", site)
	h.waitCount(2, "SELECT count() FROM bot_events WHERE site_id = ?", site)
	for _, inst := range []*harness{h, full} {
		if err := inst.app.Ingest.FlushRefusals(ctx); err != nil {
			t.Fatal(err)
		}
	}

	got, err := c.Ingestion(ctx, client.StatsParams{SiteID: site, DateFrom: "2026-06-30", DateTo: "2026-07-01", Timezone: "UTC"})
	if err != nil {
		t.Fatal(err)
	}
	want := api.IngestionReport{
		Totals:         api.IngestionCounts{Accepted: 7, Bots: 2, Refused: 13},
		BotsByCategory: api.BotTraffic{Crawler: 1, AIAgent: 1},
		RefusedByReason: []api.RefusalCount{{Reason: "rate_limited", Count: 5}, {Reason: "invalid_payload", Count: 2},
			{Reason: "invalid_props", Count: 2}, {Reason: "body_too_large", Count: 2}, {Reason: "host_mismatch", Count: 1},
			{Reason: "over_wal_budget", Count: 1}, {Reason: "unavailable", Count: 0}},
		Timeseries: []api.IngestionPoint{{Date: "2026-06-30", Accepted: 2, Bots: 1, Refused: 2},
			{Date: "2026-07-01", Accepted: 5, Bots: 1, Refused: 11}},
	}
	assertJSONEqual(t, "UTC", got.Data, want)

	got, err = c.Ingestion(ctx, client.StatsParams{SiteID: site, DateFrom: "2026-06-30", DateTo: "2026-07-01", Timezone: "Asia/Kolkata"})
	if err != nil {
		t.Fatal(err)
	}
	want.Timeseries = []api.IngestionPoint{{Date: "2026-06-30"}, {Date: "2026-07-01", Accepted: 7, Bots: 2, Refused: 13}}
	assertJSONEqual(t, "Asia/Kolkata", got.Data, want)

	checkHealthCard(t, h)

	// nothing for the unknown site or the other account's site
	if n := h.count("SELECT count() FROM ingest_refusals WHERE site_id != ?", site); n != 0 {
		t.Errorf("%d refusal rows of other sites, want none", n)
	}

	// no filters; the CSV is the daily series
	if _, err := c.Ingestion(ctx, client.StatsParams{SiteID: site, DateFrom: "2026-06-30", DateTo: "2026-07-01", Device: "desktop"}); err == nil {
		t.Error("a filter was accepted")
	}
	var csv strings.Builder
	if _, err := c.CSV(ctx, "ingestion", client.StatsParams{SiteID: site, DateFrom: "2026-06-30", DateTo: "2026-07-01", Timezone: "UTC"}, &csv); err != nil {
		t.Fatal(err)
	}
	if want := "date,accepted,bots,refused,excluded\r\n2026-06-30,2,1,2,0\r\n2026-07-01,5,1,11,0\r\n"; csv.String() != want {
		t.Errorf("CSV %q, want %q", csv.String(), want)
	}
}

// The dashboard's card shows the same counts, filters or not.
func checkHealthCard(t *testing.T, h *harness) {
	t.Helper()
	w := newWebUser(t, h)
	w.login(h.email)
	body := w.expect(http.MethodGet, "/sites/"+string(h.siteID)+"/cards/health?range=custom&from=2026-06-30&to=2026-07-01&device=Desktop", nil, http.StatusOK)
	for _, want := range []string{`data-row="Counted"`, `data-col="accepted" data-value="7"`, `data-row="Bots: crawlers"`,
		`data-row="Refused: over a rate limit"`, `data-col="refused:rate_limited" data-value="5"`, `data-col="refused:over_wal_budget" data-value="1"`,
		"the filters do not apply"} {
		if !strings.Contains(body, want) {
			t.Errorf("the health card lacks %s:\n%s", want, body)
		}
	}
	if strings.Contains(body, "refused:unavailable") {
		t.Error("the health card lists a reason with no refusals")
	}
}

// assertJSONEqual compares got and want as JSON.
func assertJSONEqual(t *testing.T, what string, got, want any) {
	t.Helper()
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	if string(g) != string(w) {
		t.Errorf("%s:\n got %s\nwant %s", what, g, w)
	}
}

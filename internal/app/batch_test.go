package app_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/tally-analytics/tally/internal/accounts"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/pkg/api"
	"github.com/tally-analytics/tally/pkg/client"
)

func TestBatch(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	site := string(h.siteID)
	ev := func(url, name string) api.CustomEventRequest {
		return api.CustomEventRequest{PageviewRequest: api.PageviewRequest{SiteID: site, URL: url, UserAgent: chromeUA,
			VisitorID: "v1"}, EventName: name}
	}
	bad := ev("/relative", "")
	bot := ev("https://example.com/bot", "")
	bot.UserAgent = "Googlebot/2.1 (+http://www.google.com/bot.html)"
	paid := ev("https://example.com/pay", "Purchase")
	paid.Revenue = &api.Revenue{Amount: "19.99", Currency: "EUR"}
	events := []api.CustomEventRequest{
		ev("https://example.com/", ""),
		ev("https://example.com/pricing", ""),
		bad,
		ev("https://example.com/pricing", "Signup"),
		{PageviewRequest: api.PageviewRequest{SiteID: "nope", URL: "https://example.com/"}},
		bot,
		paid,
	}
	res, err := h.client(h.key).Batch(ctx, events)
	if err != nil {
		t.Fatal(err)
	}
	if res.Accepted != 5 || res.Rejected != 2 || len(res.Results) != 7 {
		t.Fatalf("accepted %d rejected %d results %d, want 5, 2, 7: %+v", res.Accepted, res.Rejected, len(res.Results), res)
	}
	for i, r := range res.Results {
		if r.Index != i {
			t.Errorf("result %d has index %d", i, r.Index)
		}
	}
	if e := res.Results[2].Error; e == nil || e.Code != "invalid_request" || e.Field != "events[2].url" {
		t.Errorf("relative url: %+v, want invalid_request on events[2].url", e)
	}
	if e := res.Results[4].Error; e == nil || e.Code != "invalid_site_id" || e.Field != "events[4].site_id" {
		t.Errorf("unknown site: %+v, want invalid_site_id on events[4].site_id", e)
	}
	// the accepted events are stored with one session of 2 pageviews and
	// 2 custom events, in order; the bot is only counted
	h.waitCount(4, "SELECT count() FROM events")
	h.waitCount(1, "SELECT count() FROM bot_events")
	if n := h.count("SELECT count() FROM events WHERE event_id IN (?, ?, ?, ?)", res.Results[0].EventID,
		res.Results[1].EventID, res.Results[3].EventID, res.Results[6].EventID); n != 4 {
		t.Errorf("%d of the 4 acknowledged event ids are stored", n)
	}
	if n := h.count("SELECT toUInt64(sum(sign)) FROM sessions"); n != 1 {
		t.Errorf("%d live sessions, want 1", n)
	}
	if n := h.count("SELECT toUInt64(sum(pageviews * sign)) FROM sessions"); n != 2 {
		t.Errorf("the session holds %d pageviews, want 2", n)
	}
	if n := h.count("SELECT count() FROM events WHERE pathname = '/pricing' AND prev_pathname = '/'"); n != 1 {
		t.Errorf("the second pageview does not follow the first in its session")
	}
	if n := h.count("SELECT count() FROM events WHERE name = 'Purchase' AND revenue_amount = 1999 AND revenue_currency = 'EUR'"); n != 1 {
		t.Errorf("the revenue event is not stored with 1999 EUR cents")
	}

	// whole-batch errors: empty, too many, not JSON, no credential
	tooMany := make([]string, 1001)
	for i := range tooMany {
		tooMany[i] = `{"site_id":"` + site + `","url":"https://example.com/"}`
	}
	for _, tc := range []struct {
		name, token, body string
		status            int
		code, field       string
	}{
		{"empty", h.key, `{"events":[]}`, 400, "invalid_request", "events"},
		{"1001 events", h.key, `{"events":[` + strings.Join(tooMany, ",") + `]}`, 400, "invalid_request", "events"},
		{"not an array", h.key, `{"events":{}}`, 400, "invalid_request", "events"},
		{"malformed", h.key, `{"events":[`, 400, "invalid_request", ""},
		{"no credential", "", `{"events":[{}]}`, 401, "unauthorized", ""},
	} {
		status, e := post(t, h, "/api/v1/events/batch", tc.token, tc.body)
		if status != tc.status || e.Error.Code != tc.code || e.Error.Field != tc.field {
			t.Errorf("%s: %d %+v, want %d %s field %q", tc.name, status, e, tc.status, tc.code, tc.field)
		}
	}
	// an event of the wrong shape is refused alone
	status, body := postRaw(t, h, "/api/v1/events/batch", h.key, `{"events":[{"site_id":"`+site+
		`","url":"https://example.com/"},{"site_id":5},7]}`)
	if status != 200 || !strings.Contains(body, `"field":"events[1].site_id"`) || !strings.Contains(body, `"accepted":1,"rejected":2`) {
		t.Errorf("mixed shapes: %d %s", status, body)
	}

	// a key without events:write cannot send batches
	statsKey, err := h.app.Accounts.CreateKey(ctx, accounts.NewKey{OwnerEmail: h.email, Name: "ro", Scopes: []model.Scope{model.ScopeStatsRead}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.client(statsKey.Secret).Batch(ctx, events[:1]); !isAPIError(err, 403, "forbidden") {
		t.Errorf("stats-only key: %v, want 403 forbidden", err)
	}
}

// A batch counts as many requests as it holds events against the Events
// API limit, all or nothing.
func TestBatchRateLimit(t *testing.T) {
	cfg := testenvConfigWith(t, func(c *configT) { c.ProEventsPerHour = 10 })
	h := newHarnessWith(t, cfg)
	ctx := context.Background()
	batch := func(n int) []api.CustomEventRequest {
		out := make([]api.CustomEventRequest, n)
		for i := range out {
			out[i] = api.CustomEventRequest{PageviewRequest: pageview(h, fmt.Sprintf("https://example.com/%d", i))}
		}
		return out
	}
	if res, err := h.client(h.key).Batch(ctx, batch(7)); err != nil || res.Accepted != 7 {
		t.Fatalf("7 of 10: %+v, %v", res, err)
	}
	if _, err := h.client(h.key).Batch(ctx, batch(4)); !isAPIError(err, 429, "rate_limit_exceeded") {
		t.Fatalf("4 more with 3 left: %v, want 429", err)
	}
	if res, err := h.client(h.key).Batch(ctx, batch(3)); err != nil || res.Accepted != 3 {
		t.Fatalf("the last 3: %+v, %v", res, err)
	}
	if _, err := h.client(h.key).Batch(ctx, batch(11)); !isAPIError(err, 400, "invalid_request") {
		t.Errorf("a batch over the whole limit: %v, want 400", err)
	}
	h.waitCount(10, "SELECT count() FROM events")
}

func isAPIError(err error, status int, code string) bool {
	e, ok := err.(*client.Error)
	return ok && e.Status == status && e.Code == code
}

// postRaw sends a raw body and returns the status and the body.
func postRaw(t *testing.T, h *harness, path, token, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, h.srv.URL+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data)
}

// An event of a batch without an event_name is a pageview: it keeps its
// props (as the tracker's pageviews do), and revenue on it is refused, as it
// is on any pageview, rather than dropped.
func TestBatchPageviewProps(t *testing.T) {
	h := newHarness(t)
	pv := api.CustomEventRequest{PageviewRequest: api.PageviewRequest{SiteID: string(h.siteID), URL: "https://example.com/a",
		UserAgent: chromeUA, VisitorID: "v1"}, Props: map[string]any{"author": "ann", "words": 1200}}
	paid := pv
	paid.Props, paid.Revenue = nil, &api.Revenue{Amount: "5.00", Currency: "EUR"}
	res, err := h.client(h.key).Batch(context.Background(), []api.CustomEventRequest{pv, paid})
	if err != nil {
		t.Fatal(err)
	}
	if res.Accepted != 1 || res.Rejected != 1 {
		t.Fatalf("accepted %d, rejected %d, want 1 and 1: %+v", res.Accepted, res.Rejected, res)
	}
	if e := res.Results[1].Error; e == nil || e.Code != "invalid_request" || e.Field != "events[1].revenue" {
		t.Errorf("revenue on a pageview: %+v, want invalid_request on events[1].revenue", e)
	}
	h.waitCount(1, "SELECT count() FROM events")
	if n := h.count("SELECT count() FROM events WHERE event_id = ? AND name = 'pageview' AND "+
		"props_values[indexOf(props_keys, 'author')] = 'ann' AND props_values[indexOf(props_keys, 'words')] = '1200'",
		res.Results[0].EventID); n != 1 {
		t.Errorf("the pageview is not stored with its two props")
	}
}

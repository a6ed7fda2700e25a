package app_test

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tally-analytics/tally/internal/testenv"
	"github.com/tally-analytics/tally/pkg/api"
	"github.com/tally-analytics/tally/pkg/client"
)

// transparentGIF is the 43-byte GIF89a of one transparent pixel.
var transparentGIF, _ = hex.DecodeString("47494638396101000100800000000000ffffff21f90401000000002c00000000010001000002024401003b")

const firefoxUA = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"

// pixelAnswer is what a load of the pixel was answered.
type pixelAnswer struct {
	status int
	header http.Header
	body   []byte
}

// loadPixel requests the pixel with the query q as a browser loads an
// image: with a user agent and Accept-Language, which header changes or
// removes (a value of "").
func loadPixel(t *testing.T, h *harness, method string, q url.Values, header ...string) pixelAnswer {
	t.Helper()
	req, _ := http.NewRequest(method, h.srv.URL+"/p.gif?"+q.Encode(), nil)
	req.Header.Set("User-Agent", chromeUA)
	req.Header.Set("Accept-Language", "en-GB,en;q=0.9")
	for i := 0; i < len(header); i += 2 {
		if header[i+1] == "" {
			req.Header.Del(header[i])
		} else {
			req.Header.Set(header[i], header[i+1])
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return pixelAnswer{status: resp.StatusCode, header: resp.Header, body: body}
}

// wantImage checks an accepted load's answer: the GIF and its headers.
func (a pixelAnswer) wantImage(t *testing.T, what string) {
	t.Helper()
	h := a.header
	if a.status != http.StatusOK || string(a.body) != string(transparentGIF) || h.Get("Content-Type") != "image/gif" ||
		h.Get("Cache-Control") != "no-store, max-age=0" || h.Get("Cross-Origin-Resource-Policy") != "cross-origin" {
		t.Errorf("%s: %d %v %x, want 200 with the transparent GIF", what, a.status, h, a.body)
	}
}

// wantError checks a refusal's answer: the status, and the error envelope
// with its code and field.
func (a pixelAnswer) wantError(t *testing.T, what string, status int, code, field string) {
	t.Helper()
	var env struct {
		Error struct {
			Code, Message string
			Field         string
		}
	}
	if err := json.Unmarshal(a.body, &env); err != nil || a.status != status || env.Error.Code != code ||
		env.Error.Field != field || env.Error.Message == "" || !strings.HasPrefix(a.header.Get("Content-Type"), "application/json") {
		t.Errorf("%s: %d %s, want %d %s on %q", what, a.status, a.body, status, code, field)
	}
}

func pixelQuery(kv ...string) url.Values {
	q := url.Values{}
	for i := 0; i < len(kv); i += 2 {
		q.Set(kv[i], kv[i+1])
	}
	return q
}

// Three loads from two visitors (told apart by their addresses and user
// agents) on two pages: Alice's pageview of /a, Bob's of /b, Alice's
// "Newsletter open" on /b. Two bots: Googlebot, and a browser's user
// agent without Accept-Language (a mail client's image proxy). HEADs,
// which record nothing.
//
// So: 2 visitors, 2 pageviews; the event 1 time by 1 visitor of 2 = 50 %;
// 2 bots (a crawler, other); 3 accepted, nothing refused.
func TestPixelCountsAsTheScriptWould(t *testing.T) {
	cfg := testenv.Config(t)
	cfg.TrustedProxies = []string{"127.0.0.1/32"}
	h := newHarnessWith(t, cfg)
	ctx := context.Background()
	site := string(h.siteID)
	h.clock.Set(time.Date(2026, 11, 10, 12, 0, 0, 0, time.UTC))
	alice := []string{"X-Forwarded-For", "81.2.69.10"}
	bob := []string{"X-Forwarded-For", "216.160.83.20", "User-Agent", firefoxUA}

	loads := []struct {
		what   string
		q      url.Values
		header []string
	}{
		{"Alice's pageview of /a", pixelQuery("site_id", site, "url", "https://example.com/a", "referrer", "https://news.example.org/"), alice},
		{"Bob's pageview of /b, the page from the Referer", pixelQuery("site_id", site), append(bob, "Referer", "https://example.com/b")},
		{"Alice's event on /b", pixelQuery("site_id", site, "url", "https://example.com/b", "event_name", "Newsletter open", "cb", "123"), alice},
		{"Googlebot", pixelQuery("site_id", site, "url", "https://example.com/a"),
			[]string{"X-Forwarded-For", "66.249.66.1", "User-Agent", "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"}},
		{"no Accept-Language", pixelQuery("site_id", site, "url", "https://example.com/a"),
			[]string{"X-Forwarded-For", "203.0.113.3", "Accept-Language", ""}},
	}
	for _, l := range loads {
		a := loadPixel(t, h, http.MethodGet, l.q, l.header...)
		a.wantImage(t, l.what)
		if a.header.Get("X-RateLimit-Limit") == "" || a.header.Get("X-RateLimit-Remaining") == "" || a.header.Get("X-RateLimit-Reset") == "" {
			t.Errorf("%s: no X-RateLimit-* headers: %v", l.what, a.header)
		}
	}
	for _, q := range []url.Values{pixelQuery("site_id", site, "url", "https://example.com/a"), pixelQuery("props", "x")} {
		a := loadPixel(t, h, http.MethodHead, q, alice...)
		if a.status != http.StatusOK || len(a.body) != 0 || a.header.Get("Content-Type") != "image/gif" ||
			a.header.Get("Cache-Control") != "no-store, max-age=0" || a.header.Get("Cross-Origin-Resource-Policy") != "cross-origin" {
			t.Errorf("HEAD ?%s: %d %v %q, want 200 with the image's headers and no body", q.Encode(), a.status, a.header, a.body)
		}
	}

	h.waitCount(3, "SELECT count() FROM events WHERE site_id = ?", site)
	h.waitCount(2, "SELECT count() FROM bot_events WHERE site_id = ?", site)
	if n := h.count("SELECT count() FROM events WHERE site_id = ? AND name = 'pageview' AND pathname = '/b' AND referrer = ''", site); n != 1 {
		t.Errorf("%d pageviews of /b without a referrer (Bob's, its page from the Referer), want 1", n)
	}

	c := h.client(h.key)
	p := client.StatsParams{SiteID: site, DateFrom: "2026-11-09", DateTo: "2026-11-10", Timezone: "UTC"}
	overview, err := c.Overview(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if m := overview.Data.Metrics; m.Visitors != 2 || m.Pageviews != 2 {
		t.Errorf("overview: %d visitors, %d pageviews; want 2 and 2", m.Visitors, m.Pageviews)
	}
	if got, want := overview.Meta, (api.OverviewMeta{StatsMeta: overview.Meta.StatsMeta, FilteredBotTraffic: 2,
		FilteredBotTrafficByCategory: api.BotTraffic{Crawler: 1, Other: 1}}); got != want {
		t.Errorf("bots: %+v, want %+v", got, want)
	}
	events, err := c.Events(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	want := []api.EventRow{{EventName: "Newsletter open", TotalCount: 1, UniqueVisitors: 1, ConversionRate: 50}}
	if diff := cmp.Diff(want, events.Data.Events); diff != "" {
		t.Errorf("events report (-want +got):\n%s", diff)
	}
	if err := h.app.Ingest.FlushRefusals(ctx); err != nil {
		t.Fatal(err)
	}
	health, err := c.Ingestion(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if want := (api.IngestionCounts{Accepted: 3, Bots: 2}); health.Data.Totals != want {
		t.Errorf("tracking health: %+v, want %+v", health.Data.Totals, want)
	}
}

// Each refusal is /e's, with its envelope, and counts in the site's
// tracking health as /e's would: an unknown or missing site counts
// nowhere, a page off the domain (the url, or without one the Referer) as
// host_mismatch, a parameter the pixel does not take, a bad event name
// and a missing page as invalid_payload. The client's allowance (7 a
// minute) is /e's: the 8th load and then an /e event are refused,
// rate_limited; another client's load passes.
//
// So: 1 accepted; refused 2 host_mismatch, 3 invalid_payload, 2 rate_limited.
func TestPixelRefusals(t *testing.T) {
	cfg := testenv.Config(t)
	cfg.TrackerPerMinute = 7
	cfg.TrustedProxies = []string{"127.0.0.1/32"}
	h := newHarnessWith(t, cfg)
	ctx := context.Background()
	site := string(h.siteID)
	h.clock.Set(time.Date(2026, 11, 10, 12, 0, 0, 0, time.UTC))
	client1 := []string{"X-Forwarded-For", "203.0.113.9"}
	page := "https://example.com/a"

	refusals := []struct {
		what   string
		q      url.Values
		header []string
		status int
		code   string
		field  string
	}{
		{"no site_id", pixelQuery("url", page), nil, 400, "invalid_request", "site_id"},
		{"an unknown site", pixelQuery("site_id", "nosuchsite", "url", page), nil, 400, "invalid_site_id", "site_id"},
		{"a page off the site's domain", pixelQuery("site_id", site, "url", "https://evil.example.net/a"), nil, 400, "invalid_request", "url"},
		{"props", pixelQuery("site_id", site, "url", page, "props[plan]", "pro"), nil, 400, "invalid_request", "props"},
		{"a bad event name", pixelQuery("site_id", site, "url", page, "event_name", strings.Repeat("x", 121)), nil, 400, "invalid_request", "event_name"},
		{"no url and a Referer off the domain", pixelQuery("site_id", site), []string{"Referer", "https://mail.example.net/inbox"}, 400, "invalid_request", "url"},
		{"no url and no Referer", pixelQuery("site_id", site), nil, 400, "invalid_request", "url"},
		{"the 8th load of the client", pixelQuery("site_id", site, "url", page), nil, 429, "rate_limit_exceeded", ""},
	}
	for i, r := range refusals {
		a := loadPixel(t, h, http.MethodGet, r.q, append(r.header, client1...)...)
		a.wantError(t, r.what, r.status, r.code, r.field)
		if remaining := max(6-i, 0); a.header.Get("X-RateLimit-Limit") != "7" || a.header.Get("X-RateLimit-Remaining") != strconv.Itoa(remaining) {
			t.Errorf("%s: limit %q remaining %q, want 7 and %d", r.what, a.header.Get("X-RateLimit-Limit"), a.header.Get("X-RateLimit-Remaining"), remaining)
		}
		if r.status == 429 && (a.header.Get("Retry-After") == "" || a.header.Get("Retry-After") == "0") {
			t.Errorf("%s: Retry-After %q, want a wait", r.what, a.header.Get("Retry-After"))
		}
	}
	body := `{"site_id":"` + site + `","event_name":"pageview","url":"` + page + `"}`
	if resp := postE(t, h, body, client1...); resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("/e after the client's pixels used its allowance: %d, want 429", resp.StatusCode)
	}
	loadPixel(t, h, http.MethodGet, pixelQuery("site_id", site, "url", page), "X-Forwarded-For", "198.51.100.1").wantImage(t, "another client")

	h.waitCount(1, "SELECT count() FROM events WHERE site_id = ?", site)
	if err := h.app.Ingest.FlushRefusals(ctx); err != nil {
		t.Fatal(err)
	}
	health, err := h.client(h.key).Ingestion(ctx, client.StatsParams{SiteID: site, DateFrom: "2026-11-09", DateTo: "2026-11-10", Timezone: "UTC"})
	if err != nil {
		t.Fatal(err)
	}
	if want := (api.IngestionCounts{Accepted: 1, Refused: 7}); health.Data.Totals != want {
		t.Errorf("tracking health: %+v, want %+v", health.Data.Totals, want)
	}
	byReason := map[string]int64{}
	for _, r := range health.Data.RefusedByReason {
		if r.Count != 0 {
			byReason[r.Reason] = r.Count
		}
	}
	if diff := cmp.Diff(map[string]int64{"host_mismatch": 2, "invalid_payload": 3, "rate_limited": 2}, byReason); diff != "" {
		t.Errorf("refused by reason (-want +got):\n%s", diff)
	}
}

// The site's settings show the no-JavaScript image with the site's id,
// under the script.
func TestPixelSnippetInSettings(t *testing.T) {
	h := newHarness(t)
	w := newWebUser(t, h)
	w.login(h.email)
	page := w.expect(http.MethodGet, "/sites/"+string(h.siteID)+"/settings", nil, http.StatusOK)
	want := `&lt;noscript&gt;&lt;img src=&#34;` + h.srv.URL + `/p.gif?site_id=` + string(h.siteID) +
		`&#34; alt=&#34;&#34; referrerpolicy=&#34;no-referrer-when-downgrade&#34;&gt;&lt;/noscript&gt;`
	script, pixel := strings.Index(page, `id="snippet"`), strings.Index(page, want)
	if pixel < 0 || script < 0 || pixel < script {
		t.Errorf("the settings page lacks the noscript image under the script snippet; want %s", want)
	}
}

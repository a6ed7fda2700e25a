package app_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/testenv"
	"github.com/tally-analytics/tally/internal/tracker"
)

const chromeUA = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/121.0.0.0 Safari/537.36"

// postE sends a body to /e as the tracker does (text/plain).
func postE(t *testing.T, h *harness, body string, header ...string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, h.srv.URL+"/e", strings.NewReader(body))
	req.Header.Set("Content-Type", "text/plain;charset=UTF-8")
	req.Header.Set("User-Agent", chromeUA)
	req.Header.Set("Accept-Language", "en-GB,en;q=0.9")
	for i := 0; i < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

func TestTrackerEndpoint(t *testing.T) {
	h := newHarness(t)
	site := string(h.siteID)
	// the EUR revenue below is held to the USD site's cap at the latest rate
	if err := h.app.PG.UpsertRates(context.Background(), []model.Rate{{Currency: "USD", Day: h.clock.Now(), Rate: "1.08"}}); err != nil {
		t.Fatal(err)
	}
	body := func(url string, extra string) string {
		return `{"site_id":"` + site + `","event_name":"pageview","url":"` + url + `","visitor_id":"abc"` + extra + `}`
	}
	tests := []struct {
		name   string
		body   string
		header []string
		status int
	}{
		{"pageview on the domain", body("https://example.com/a", ""), nil, 202},
		{"on a subdomain", body("https://shop.example.com/a", ""), nil, 202},
		{"with www", body("https://www.example.com/a", ""), nil, 202},
		{"custom event with props and revenue", `{"site_id":"` + site + `","event_name":"Purchase","url":"https://example.com/buy",` +
			`"props":{"plan":"pro"},"revenue":{"amount":49.99,"currency":"EUR"}}`, nil, 202},
		{"another domain", body("https://evil.net/a", ""), nil, 400},
		{"a lookalike domain", body("https://example.com.evil.net/a", ""), nil, 400},
		{"unknown site", strings.Replace(body("https://example.com/", ""), site, "nope", 1), nil, 400},
		{"no url", `{"site_id":"` + site + `","event_name":"pageview"}`, nil, 400},
		{"no event name", `{"site_id":"` + site + `","url":"https://example.com/"}`, nil, 400},
		{"not JSON", `site_id=x`, nil, 400},
		{"revenue in an unknown currency", `{"site_id":"` + site + `","event_name":"P","url":"https://example.com/","revenue":{"amount":1,"currency":"XYZ"}}`, nil, 400},
		{"revenue with too many decimals", `{"site_id":"` + site + `","event_name":"P","url":"https://example.com/","revenue":{"amount":1.5,"currency":"JPY"}}`, nil, 400},
		{"too many props", `{"site_id":"` + site + `","event_name":"P","url":"https://example.com/","props":{"a":1,"b":1,"c":1,"d":1,"e":1,"f":1,"g":1,"h":1,"i":1,"j":1,"k":1}}`, nil, 400},
		{"no user agent: counted as a bot", body("https://example.com/bot", ""), []string{"User-Agent", ""}, 202},
		{"no Accept-Language: counted as a bot", body("https://example.com/bot", ""), []string{"Accept-Language", ""}, 202},
		{"a headless browser: counted as automation", body("https://example.com/bot", ""),
			[]string{"User-Agent", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/131.0.0.0 Safari/537.36"}, 202},
		{"a Log4Shell probe: counted as other", body("https://example.com/bot", ""), []string{"User-Agent", "${jndi:ldap://x.example/a}"}, 202},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := postE(t, h, tt.body, tt.header...)
			if resp.StatusCode != tt.status {
				t.Errorf("status %d, want %d", resp.StatusCode, tt.status)
			}
			if resp.Header.Get("Access-Control-Allow-Origin") != "*" {
				t.Error("no CORS header on /e")
			}
		})
	}
	h.waitCount(4, "SELECT count() FROM events")
	if n := h.count("SELECT count() FROM events WHERE name = 'Purchase' AND revenue_amount = 4999 AND revenue_currency = 'EUR' AND has(props_keys, 'plan')"); n != 1 {
		t.Error("the revenue event is not stored with 4999 EUR cents and its props")
	}
	h.waitCount(3, "SELECT count() FROM bot_events WHERE reason = 'other'")
	h.waitCount(1, "SELECT count() FROM bot_events WHERE reason = 'automation'")
}

func TestTrackerPreflightAndScript(t *testing.T) {
	h := newHarness(t)
	req, _ := http.NewRequest(http.MethodOptions, h.srv.URL+"/e", nil)
	req.Header.Set("Origin", "https://example.com")
	req.Header.Set("Access-Control-Request-Method", "POST")
	req.Header.Set("Access-Control-Request-Headers", "content-type")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 204 || resp.Header.Get("Access-Control-Allow-Origin") != "*" ||
		!strings.Contains(resp.Header.Get("Access-Control-Allow-Methods"), "POST") ||
		!strings.Contains(strings.ToLower(resp.Header.Get("Access-Control-Allow-Headers")), "content-type") {
		t.Errorf("preflight: %d %v", resp.StatusCode, resp.Header)
	}

	resp, err = http.Get(h.srv.URL + "/js/tally.js")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != string(tracker.Script) || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/javascript") ||
		!strings.Contains(resp.Header.Get("Cache-Control"), "max-age") || resp.Header.Get("ETag") == "" {
		t.Errorf("script: %d %v", resp.StatusCode, resp.Header)
	}
	req, _ = http.NewRequest(http.MethodGet, h.srv.URL+"/js/tally.js", nil)
	req.Header.Set("If-None-Match", resp.Header.Get("ETag"))
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotModified {
		t.Errorf("revalidation: %d, want 304", resp.StatusCode)
	}
}

func TestTrackerRateLimitPerClient(t *testing.T) {
	cfg := testenv.Config(t)
	cfg.TrackerPerMinute = 3
	cfg.TrustedProxies = []string{"127.0.0.1/32"}
	h := newHarnessWith(t, cfg)
	body := `{"site_id":"` + string(h.siteID) + `","event_name":"pageview","url":"https://example.com/"}`
	for i := range 3 {
		resp := postE(t, h, body, "X-Forwarded-For", "203.0.113.7")
		if resp.StatusCode != 202 || resp.Header.Get("X-RateLimit-Limit") != "3" || resp.Header.Get("X-RateLimit-Remaining") != fmt.Sprint(2-i) {
			t.Fatalf("request %d: %d limit %q remaining %q", i+1, resp.StatusCode, resp.Header.Get("X-RateLimit-Limit"), resp.Header.Get("X-RateLimit-Remaining"))
		}
	}
	resp := postE(t, h, body, "X-Forwarded-For", "203.0.113.7")
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") == "" || resp.Header.Get("Retry-After") == "0" {
		t.Errorf("4th request: %d Retry-After %q, want 429 with a wait", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	// another client behind the same trusted proxy has its own allowance
	if resp := postE(t, h, body, "X-Forwarded-For", "198.51.100.1"); resp.StatusCode != 202 {
		t.Errorf("another client: %d", resp.StatusCode)
	}
}

// Without trusted proxies, X-Forwarded-For is ignored: a client cannot
// escape its limit by inventing addresses.
func TestTrackerIgnoresForwardedForByDefault(t *testing.T) {
	cfg := testenv.Config(t)
	cfg.TrackerPerMinute = 3
	h := newHarnessWith(t, cfg)
	body := `{"site_id":"` + string(h.siteID) + `","event_name":"pageview","url":"https://example.com/"}`
	var last int
	for i := range 4 {
		last = postE(t, h, body, "X-Forwarded-For", fmt.Sprintf("203.0.113.%d", i)).StatusCode
	}
	if last != 429 {
		t.Errorf("4th request with a made-up X-Forwarded-For: %d, want 429", last)
	}
}

// The tracking script passes on what it finds in the browser: a page's own
// session_id (not a checkout's), a long referrer, a visitor id another tool
// left in storage. None of them costs the pageview: each such pageview is
// accepted and stored, without what tally cannot use.
func TestTrackerKeepsPageviewsWithOddContext(t *testing.T) {
	h := newHarness(t)
	site := string(h.siteID)
	bodies := []string{
		`"url":"https://example.com/welcome?session_id=a+b","checkout_session_id":"a b"`,
		`"url":"https://example.com/welcome?session_id=` + strings.Repeat("x", 300) + `","checkout_session_id":"` + strings.Repeat("x", 300) + `"`,
		`"url":"https://example.com/next","referrer":"https://example.com/search?q=` + strings.Repeat("a", 2100) + `"`,
		`"url":"https://example.com/next","referrer":"not a url"`,
		`"url":"https://example.com/next","visitor_id":"` + strings.Repeat("v", 200) + `"`,
	}
	for _, b := range bodies {
		if resp := postE(t, h, `{"site_id":"`+site+`","event_name":"pageview",`+b+`}`); resp.StatusCode != http.StatusAccepted {
			t.Errorf("pageview with %.80s…: %d, want 202", b, resp.StatusCode)
		}
	}
	h.waitCount(int64(len(bodies)), "SELECT count() FROM events WHERE site_id = ?", site)
}

// A hash-routed page keeps its route, never the parameters a sign-in puts
// in the fragment (an OAuth or magic-link redirect's access token): those
// are not a route, and no token may reach ClickHouse.
func TestTrackerHashRouteKeepsNoToken(t *testing.T) {
	h := newHarness(t)
	site := string(h.siteID)
	for _, url := range []string{
		"https://example.com/callback#access_token=SECRETTOKEN1&token_type=bearer&expires_in=3600",
		"https://example.com/#/login/access_token=SECRETTOKEN2",
		"https://example.com/app#/pricing",
	} {
		body := `{"site_id":"` + site + `","event_name":"pageview","url":"` + url + `","visitor_id":"abc","hash_routes":true}`
		if resp := postE(t, h, body); resp.StatusCode != http.StatusAccepted {
			t.Fatalf("%s: status %d", url, resp.StatusCode)
		}
	}
	h.waitCount(3, "SELECT count() FROM events WHERE site_id = ?", site)
	if n := h.count("SELECT count() FROM events WHERE site_id = ? AND position(pathname, 'SECRETTOKEN') > 0", site); n != 0 {
		t.Errorf("%d events keep a token of the URL's fragment in their path", n)
	}
	for _, path := range []string{"/callback", "/#/login", "/app#/pricing"} {
		if n := h.count("SELECT count() FROM events WHERE site_id = ? AND pathname = ?", site, path); n != 1 {
			t.Errorf("%d pageviews of %s, want 1", n, path)
		}
	}
}

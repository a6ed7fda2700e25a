package app_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/tally-analytics/tally/internal/testenv"
	"github.com/tally-analytics/tally/pkg/api"
)

// The fixture: 50 visitors, each with one device, network and traffic
// source, view 20 pages a minute apart (one session each). Expected values
// are written next to each input, by reading it.
var fixtureUAs = []struct {
	ua, browser, os, device string
}{
	{"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/121.0.0.0 Safari/537.36", "Chrome", "Windows", "Desktop"},
	{"Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1 Mobile/15E148 Safari/604.1", "Safari", "iOS", "Mobile"},
	{"Mozilla/5.0 (X11; Linux x86_64; rv:121.0) Gecko/20100101 Firefox/121.0", "Firefox", "Linux", "Desktop"},
	{"Mozilla/5.0 (iPad; CPU OS 16_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/16.6 Mobile/15E148 Safari/604.1", "Safari", "iOS", "Tablet"},
	{"Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.6099.144 Mobile Safari/537.36", "Chrome", "Android", "Mobile"},
	{"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36 Edg/120.0.2210.91", "Edge", "macOS", "Desktop"},
}

var fixtureNetworks = []struct {
	prefix                            string // the visitor's address is this + its number
	country, region, regionName, city string
}{
	{"81.2.69.", "GB", "GB-ENG", "England", "London"},
	{"216.160.83.", "US", "US-WA", "Washington", "Milton"},
	{"10.0.0.", "", "", "", ""}, // private: unknown
}

var fixtureSources = []struct {
	referrer, query    string // of the landing pageview
	source, sourceType string
	campaign           string
}{
	{"https://www.google.com/search?q=analytics", "", "Google", "search", ""},
	{"https://www.facebook.com/", "", "Facebook", "social", ""},
	{"https://myblog.example.org/post/7", "", "myblog.example.org", "referral", ""},
	{"", "", "Direct / None", "direct", ""},
	{"", "?utm_source=acme-mail&utm_medium=email&utm_campaign=spring", "acme-mail", "referral", "spring"},
}

const (
	visitors          = 50
	pagesPerVisitor   = 20
	googlebotRequests = 30
)

func TestThousandPageviewsAreEnriched(t *testing.T) {
	cfg := testenv.Config(t)
	londonAndMilton(t, cfg)
	h := newHarnessWith(t, cfg)
	ctx := context.Background()
	c := h.client(h.key)
	t0 := time.Date(2026, 5, 4, 9, 0, 0, 0, time.UTC)

	for page := range pagesPerVisitor {
		h.clock.Set(t0.Add(time.Duration(page) * time.Minute))
		var wg sync.WaitGroup
		for v := range visitors {
			wg.Go(func() {
				req := fixturePageview(h, v, page)
				if _, err := c.Pageview(ctx, req); err != nil {
					t.Errorf("visitor %d page %d: %v", v, page, err)
				}
			})
		}
		wg.Wait()
	}
	for i := range googlebotRequests {
		_, err := c.Pageview(ctx, api.PageviewRequest{SiteID: string(h.siteID), URL: fmt.Sprintf("https://example.com/p/%d", i),
			UserAgent: "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", IPAddress: "66.249.66.1"})
		if err != nil {
			t.Fatal(err)
		}
	}

	h.waitCount(visitors*pagesPerVisitor, "SELECT count() FROM events")
	h.waitCount(googlebotRequests, "SELECT count() FROM bot_events WHERE site_id = ?", string(h.siteID))
	h.waitCount(visitors, "SELECT toUInt64(sum(sign)) FROM sessions")

	t.Run("events carry device, browser and OS", func(t *testing.T) {
		for i, f := range fixtureUAs {
			want := int64(countVisitors(func(v int) bool { return v%len(fixtureUAs) == i }) * pagesPerVisitor)
			got := h.count("SELECT count() FROM events WHERE browser = ? AND os = ? AND device = ?", f.browser, f.os, f.device)
			if got != want {
				t.Errorf("%s/%s/%s: %d events, want %d", f.browser, f.os, f.device, got, want)
			}
		}
	})
	t.Run("events carry the location, never the address", func(t *testing.T) {
		for i, f := range fixtureNetworks {
			want := int64(countVisitors(func(v int) bool { return v%len(fixtureNetworks) == i }) * pagesPerVisitor)
			got := h.count("SELECT count() FROM events WHERE country_code = ? AND region_code = ? AND region_name = ? AND city = ?",
				f.country, f.region, f.regionName, f.city)
			if got != want {
				t.Errorf("country %q: %d events, want %d", f.country, got, want)
			}
		}
		for _, col := range []string{"hostname", "pathname", "referrer", "city", "props_values"} {
			if n := h.count("SELECT count() FROM events WHERE position(toString(" + col + "), '81.2.69.') > 0 OR position(toString(" + col + "), '216.160.83.') > 0"); n != 0 {
				t.Errorf("an IP address is stored in events.%s", col)
			}
		}
	})
	t.Run("sources and campaigns come from the landing page", func(t *testing.T) {
		for i, f := range fixtureSources {
			wantVisitors := int64(countVisitors(func(v int) bool { return v%len(fixtureSources) == i }))
			got := h.count("SELECT count() FROM events WHERE referrer_source = ? AND source_type = ? AND utm_campaign = ?",
				f.source, f.sourceType, f.campaign)
			if got != wantVisitors*pagesPerVisitor {
				t.Errorf("%s: %d events, want %d (every pageview of the session)", f.source, got, wantVisitors*pagesPerVisitor)
			}
			sessions := h.count("SELECT toUInt64(sum(sign)) FROM sessions WHERE referrer_source = ? AND source_type = ?", f.source, f.sourceType)
			if sessions != wantVisitors {
				t.Errorf("%s: %d sessions, want %d", f.source, sessions, wantVisitors)
			}
		}
	})
	t.Run("sessions have the right pageviews, entry and exit", func(t *testing.T) {
		live := "SELECT count() FROM (SELECT session_id, entry_page, exit_page, sum(sign) AS s, sum(sign * pageviews) AS pv, " +
			"sum(sign * duration) AS d, sum(sign * is_bounce) AS b FROM sessions GROUP BY session_id, entry_page, exit_page HAVING s > 0) " +
			"WHERE entry_page = '/landing' AND exit_page = '/checkout' AND pv = ? AND d = ? AND b = 0"
		if n := h.count(live, pagesPerVisitor, (pagesPerVisitor-1)*60); n != visitors {
			t.Errorf("%d sessions with 20 pageviews from /landing to /checkout over 19 minutes, want %d", n, visitors)
		}
		if n := h.count("SELECT toUInt64(sum(sign * pageviews)) FROM sessions"); n != visitors*pagesPerVisitor {
			t.Errorf("sessions hold %d pageviews, want %d", n, visitors*pagesPerVisitor)
		}
		if n := h.count("SELECT uniqExact(session_id) FROM events"); n != visitors {
			t.Errorf("events belong to %d sessions, want %d", n, visitors)
		}
		if n := h.count("SELECT uniqExact(visitor_id) FROM events"); n != visitors {
			t.Errorf("events belong to %d visitors, want %d", n, visitors)
		}
	})
	t.Run("time on page", func(t *testing.T) {
		if n := h.count("SELECT count() FROM events WHERE prev_pathname = '/landing' AND time_on_prev = 60"); n != visitors {
			t.Errorf("%d pageviews record 60 s on /landing, want %d", n, visitors)
		}
		if n := h.count("SELECT count() FROM events WHERE prev_pathname = ''"); n != visitors {
			t.Errorf("%d pageviews without a previous page, want %d (the landings)", n, visitors)
		}
	})
	t.Run("bots only in bot_events", func(t *testing.T) {
		if n := h.count("SELECT count() FROM events WHERE pathname LIKE '/p/%' AND browser = 'Googlebot'"); n != 0 {
			t.Errorf("%d bot pageviews in events", n)
		}
	})
}

func countVisitors(match func(v int) bool) int {
	n := 0
	for v := range visitors {
		if match(v) {
			n++
		}
	}
	return n
}

// fixturePageview is visitor v's page-th pageview. Half the visitors send
// their own visitor id; the others are told apart by address and agent.
func fixturePageview(h *harness, v, page int) api.PageviewRequest {
	src := fixtureSources[v%len(fixtureSources)]
	req := api.PageviewRequest{
		SiteID:    string(h.siteID),
		UserAgent: fixtureUAs[v%len(fixtureUAs)].ua,
		IPAddress: fmt.Sprint(fixtureNetworks[v%len(fixtureNetworks)].prefix, v+1),
	}
	if v%2 == 0 {
		req.VisitorID = fmt.Sprint("visitor-", v)
	}
	switch page {
	case 0:
		req.URL, req.Referrer = "https://example.com/landing"+src.query, src.referrer
	case pagesPerVisitor - 1:
		req.URL, req.Referrer = "https://example.com/checkout", "https://example.com/cart"
	default:
		req.URL, req.Referrer = fmt.Sprintf("https://www.example.com/p/%d?ref=x", page%7), "https://example.com/landing"
	}
	return req
}

package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/netip"

	"github.com/tally-analytics/tally/pkg/api"
)

// traffic makes realistic, varied events: thousands of distinct user agents,
// paths and referrers, a pool of returning visitors (half identified by the
// sender's visitor id, half by address and user agent), a few bots, and
// custom events with props.
type traffic struct {
	r         *rand.Rand
	site      string
	uas       []string
	bots      []string
	paths     []string
	referrers []string
	visitors  int
}

func newTraffic(site string, seed uint64) *traffic {
	t := &traffic{r: rand.New(rand.NewPCG(seed, seed^0x5bd1e995)), site: site, visitors: 50_000}
	t.uas = userAgents()
	t.bots = []string{
		"Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
		"Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)",
		"Mozilla/5.0 (compatible; AhrefsBot/7.0; +http://ahrefs.com/robot/)",
		"curl/8.5.0", "python-requests/2.31.0", "Go-http-client/1.1",
	}
	sections := []string{"blog", "docs", "guides", "changelog", "pricing", "features", "customers", "careers", "help", "api"}
	t.paths = []string{"/", "/pricing", "/signup", "/login", "/about", "/contact"}
	for i := 0; len(t.paths) < 5_000; i++ {
		s := sections[i%len(sections)]
		t.paths = append(t.paths, fmt.Sprintf("/%s/%s-%d", s, words[i%len(words)], i))
	}
	hosts := []string{"www.google.com", "www.google.de", "www.bing.com", "duckduckgo.com", "t.co", "www.facebook.com",
		"l.facebook.com", "www.reddit.com", "news.ycombinator.com", "www.linkedin.com", "github.com", "dev.to",
		"medium.com", "www.producthunt.com", "search.yahoo.com", "yandex.ru", "chatgpt.com", "www.perplexity.ai"}
	for i := 0; len(t.referrers) < 2_000; i++ {
		h := hosts[i%len(hosts)]
		if i >= len(hosts)*20 {
			h = fmt.Sprintf("blog%d.example.net", i) // the long tail of small referrers
		}
		t.referrers = append(t.referrers, fmt.Sprintf("https://%s/%s/%d", h, words[i%len(words)], i))
	}
	return t
}

var words = []string{"analytics", "privacy", "golang", "clickhouse", "revenue", "dashboard", "growth", "launch",
	"tutorial", "release", "benchmark", "pricing", "startup", "design", "security", "performance"}

// userAgents are ~5,000 distinct browser user agents across browsers,
// versions, operating systems and devices.
func userAgents() []string {
	var out []string
	desktops := []string{"Windows NT 10.0; Win64; x64", "Windows NT 6.1; Win64; x64", "Macintosh; Intel Mac OS X 10_15_7",
		"Macintosh; Intel Mac OS X 13_6_1", "X11; Linux x86_64", "X11; Ubuntu; Linux x86_64", "X11; CrOS x86_64 14541.0.0"}
	for v := 90; v <= 131; v++ {
		for _, p := range desktops {
			for _, build := range []int{0, 4430, 5735, 6099} {
				out = append(out, fmt.Sprintf("Mozilla/5.0 (%s) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/%d.0.%d.%d Safari/537.36", p, v, build, v%7*13))
				out = append(out, fmt.Sprintf("Mozilla/5.0 (%s) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/%d.0.%d.%d Safari/537.36 Edg/%d.0.%d.%d", p, v, build, v%5, v, build, v%9))
			}
			out = append(out, fmt.Sprintf("Mozilla/5.0 (%s; rv:%d.0) Gecko/20100101 Firefox/%d.0", p, v, v))
		}
	}
	phones := []string{"SM-S918B", "SM-A546B", "Pixel 7", "Pixel 8 Pro", "M2101K6G", "CPH2451", "moto g(60)", "SM-G991B", "2201116SG", "RMX3371"}
	for v := 100; v <= 131; v++ {
		for _, android := range []int{10, 11, 12, 13, 14} {
			for _, m := range phones {
				out = append(out, fmt.Sprintf("Mozilla/5.0 (Linux; Android %d; %s) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/%d.0.0.0 Mobile Safari/537.36", android, m, v))
			}
		}
	}
	for major := 14; major <= 18; major++ {
		for minor := 0; minor <= 7; minor++ {
			for _, dev := range []string{"iPhone; CPU iPhone OS", "iPad; CPU OS"} {
				out = append(out, fmt.Sprintf("Mozilla/5.0 (%s %d_%d like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/%d.%d Mobile/15E148 Safari/604.1", dev, major, minor, major, minor))
				out = append(out, fmt.Sprintf("Mozilla/5.0 (%s %d_%d like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/%d.0.0.0 Mobile/15E148 Safari/604.1", dev, major, minor, 100+major*2+minor))
			}
			out = append(out, fmt.Sprintf("Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/%d.%d Safari/605.1.15", major, minor))
		}
	}
	return out
}

// zipf picks an index in [0, n) with a popularity skew, like real traffic.
func (t *traffic) zipf(n int) int {
	x := t.r.ExpFloat64() * float64(n) / 8
	return int(x) % n
}

// event is one realistic event (a pageview, or one custom event in ten).
func (t *traffic) event() api.CustomEventRequest {
	r := t.r
	ev := api.CustomEventRequest{PageviewRequest: api.PageviewRequest{SiteID: t.site}}
	path := t.paths[t.zipf(len(t.paths))]
	ev.URL = "https://bench.example.com" + path
	switch x := r.IntN(100); {
	case x < 8:
		ev.URL += "?utm_source=newsletter&utm_medium=email&utm_campaign=" + words[r.IntN(len(words))]
	case x < 10:
		ev.URL += "?utm_source=google&utm_medium=cpc&utm_campaign=brand&utm_content=ad" + fmt.Sprint(r.IntN(20))
	}
	if r.IntN(100) < 55 {
		ev.Referrer = t.referrers[t.zipf(len(t.referrers))]
	}
	v := t.zipf(t.visitors)
	if r.IntN(100) < 2 {
		ev.UserAgent = t.bots[r.IntN(len(t.bots))]
	} else {
		ev.UserAgent = t.uas[v%len(t.uas)] // a visitor keeps a browser
	}
	if v%2 == 0 {
		ev.VisitorID = fmt.Sprintf("v-%08x", v)
	}
	ev.IPAddress = visitorAddr(v)
	if r.IntN(10) == 0 {
		ev.EventName = []string{"signup", "download", "purchase", "newsletter_subscribe"}[r.IntN(4)]
		ev.Props = map[string]any{"plan": []string{"free", "pro", "team"}[r.IntN(3)], "step": r.IntN(5)}
	}
	return ev
}

// visitorAddr is a stable, public-looking address for visitor v, spread over
// the address space so that the geo lookups are varied.
func visitorAddr(v int) string {
	h := uint32(v)*2654435761 + 0x01000000
	b := [4]byte{byte(h >> 24), byte(h >> 16), byte(h >> 8), byte(h)}
	switch b[0] {
	case 0, 10, 100, 127, 169, 172, 192, 198, 203, 224, 240, 255:
		b[0] = 81 // stay out of private, reserved and documentation ranges
	}
	return netip.AddrFrom4(b).String()
}

// pageviewBodies encodes n events as single-event bodies (pageviews only:
// they go to POST /api/v1/events/pageview).
func (t *traffic) pageviewBodies(n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		ev := t.event()
		b, err := json.Marshal(ev.PageviewRequest)
		if err != nil {
			panic(err) // plain strings always encode
		}
		out[i] = b
	}
	return out
}

// warmupBodies are one pageview per distinct user agent (browsers and
// bots), so that the server's user-agent cache is as warm as a long-running
// server's would be before the measurement starts.
func (t *traffic) warmupBodies() [][]byte {
	var out [][]byte
	for i, ua := range append(append([]string(nil), t.uas...), t.bots...) {
		b, err := json.Marshal(api.PageviewRequest{SiteID: t.site, URL: "https://bench.example.com/warmup",
			UserAgent: ua, IPAddress: visitorAddr(i)})
		if err != nil {
			panic(err)
		}
		out = append(out, b)
	}
	return out
}

// batchBodies encodes n batches of size events each.
func (t *traffic) batchBodies(n, size int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		req := api.BatchRequest{Events: make([]api.CustomEventRequest, size)}
		for j := range req.Events {
			req.Events[j] = t.event()
		}
		b, err := json.Marshal(req)
		if err != nil {
			panic(err)
		}
		out[i] = b
	}
	return out
}

package useragent

import (
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Building a Parser compiles uap-core's regexps; the tests share one.
var testParser = sync.OnceValue(func() *Parser {
	p, err := New(0)
	if err != nil {
		panic(err)
	}
	return p
})

const chromeWindows = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36"

func TestParse(t *testing.T) {
	desktop := func(browser, bv, os, osv string) Info {
		return Info{Browser: browser, BrowserVersion: bv, OS: os, OSVersion: osv, Device: Desktop}
	}
	mobile := func(browser, bv, os, osv string) Info {
		return Info{Browser: browser, BrowserVersion: bv, OS: os, OSVersion: osv, Device: Mobile}
	}
	tablet := func(browser, bv, os, osv string) Info {
		return Info{Browser: browser, BrowserVersion: bv, OS: os, OSVersion: osv, Device: Tablet}
	}
	bot := func(browser, bv, category string) Info {
		return Info{Browser: browser, BrowserVersion: bv, Bot: true, BotCategory: category}
	}
	tests := []struct {
		name string
		ua   string
		want Info
	}{
		{"chrome windows", chromeWindows, desktop("Chrome", "120.0", "Windows", "10")},
		{"safari macos", "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1 Safari/605.1.15",
			desktop("Safari", "17.1", "macOS", "10.15")},
		{"safari macos unfrozen version", "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_2) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.2 Safari/605.1.15",
			desktop("Safari", "17.2", "macOS", "14.2")},
		{"iphone safari", "Mozilla/5.0 (iPhone; CPU iPhone OS 17_1_2 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1.2 Mobile/15E148 Safari/604.1",
			mobile("Safari", "17.1", "iOS", "17.1")},
		{"iphone chrome", "Mozilla/5.0 (iPhone; CPU iPhone OS 17_2 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/120.0.6099.119 Mobile/15E148 Safari/604.1",
			mobile("Chrome", "120.0", "iOS", "17.2")},
		{"iphone firefox", "Mozilla/5.0 (iPhone; CPU iPhone OS 17_2 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) FxiOS/121.0 Mobile/15E148 Safari/605.1.15",
			mobile("Firefox", "121.0", "iOS", "17.2")},
		{"iphone in-app webview", "Mozilla/5.0 (iPhone; CPU iPhone OS 17_2 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148",
			mobile("Safari", "", "iOS", "17.2")},
		{"ipad safari", "Mozilla/5.0 (iPad; CPU OS 16_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/16.6 Mobile/15E148 Safari/604.1",
			tablet("Safari", "16.6", "iOS", "16.6")},
		{"android chrome reduced ua", "Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Mobile Safari/537.36",
			mobile("Chrome", "120.0", "Android", "10")},
		{"android pixel chrome", "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/119.0.6045.163 Mobile Safari/537.36",
			mobile("Chrome", "119.0", "Android", "14")},
		{"android webview", "Mozilla/5.0 (Linux; Android 13; SM-G991B Build/TP1A.220624.014; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/120.0.6099.144 Mobile Safari/537.36",
			mobile("Chrome", "120.0", "Android", "13")},
		{"android tablet chrome", "Mozilla/5.0 (Linux; Android 13; SM-X700) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36",
			tablet("Chrome", "120.0", "Android", "13")},
		{"kindle silk", "Mozilla/5.0 (Linux; Android 9; KFTRWI) AppleWebKit/537.36 (KHTML, like Gecko) Silk/119.3.1 like Chrome/119.0.6045.193 Safari/537.36",
			tablet("Amazon Silk", "119.3", "Android", "9")},
		{"samsung internet", "Mozilla/5.0 (Linux; Android 13; SAMSUNG SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/23.0 Chrome/115.0.0.0 Mobile Safari/537.36",
			mobile("Samsung Internet", "23.0", "Android", "13")},
		{"firefox android phone", "Mozilla/5.0 (Android 14; Mobile; rv:121.0) Gecko/121.0 Firefox/121.0",
			mobile("Firefox", "121.0", "Android", "14")},
		{"firefox android tablet", "Mozilla/5.0 (Android 14; Tablet; rv:121.0) Gecko/121.0 Firefox/121.0",
			tablet("Firefox", "121.0", "Android", "14")},
		{"firefox linux", "Mozilla/5.0 (X11; Linux x86_64; rv:121.0) Gecko/20100101 Firefox/121.0",
			desktop("Firefox", "121.0", "Linux", "")},
		{"firefox windows", "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:121.0) Gecko/20100101 Firefox/121.0",
			desktop("Firefox", "121.0", "Windows", "10")},
		{"edge windows", chromeWindows + " Edg/120.0.2210.91", desktop("Edge", "120.0", "Windows", "10")},
		{"edge android", "Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Mobile Safari/537.36 EdgA/120.0.2210.115",
			mobile("Edge", "120.0", "Android", "10")},
		{"opera windows", "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/119.0.0.0 Safari/537.36 OPR/105.0.0.0",
			desktop("Opera", "105.0", "Windows", "10")},
		{"opera mobile", "Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/119.0.0.0 Mobile Safari/537.36 OPR/79.2.4195.76754",
			mobile("Opera", "79.2", "Android", "10")},
		{"chromebook", "Mozilla/5.0 (X11; CrOS x86_64 14541.0.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36",
			desktop("Chrome", "120.0", "ChromeOS", "14541.0")},
		{"ie8 with tablet pc marker", "Mozilla/4.0 (compatible; MSIE 8.0; Windows NT 6.1; Trident/4.0; SLCC2; .NET CLR 2.0.50727; Media Center PC 6.0; Tablet PC 2.0)",
			desktop("IE", "8.0", "Windows", "7")},
		{"googlebot", "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", bot("Googlebot", "2.1", Crawler)},
		{"googlebot smartphone", "Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.6099.71 Mobile Safari/537.36 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
			Info{Browser: "Googlebot", BrowserVersion: "2.1", OS: "Android", OSVersion: "6.0", Device: Mobile, Bot: true, BotCategory: Crawler}},
		{"bingbot", "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)", bot("bingbot", "2.0", Crawler)},
		{"ahrefsbot", "Mozilla/5.0 (compatible; AhrefsBot/7.0; +http://ahrefs.com/robot/)", bot("AhrefsBot", "7.0", Crawler)},
		{"gptbot", "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.0; +https://openai.com/gptbot)", bot("GPTBot", "1.0", AIAgent)},
		{"curl", "curl/8.5.0", bot("curl", "8.5", OtherBot)},
		{"python requests", "python-requests/2.31.0", bot("Python Requests", "2.31", OtherBot)},
		{"headless chrome", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/120.0.6099.28 Safari/537.36",
			Info{Browser: "HeadlessChrome", BrowserVersion: "120.0", OS: "Linux", Device: Desktop, Bot: true, BotCategory: Automation}},
		// No crawler list names WinHTTP; isbot's patterns of a bare product token do.
		{"library without a list entry", "WinHTTP", Info{Browser: "WinHTTP", Bot: true, BotCategory: OtherBot}},
		{"roku", "Roku/DVP-9.10 (519.10E04111A)", Info{Browser: "Roku", BrowserVersion: "9.10", OS: "Roku", OSVersion: "9.10", Device: TV}},
		{"fire tv", "Mozilla/5.0 (Linux; Android 9; AFTMM Build/PS7233; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/112.0.5615.136 Mobile Safari/537.36",
			Info{Browser: "Chrome", BrowserVersion: "112.0", OS: "Android", OSVersion: "9", Device: TV}},
		{"xbox", "Mozilla/5.0 (Windows NT 10.0; Win64; x64; Xbox; Xbox One) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36 Edge/44.18363.8131",
			Info{Browser: "Edge", BrowserVersion: "44.18363", OS: "Windows", OSVersion: "10", Device: Console}},
		{"android chromebook", "Mozilla/5.0 (Linux; Android 9; HP Chromebook 13 G1) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/80.0.3987.162 Safari/537.36",
			Info{Browser: "Chrome", BrowserVersion: "80.0", OS: "Android", OSVersion: "9", Device: Desktop}},
		{"android tablet saying Mobile", "Mozilla/5.0 (Linux; Android 11; SM-T505) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Mobile Safari/537.36",
			tablet("Chrome", "120.0", "Android", "11")},
		{"long ua truncated", chromeWindows + strings.Repeat(" Ext/1.0", 80), desktop("Chrome", "120.0", "Windows", "10")},
		{"surrounding space", "  " + chromeWindows + "\t", desktop("Chrome", "120.0", "Windows", "10")},
		// No browser sends words alone.
		{"garbage", "asdf qwerty 123", Info{Bot: true, BotCategory: OtherBot}},
		{"empty", "", Info{}},
		{"blank", "   ", Info{}},
	}
	p := testParser()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, p.Parse(tt.ua)); diff != "" {
				t.Errorf("Parse(%q) mismatch (-want +got):\n%s", tt.ua, diff)
			}
		})
	}
}

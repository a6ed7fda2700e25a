package useragent

import (
	"encoding/json"
	"os"
	"regexp"
	"testing"

	"gopkg.in/yaml.v3"
)

// crawlerInstances are the real user agents crawler-user-agents records for
// its patterns (data/crawler-user-agents, MIT).
func crawlerInstances(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile("data/crawler-user-agents/crawler-user-agents.json")
	if err != nil {
		t.Fatal(err)
	}
	var list []struct {
		Instances []string `json:"instances"`
	}
	if err := json.Unmarshal(data, &list); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range list {
		out = append(out, p.Instances...)
	}
	return out
}

// matomoCase is a fixture of Matomo's device-detector (testdata/matomo,
// LGPL-3.0, test data only).
type matomoCase struct {
	UA  string `yaml:"user_agent"`
	Bot struct {
		Category string `yaml:"category"`
	} `yaml:"bot"`
	Client struct {
		Type string `yaml:"type"`
	} `yaml:"client"`
	Device struct {
		Type string `yaml:"type"`
	} `yaml:"device"`
}

func matomo(t *testing.T, name string) []matomoCase {
	t.Helper()
	data, err := os.ReadFile("testdata/matomo/" + name)
	if err != nil {
		t.Fatal(err)
	}
	var cases []matomoCase
	if err := yaml.Unmarshal(data, &cases); err != nil {
		t.Fatal(err)
	}
	return cases
}

// counted runs p over uas and says how many it counts as bots, with examples
// of the others (or of the bots, when bots is false).
func counted(p *Parser, uas []string, bots bool) (int, []string) {
	n, examples := 0, []string(nil)
	for _, ua := range uas {
		if p.parse(clean(ua)).Bot == bots {
			if bots {
				n++
			}
			continue
		}
		if !bots {
			n++
		}
		if len(examples) < 20 {
			examples = append(examples, ua)
		}
	}
	return n, examples
}

// jsonList reads a JSON array of strings from testdata.
func jsonList(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// notBrowsing are what browser corpora call browsers and tally counts as
// bots by design: headless browsers drive automation, and Google Web
// Preview is Google's renderer of search previews.
var notBrowsing = regexp.MustCompile(`Headless|Google Web Preview`)

// browsing drops from a browser corpus what notBrowsing names.
func browsing(uas []string) []string {
	var out []string
	for _, ua := range uas {
		if !notBrowsing.MatchString(ua) {
			out = append(out, ua)
		}
	}
	return out
}

// Bots are filtered as two public corpora of real bot user agents say, and
// real browsers (three corpora, thousands of user agents) are not.
func TestBotCorpora(t *testing.T) {
	t.Parallel()
	p, err := New(0)
	if err != nil {
		t.Fatal(err)
	}
	var matomoBots, matomoDevices, matomoCatalogue, uapBrowsers []string
	for _, c := range matomo(t, "bots.yml") {
		matomoBots = append(matomoBots, c.UA)
	}
	for _, file := range []string{"desktop.yml", "smartphone.yml", "tablet.yml", "browser.yml"} {
		for _, c := range matomo(t, file) {
			switch {
			case c.Client.Type != "browser":
			case file == "browser.yml":
				matomoCatalogue = append(matomoCatalogue, c.UA)
			default:
				matomoDevices = append(matomoDevices, c.UA)
			}
		}
	}
	for _, c := range uapFixtures(t, "test_ua.yaml") {
		if mainstreamBrowsers[browserName(c.Family)] {
			uapBrowsers = append(uapBrowsers, c.UA)
		}
	}
	// Real browsers: three corpora, counted together.
	var browsers, examples []string
	bots := 0
	for _, c := range []struct {
		name string
		uas  []string
	}{
		{"user-agents (real traffic)", jsonList(t, "testdata/user-agents/user-agents.json")},
		{"Matomo device-detector device fixtures", browsing(matomoDevices)},
		{"uap-core mainstream browsers, top-user-agents", browsing(append(uapBrowsers, jsonList(t, "testdata/top-user-agents/top-user-agents.json")...))},
	} {
		n, ex := counted(p, c.uas, false)
		t.Logf("%s: %d browsers, %d (%.2f %%) counted as bots", c.name, len(c.uas), n, percent(n, len(c.uas)))
		browsers, bots, examples = append(browsers, c.uas...), bots+n, append(examples, ex...)
	}
	if got := percent(bots, len(browsers)); got > 0.1 {
		t.Errorf("%.2f %% of %d real browsers counted as bots, want ≤ 0.1 %%; for example:\n%s", got, len(browsers), join(examples))
	}
	for _, tc := range []struct {
		name  string
		uas   []string
		bots  bool
		limit float64 // share counted as bots, in %: at least (bots) or at most
	}{
		{"crawler-user-agents instances", crawlerInstances(t), true, 99},
		{"Matomo device-detector bot fixtures", matomoBots, true, 95},
		// The catalogue of every client Matomo names, down to text browsers,
		// WAP browsers and 1990s releases that cannot run the tracker: a
		// guard against regressions, not a measure of real traffic.
		{"Matomo device-detector browser catalogue", browsing(matomoCatalogue), false, 5},
	} {
		n, examples := counted(p, tc.uas, tc.bots)
		got := percent(n, len(tc.uas))
		t.Logf("%s: %d user agents, %d (%.2f %%) counted as bots", tc.name, len(tc.uas), n, got)
		if tc.bots && got < tc.limit {
			t.Errorf("%s: %.2f %% filtered, want ≥ %.0f %%; missed, for example:\n%s", tc.name, got, tc.limit, join(examples))
		}
		if !tc.bots && got > tc.limit {
			t.Errorf("%s: %.2f %% counted as bots, want ≤ %.1f %%; for example:\n%s", tc.name, got, tc.limit, join(examples))
		}
	}
}

func percent(n, of int) float64 { return float64(n) / float64(of) * 100 }

// mainstreamBrowsers are the browser families (as the dashboard names them)
// whose uap-core fixtures count as people browsing; the fixtures also hold
// crawlers, libraries and apps.
var mainstreamBrowsers = map[string]bool{
	"Chrome": true, "Firefox": true, "Safari": true, "Edge": true, "Opera": true, "Samsung Internet": true,
	"UC Browser": true, "Yandex Browser": true, "Brave": true, "Vivaldi": true, "Silk": true, "IE": true,
	"Opera GX": true, "Opera Touch": true, "Opera Mini": true, "DuckDuckGo Mobile": true, "Whale": true,
	"MiuiBrowser": true, "Huawei Browser": true, "QQ Browser": true, "Chromium": true, "Edge Mobile": true,
}

package useragent

import (
	"slices"
	"strings"
	"testing"

	"github.com/ua-parser/uap-go/uaparser"
	"gopkg.in/yaml.v3"
)

func TestRequired(t *testing.T) {
	for _, c := range []struct {
		expr string
		want [][]string
	}{
		{`Googlebot\/`, [][]string{{"googlebot/"}}},
		{`(?i)Bing(?:bot|Preview)`, [][]string{{"bing"}, {"bot", "preview"}}},
		{`^Mozilla.*(?:Chrome|CriOS)/(\d+)`, [][]string{{"mozilla"}, {"c"}, {"hrome", "rios"}, {"/"}}}, // Go's parser factors out "C"
		{`(?:^|[^g])news(?!sapphire)`, [][]string{{"news"}}},                                           // look-ahead left out
		{`(?<! channel/|google/)google(?!(?:wv|app))`, [][]string{{"google"}}},                         // look-behind too
		{`[a-z]+bot`, [][]string{{"bot"}}},                                                             // a class holds no word
		{`(?:foo|[0-9]+)bar`, [][]string{{"bar"}}},                                                     // one side of the alternation has none
		{`(?:(?:Acer|ACER) \d|Iconia)(?: Build|\) AppleWebKit)`, [][]string{{"cer", "cer", "iconia"}, {" build", ") applewebkit"}}},
		{`(?:x|yz)`, [][]string{{"x", "yz"}}}, // a one-byte word
		{`(?:x|y)`, nil},                      // a class
		{`\d+\.\d+`, [][]string{{"."}}},
		{`\d+`, nil},    // no word: always run
		{`a{0,3}`, nil}, // may be absent
		{`(`, nil},      // not Go syntax: always run
		{`tab[_ \d;)-]`, [][]string{{"tab"}}},
	} {
		if got := required(c.expr); !slices.EqualFunc(got, c.want, slices.Equal) {
			t.Errorf("required(%q) = %q, want %q", c.expr, got, c.want)
		}
	}
}

func TestWordsFind(t *testing.T) {
	var x words
	either := x.add([][]string{{"bot", "b"}})
	both := x.add([][]string{{"bot"}, {"crawler"}})
	if both[0][0] != either[0][0] {
		t.Fatalf("a word added twice has two ids: %v and %v", either, both)
	}
	found := x.find("mozilla/5.0 (compatible; somecrawler)")
	bot, b, crawler := either[0][0], either[0][1], both[1][0]
	if found[bot] || !found[b] || !found[crawler] {
		t.Errorf("found %v for bot, b, crawler; want false, true, true", found)
	}
	if !holds(found, either) || holds(found, both) || !holds(found, nil) {
		t.Error("holds: want true for bot or b, false for bot and crawler, true for no clause")
	}
	if found := x.find("b"); !found[b] || found[bot] {
		t.Errorf("a one-byte header: found %v", found)
	}
}

// The words only skip rules that cannot match: on every user agent of the
// corpora, the answers are those of every rule run in turn — uap-go's own
// Parse for browser, OS and device, and each bot list and marker unfiltered.
func TestPrefilterChangesNoAnswer(t *testing.T) {
	t.Parallel()
	p, err := New(0)
	if err != nil {
		t.Fatal(err)
	}
	var def uaparser.RegexDefinitions
	if err := yaml.Unmarshal(uapRegexes, &def); err != nil {
		t.Fatal(err)
	}
	ref, err := uaparser.New(uaparser.WithRegexDefinitions(def))
	if err != nil {
		t.Fatal(err)
	}
	uas := crawlerInstances(t)
	for _, file := range []string{"bots.yml", "browser.yml", "console.yml", "desktop.yml", "smartphone.yml", "tablet.yml", "tv.yml"} {
		for _, c := range matomo(t, file) {
			uas = append(uas, c.UA)
		}
	}
	for _, file := range []string{"test_ua.yaml", "test_os.yaml"} {
		for _, c := range uapFixtures(t, file) {
			uas = append(uas, c.UA)
		}
	}
	uas = append(uas, jsonList(t, "testdata/user-agents/user-agents.json")...)
	uas = append(uas, jsonList(t, "testdata/top-user-agents/top-user-agents.json")...)
	if len(uas) < 10_000 {
		t.Fatalf("only %d user agents", len(uas))
	}
	markers := map[string]filtered{"console": consoleMarkers, "tv": tvMarkers, "laptop": laptopMarkers,
		"tablet": tabletMarkers, "desktop": desktopPlatform, "browser tokens": browserTokens, "crawlish": crawlish}
	differ := 0
	for _, raw := range uas {
		ua := clean(raw)
		lower := strings.ToLower(ua)
		found := p.words.find(lower)
		agent, os, dvc := p.uap.parse(ua, found)
		want := ref.Parse(ua)
		if agent != *want.UserAgent || os != *want.Os || dvc != *want.Device {
			differ++
			t.Errorf("%s:\n got %+v %+v %+v\nwant %+v %+v %+v", ua, agent, os, dvc, *want.UserAgent, *want.Os, *want.Device)
		}
		if got, want := p.bots.category(ua, lower, found), unfilteredCategory(p.bots, ua); got != want {
			differ++
			t.Errorf("%s: bot category %q, every rule in turn says %q", ua, got, want)
		}
		for name, m := range markers {
			if got, want := m.match(ua, lower), m.re.MatchString(ua); got != want {
				differ++
				t.Errorf("%s: %s markers match %v, the regexp alone %v", ua, name, got, want)
			}
		}
		if differ > 20 {
			t.Fatal("too many differences")
		}
	}
}

// unfilteredCategory is botRules.category with every rule run.
func unfilteredCategory(r *botRules, ua string) string {
	for _, rule := range r.markers {
		if rule.re.MatchString(ua) {
			return rule.category
		}
	}
	if browserTokens.re.MatchString(ua) {
		return ""
	}
	for _, rule := range r.listed {
		if rule.re.MatchString(ua) {
			return rule.category
		}
	}
	for _, p := range r.patterns {
		if ok, err := p.re.MatchString(ua); err == nil && ok {
			if crawlish.re.MatchString(ua) {
				return Crawler
			}
			return OtherBot
		}
	}
	return ""
}

// Headers beyond ASCII fold as case-insensitive regexps match them: "ſ"
// matches (?i)s and the Kelvin sign (?i)k, so the words must not skip them.
func TestPrefilterFoldsLikeRegexps(t *testing.T) {
	// İ folds with nothing; Σ, σ and ς fold together, least Σ
	if got, want := fold("Mozilla ſ \u212A İ Σς"), "mozilla s k İ ΣΣ"; got != want {
		t.Errorf("fold = %q, want %q", got, want)
	}
	p, err := New(0)
	if err != nil {
		t.Fatal(err)
	}
	for _, ua := range []string{
		"Mozilla/5.0 (x) UNION ſELECT 1",                   // an exploit probe (?i)union\s+select
		"Mozilla/5.0 (Linux; Android 9; \u212Aindle Fire)", // (?i)kindle: a tablet
		"Mozilla/5.0 (compatible; ſpider/1.0)",
	} {
		lower := fold(ua)
		found := p.words.find(lower)
		if got, want := p.bots.category(ua, lower, found), unfilteredCategory(p.bots, ua); got != want {
			t.Errorf("%s: bot category %q, every rule in turn says %q", ua, got, want)
		}
		if got, want := tabletMarkers.match(ua, lower), tabletMarkers.re.MatchString(ua); got != want {
			t.Errorf("%s: tablet markers %v, the regexp alone %v", ua, got, want)
		}
	}
	if c := unfilteredCategory(p.bots, "Mozilla/5.0 (x) UNION ſELECT 1"); c != OtherBot {
		t.Errorf("the probe with a long s: %q, want %q (the case the words must not skip)", c, OtherBot)
	}
	if !tabletMarkers.re.MatchString("Mozilla/5.0 (Linux; Android 9; \u212Aindle Fire)") {
		t.Error("(?i)kindle does not match the Kelvin sign: the case is not tested")
	}
}

// Package useragent turns User-Agent headers into the browser, OS and device
// an analytics dashboard shows, and flags bots.
//
// A new header meets some 3,000 regexps (uap-core's rules and the bot
// lists). Each runs only when the header holds the words its matches must
// contain (prefilter.go), which brings a new header from about 4 ms to about
// 0.1 ms; and a Parser keeps the final Info of recently seen headers in an LRU
// cache, since real traffic repeats a small set of headers.
package useragent

import (
	_ "embed"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/maypok86/otter/v2"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/ua-parser/uap-go/uaparser"
	"gopkg.in/yaml.v3"
)

// uapRegexes are uap-core's rules at the commit data/uap-core/README.md
// names (scripts/vendor-uap-core.sh refreshes them): newer than the copy
// uap-go embeds, which lags uap-core by months of browsers.
//
//go:embed data/uap-core/regexes.yaml
var uapRegexes []byte

// DefaultCacheSize is the number of parsed headers a Parser keeps when New is
// given a size of zero or less.
const DefaultCacheSize = 30_000

// MaxLength is the number of bytes of a User-Agent header that are parsed and
// used as the cache key; longer headers are cut at a UTF-8 boundary first, so
// padded headers cannot blow up parse time or cache memory.
const MaxLength = 512

// Device classes reported in Info.Device (model's).
const (
	Desktop = model.DeviceDesktop
	Mobile  = model.DeviceMobile
	Tablet  = model.DeviceTablet
	TV      = model.DeviceTV
	Console = model.DeviceConsole
)

// Info is what tally stores about a User-Agent. Empty strings mean unknown.
type Info struct {
	Browser        string // dashboard family, e.g. "Chrome", "Safari", "Samsung Internet"
	BrowserVersion string // major.minor, e.g. "120.0"
	OS             string // e.g. "Windows", "macOS", "iOS", "Android", "Linux"
	OSVersion      string // major[.minor], e.g. "10", "17.1"
	Device         string // Desktop, Mobile, Tablet, TV or Console
	Bot            bool
	BotCategory    string // Crawler, AIAgent, Monitor, Automation or OtherBot when Bot
}

// Parser parses User-Agent headers. It is safe for concurrent use; one Parser
// per process is enough, since building it compiles hundreds of regexps.
type Parser struct {
	words *words // every rule's words
	uap   *uapRules
	bots  *botRules
	cache *otter.Cache[string, Info] // reads take no lock
}

// New builds a Parser whose cache holds cacheSize parsed headers
// (DefaultCacheSize when cacheSize <= 0).
func New(cacheSize int) (*Parser, error) {
	if cacheSize <= 0 {
		cacheSize = DefaultCacheSize
	}
	// uap-go keeps its own small ARC cache per field; it cannot be turned off
	// (WithCacheSize(0) panics), so it stays at its default behind ours.
	var def uaparser.RegexDefinitions
	if err := yaml.Unmarshal(uapRegexes, &def); err != nil {
		return nil, fmt.Errorf("useragent: read the uap-core rules: %w", err)
	}
	uap, err := uaparser.New(uaparser.WithRegexDefinitions(def))
	if err != nil {
		return nil, fmt.Errorf("useragent: load uap definitions: %w", err)
	}
	x := &words{}
	bots, err := newBotRules(x)
	if err != nil {
		return nil, err
	}
	cache, err := otter.New(&otter.Options[string, Info]{MaximumSize: cacheSize})
	if err != nil {
		return nil, fmt.Errorf("useragent: create cache: %w", err)
	}
	return &Parser{words: x, uap: newUAPRules(uap, x), bots: bots, cache: cache}, nil
}

// Parse returns the Info for a User-Agent header. An empty header gives the
// zero Info, which is not a bot: the caller decides how to treat it.
func (p *Parser) Parse(ua string) Info {
	ua = clean(ua)
	if ua == "" {
		return Info{}
	}
	if info, ok := p.cache.GetIfPresent(ua); ok {
		return info
	}
	info := p.parse(ua)
	// Clone so the cache never pins the caller's (possibly much longer) header.
	p.cache.Set(strings.Clone(ua), info)
	return info
}

func (p *Parser) parse(ua string) Info {
	lower := fold(ua)
	found := p.words.find(lower)
	agent, os, dvc := p.uap.parse(ua, found)
	info := Info{
		Browser:        browserName(agent.Family),
		BrowserVersion: version(agent.Major, agent.Minor),
		OS:             osName(os.Family),
		OSVersion:      version(os.Major, os.Minor),
	}
	if info.Browser == "" {
		info.BrowserVersion = ""
	}
	if info.OS == "" {
		info.OSVersion = ""
	}
	info.Device = device(ua, lower, info.OS, dvc.Family)
	info.BotCategory = p.bots.category(ua, lower, found)
	info.Bot = info.BotCategory != ""
	return info
}

// clean trims a header and cuts it to MaxLength. A header with no space
// but words joined by "+" is a form-encoded copy (from a log file, through
// the Events API): its spaces come back, so it parses as what it names.
func clean(ua string) string {
	ua = strings.TrimSpace(ua)
	if !strings.Contains(ua, " ") && strings.Contains(ua, "+(") {
		ua = strings.ReplaceAll(ua, "+", " ")
	}
	return truncate(ua, MaxLength)
}

// truncate cuts s to at most n bytes without splitting a UTF-8 sequence.
// Bytes that are not valid UTF-8 anyway are cut at n.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for cut := n; cut > n-utf8.UTFMax && cut > 0; cut-- {
		if utf8.RuneStart(s[cut]) {
			return s[:cut]
		}
	}
	return s[:n]
}

// version joins major and minor as "major.minor", or "major" alone when the
// minor part is missing.
func version(major, minor string) string {
	switch {
	case major == "":
		return ""
	case minor == "":
		return major
	default:
		return major + "." + minor
	}
}

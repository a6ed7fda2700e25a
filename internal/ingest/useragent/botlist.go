package useragent

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"regexp"
	"time"

	"github.com/dlclark/regexp2"
	"github.com/tally-analytics/tally/internal/model"
)

// crawlerList is crawler-user-agents (MIT, data/crawler-user-agents/):
// patterns of bots' user agents, tagged by kind.
//
//go:embed data/crawler-user-agents/crawler-user-agents.json
var crawlerList []byte

// isbotPatterns is isbot's pattern list (Unlicense, data/isbot/): broad
// patterns, tuned by its maintainers against browser fixtures, that catch the
// long tail of libraries and tools no crawler list names. Some use
// look-around, which Go's regexp lacks, so regexp2 compiles them.
//
//go:embed data/isbot/patterns.json
var isbotPatterns []byte

// scripts/vendor-bots.sh refreshes both lists.

// Bot categories (model's, as reports group them).
const (
	Crawler    = model.BotCrawler
	AIAgent    = model.BotAIAgent
	Monitor    = model.BotMonitor
	Automation = model.BotAutomation
	OtherBot   = model.BotOther
)

// markers are what the lists miss or file under a wrong kind, by category:
// AI fetchers newer than the lists, automation and monitors, and exploit
// probes sent as user agents. They are checked first.
var markers = map[string][]string{
	AIAgent: {`Google-Extended`, `anthropic-ai`, `Claude-(?:User|SearchBot|Web)`, `ClaudeBot`, `meta-external(?:agent|fetcher)`,
		`Perplexity(?:Bot|-User)`, `Google-NotebookLM`, `ChatGPT-User`, `OAI-SearchBot`, `GPTBot`, `MistralAI-User`,
		`DuckAssistBot`, `cohere-(?:ai|training)`, `YouBot`, `Applebot-Extended`, `Bytespider`, `PetalBot`, `Amazonbot`,
		`Amzn-User`, `Novellum`, `ImagesiftBot`, `Timpibot`, `Kangaroo Bot`, `PanguBot`, `AI2Bot`, `Diffbot`,
		`FirecrawlAgent`, `Manus-User`, `Gemini-Deep-Research`, `Devin`, `amazon-kendra`},
	Automation: {`Headless`, `PhantomJS`, `Selenium`, `[Pp]laywright`, `[Pp]uppeteer`, `[Ww]eb[Dd]river`, `Cypress`,
		`SlimerJS`, `Electron/.* HappyDOM`, `jsdom/`, `Lightpanda`},
	Monitor: {`NewRelicSynthetics`, `Pingdom`, `UptimeRobot`, `StatusCake`, `Site24x7`, `Datadog`, `Better ?Uptime`,
		`Checkly`, `GTmetrix`, `Lighthouse`, `PTST/`, `Uptime-Kuma`, `Zabbix`, `Nagios`, `monitoring`,
		`Health ?Check`, `collectd/`, `munin/`},
	OtherBot: {`Amazon CloudFront`, `\$\{jndi:`, `\$\{\$\{`, `<\?`, `<script`, `(?i)union\s+select`, `\.\./\.\./`,
		`(?i)\bor\s+1=1`, `\(\)\s*\{\s*:;\s*\};`, `\.env\b`},
}

// browserTokens name browsers, browser add-ons and apps with a browser
// inside whose user agents hold a word the lists take for a bot ("Sogou" of
// Sogou's spider in Sogou's browser, "Capture" of a phone model, "Download"
// of QQ's download manager). A user agent with one of them is a browser
// unless a marker says otherwise.
var browserTokens = mustFilter(`(?i)chromeframe|Google(?: |%20)?Earth|SogouM(?:SE|obileBrowser)|coccocbrowser|QQDownload|` +
	`Fluid/\d|Capture\+|AppleNews/|OffByOne|BrowseX|TuneUp HTML Client|Opera Mini/`)

// crawlish are the words that make an isbot-only match a crawler rather than
// some other bot.
var crawlish = mustFilter(`(?i)bot\b|crawl|spider|slurp|archiv|feed|rss|preview|search|index`)

// patternTimeout bounds one match of isbot's patterns; regexp2 backtracks.
const patternTimeout = 50 * time.Millisecond

// botRules tell a bot's user agent from a browser's and name its category.
// Each pattern runs on its own, behind the words it needs (see required).
type botRules struct {
	markers  []botRule // by category, tried first
	listed   []botRule // crawler-user-agents, by tag
	patterns []isbotRule
}

type botRule struct {
	category string
	words    [][]int32
	re       *regexp.Regexp
}

type isbotRule struct {
	words [][]int32
	re    *regexp2.Regexp
}

// newBotRules builds the rules from the markers and the embedded lists,
// adding their words to x.
func newBotRules(x *words) (*botRules, error) {
	var list []struct {
		Pattern string   `json:"pattern"`
		Tags    []string `json:"tags"`
	}
	if err := json.Unmarshal(crawlerList, &list); err != nil {
		return nil, fmt.Errorf("useragent: read crawler-user-agents: %w", err)
	}
	byTag := map[string][]string{}
	for _, p := range list {
		c := Crawler
		switch {
		case has(p.Tags, "ai-crawler"):
			c = AIAgent
		case has(p.Tags, "browser-automation"):
			c = Automation
		case has(p.Tags, "monitoring"):
			c = Monitor
		case has(p.Tags, "http-library"), has(p.Tags, "scanner"):
			c = OtherBot
		}
		byTag[c] = append(byTag[c], p.Pattern)
	}
	r := &botRules{}
	var err error
	if r.markers, err = compileRules(markers, x); err != nil {
		return nil, err
	}
	if r.listed, err = compileRules(byTag, x); err != nil {
		return nil, err
	}
	var patterns []string
	if err := json.Unmarshal(isbotPatterns, &patterns); err != nil {
		return nil, fmt.Errorf("useragent: read isbot patterns: %w", err)
	}
	for _, p := range patterns {
		re, err := regexp2.Compile(p, regexp2.IgnoreCase)
		if err != nil {
			return nil, fmt.Errorf("useragent: isbot pattern %q: %w", p, err)
		}
		re.MatchTimeout = patternTimeout
		r.patterns = append(r.patterns, isbotRule{words: x.add(required("(?i)" + p)), re: re})
	}
	return r, nil
}

// compileRules compiles each category's patterns, in the order of
// Categories (so an AI crawler is not counted as a plain crawler).
func compileRules(byCategory map[string][]string, x *words) ([]botRule, error) {
	var rules []botRule
	for _, c := range []string{AIAgent, Automation, Monitor, OtherBot, Crawler} {
		for _, p := range byCategory[c] {
			re, err := regexp.Compile(p)
			if err != nil {
				return nil, fmt.Errorf("useragent: bot pattern %q of %s: %w", p, c, err)
			}
			rules = append(rules, botRule{category: c, words: x.add(required(p)), re: re})
		}
	}
	return rules, nil
}

// category is the bot category of ua, or "" for a browser (lower is ua
// folded (see fold), found the words it holds).
func (r *botRules) category(ua, lower string, found []bool) string {
	if c := first(r.markers, ua, found); c != "" {
		return c
	}
	if browserTokens.match(ua, lower) {
		return ""
	}
	if c := first(r.listed, ua, found); c != "" {
		return c
	}
	for _, p := range r.patterns {
		if !holds(found, p.words) {
			continue
		}
		// A timeout (a pathological header) counts as no match.
		if ok, err := p.re.MatchString(ua); err == nil && ok {
			if crawlish.match(ua, lower) {
				return Crawler
			}
			return OtherBot
		}
	}
	return ""
}

// first returns the category of the first rule that matches ua.
func first(rules []botRule, ua string, found []bool) string {
	for _, rule := range rules {
		if holds(found, rule.words) && rule.re.MatchString(ua) {
			return rule.category
		}
	}
	return ""
}

func has(tags []string, tag string) bool {
	for _, t := range tags {
		if t == tag {
			return true
		}
	}
	return false
}

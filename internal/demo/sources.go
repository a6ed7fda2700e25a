package demo

import (
	"fmt"
	"strings"

	"github.com/tally-analytics/tally/internal/ingest/referrer"
	"github.com/tally-analytics/tally/internal/model"
)

// timing is when a source sends its visitors.
type timing struct {
	kind timingKind
	// days: for a burst, how many days before the end it starts; for a
	// campaign, how many days it has been running.
	days float64
	// hours is the mean delay after a burst or a newsletter send.
	hours float64
}

type timingKind int

const (
	steady   timingKind = iota // every day, more on weekdays
	burst                      // a launch or a front page: a spike that fades
	weekly                     // a newsletter: after each Tuesday's send
	campaign                   // a paid campaign: the last days only
)

// source is where new visitors come from and how they behave.
type source struct {
	referrer string // host and path of the referrer ("" for none)
	utm      [3]string
	weight   float64 // share of new visitors
	entry    chooser[section]
	// landing is a page that a share of the source's visits enter on (the
	// post that was shared, the campaign's landing page).
	landing      string
	landingShare float64
	bounce       float64 // added to the entry page's bounce rate
	intent       float64 // multiplies the chances to sign up and to buy
	mobile       float64 // share of phones and tablets
	when         timing
	// discount is the share taken off a first payment (a sale's coupon).
	discount float64

	attr model.Attribution // named by the referrer classifier
}

type sw = weighted[section]

var (
	searchEntry = choose(sw{docs, 40}, sw{blog, 34}, sw{home, 14}, sw{features, 7}, sw{pricing, 5})
	socialEntry = choose(sw{blog, 60}, sw{home, 40})
)

// sourceList is the demo site's traffic mix.
func sourceList() []*source {
	return []*source{
		{weight: 22, entry: choose(sw{home, 62}, sw{docs, 12}, sw{pricing, 10}, sw{blog, 6}, sw{login, 6}, sw{features, 4},
			sw{signup, 2}),
			intent: 1.1, mobile: 0.30},
		{referrer: "www.google.com/", weight: 26, entry: searchEntry, bounce: 0.04, intent: 0.9, mobile: 0.38},
		{referrer: "www.bing.com/", weight: 3, entry: searchEntry, intent: 1, mobile: 0.15},
		{referrer: "duckduckgo.com/", weight: 3, entry: searchEntry, intent: 1, mobile: 0.2},
		{referrer: "chatgpt.com/", weight: 2, entry: choose(sw{docs, 60}, sw{pricing, 20}, sw{home, 20}), bounce: -0.05,
			intent: 1.3, mobile: 0.25},
		{referrer: "news.ycombinator.com/item", weight: 6, entry: choose(sw{home, 60}, sw{docs, 20}, sw{blog, 20}),
			landing: "/blog/clickhouse-in-production", landingShare: 0.8, bounce: 0.12, intent: 0.35, mobile: 0.35,
			when: timing{kind: burst, days: 9, hours: 16}},
		{referrer: "www.reddit.com/r/selfhosted/", weight: 4, entry: choose(sw{blog, 50}, sw{home, 30}, sw{docs, 20}),
			landing: "/docs/self-hosting", landingShare: 0.4, bounce: 0.10, intent: 0.5, mobile: 0.55},
		{referrer: "github.com/awesome-selfhosted/awesome-selfhosted", weight: 5,
			entry:  choose(sw{docs, 55}, sw{home, 40}, sw{signup, 5}),
			bounce: -0.12, intent: 1.6, mobile: 0.08},
		{referrer: "www.producthunt.com/posts/revenue-reports", weight: 3, entry: choose(sw{home, 80}, sw{features, 20}),
			bounce: 0.05, intent: 0.7, mobile: 0.4, when: timing{kind: burst, days: 20, hours: 30}},
		{referrer: "t.co/", weight: 3, entry: socialEntry, bounce: 0.15, intent: 0.4, mobile: 0.7},
		{referrer: "www.linkedin.com/", weight: 2, entry: socialEntry, bounce: 0.08, intent: 0.8, mobile: 0.5},
		{referrer: "dev.to/", weight: 2, entry: choose(sw{blog, 80}, sw{docs, 20}), bounce: 0.10, intent: 0.6, mobile: 0.3},
		{utm: [3]string{"newsletter", "email", "weekly-digest"}, weight: 5,
			entry: choose(sw{company, 45}, sw{blog, 45}, sw{pricing, 10}), landing: "/changelog", landingShare: 0.45,
			bounce: -0.15, intent: 1.8, mobile: 0.45, when: timing{kind: weekly, hours: 20}},
		{referrer: "www.google.com/", utm: [3]string{"google", "cpc", "brand-search"}, weight: 5,
			entry: choose(sw{home, 70}, sw{features, 30}), landing: pathPricing, landingShare: 0.5, bounce: 0.12,
			intent: 1.2, mobile: 0.4},
		{referrer: "l.facebook.com/", utm: [3]string{"facebook", "paid_social", "spring-sale"}, weight: 6,
			entry: choose(sw{home, 100}), landing: pathPricing, landingShare: 0.7, bounce: 0.32, intent: 0.45, mobile: 0.8,
			when: timing{kind: campaign, days: 14}, discount: 0.2},
	}
}

// sources is the traffic mix with each source named as ingestion names it.
type sources struct {
	all      []*source
	pick     chooser[*source]
	direct   *source
	search   *source
	letter   *source
	returned chooser[*source] // how visitors come back
}

func newSources() (*sources, error) {
	cls, err := referrer.New()
	if err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	s := &sources{all: sourceList()}
	items := make([]weighted[*source], len(s.all))
	for i, src := range s.all {
		src.attr = attribution(cls, src)
		items[i] = weighted[*source]{src, src.weight}
	}
	s.pick = choose(items...)
	s.direct, s.search = s.all[0], s.all[1]
	for _, src := range s.all {
		if src.utm[1] == "email" {
			s.letter = src
		}
	}
	s.returned = choose(weighted[*source]{s.direct, 60}, weighted[*source]{s.search, 22},
		weighted[*source]{s.letter, 12}, weighted[*source]{s.all[2], 3}, weighted[*source]{s.all[3], 3})
	return s, nil
}

// attribution is what ingestion would store for a visit from src: the
// referrer without "www.", the source named from utm_source or else the
// referrer's host.
func attribution(cls *referrer.Classifier, src *source) model.Attribution {
	a := model.Attribution{UTMSource: src.utm[0], UTMMedium: src.utm[1], UTMCampaign: src.utm[2]}
	named := referrer.Source{Name: referrer.DirectName, Type: referrer.Direct}
	if src.referrer != "" {
		host, _, _ := strings.Cut(src.referrer, "/")
		a.Referrer = strings.TrimPrefix(src.referrer, "www.")
		named = cls.FromHost(host)
	}
	if src.utm[0] != "" {
		named = cls.FromUTMSource(src.utm[0])
	}
	a.ReferrerSource, a.SourceType = named.Name, string(named.Type)
	return a
}

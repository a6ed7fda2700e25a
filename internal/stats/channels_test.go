package stats_test

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tally-analytics/tally/internal/chstore"
	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/ingest/referrer"
	"github.com/tally-analytics/tally/internal/stats"
	"github.com/tally-analytics/tally/internal/testenv"
)

// channelCases are visits, as a referrer's host and the UTM parameters of
// the page they landed on, and the channel each is in, worked out by hand
// from GA4's rules (stats.channelRules) and tally's adaptations of them.
var channelCases = []struct {
	name                     string
	host                     string // the referrer's; "" for none
	utmSource, medium, campa string
	want                     string
}{
	// no tags: what the referrer is
	{"no referrer", "", "", "", "", stats.ChannelDirect},
	{"Google's results", "www.google.com", "", "", "", stats.ChannelOrganicSearch},
	{"Bing's results", "bing.com", "", "", "", stats.ChannelOrganicSearch},
	{"Hacker News, social in the vendored list", "news.ycombinator.com", "", "", "", stats.ChannelOrganicSocial},
	{"Facebook's link shim", "l.facebook.com", "", "", "", stats.ChannelOrganicSocial},
	{"YouTube, social in the vendored list, video here", "www.youtube.com", "", "", "", stats.ChannelOrganicVideo},
	{"Twitch, not in the vendored list", "www.twitch.tv", "", "", "", stats.ChannelOrganicVideo},
	{"Amazon, a search engine in the vendored list, shopping here", "www.amazon.com", "", "", "", stats.ChannelOrganicShop},
	{"Etsy, not in the vendored list", "etsy.com", "", "", "", stats.ChannelOrganicShop},
	{"a blog", "blog.example.com", "", "", "", stats.ChannelReferral},
	{"an AI assistant", "chatgpt.com", "", "", "", stats.ChannelReferral},
	{"an ad network without tags", "googleads.g.doubleclick.net", "", "", "", stats.ChannelReferral},
	{"webmail", "mail.google.com", "", "", "", stats.ChannelEmail},
	{"webmail of a search engine's company", "e.mail.ru", "", "", "", stats.ChannelEmail},
	// tags: GA4's rules in their order
	{"campaign cross-network first", "", "google", "cpc", "Spring Cross-Network", stats.ChannelCrossNetwork},
	{"cross-network without a source", "", "", "", "pmax-cross-network", stats.ChannelCrossNetwork},
	{"shopping site, paid", "", "amazon", "cpc", "", stats.ChannelPaidShopping},
	{"shopping campaign, paid", "", "partner", "ppc", "summer-shop", stats.ChannelPaidShopping},
	{"google cpc", "", "google", "cpc", "", stats.ChannelPaidSearch},
	{"a search engine's host, paid, any case", "", "Bing.com", "CPC", "", stats.ChannelPaidSearch},
	{"google cpm is paid before display", "", "google", "cpm", "", stats.ChannelPaidSearch},
	{"a referrer tagged with a paid medium only", "www.google.de", "", "paidsearch", "", stats.ChannelPaidSearch},
	{"facebook paid-social", "", "facebook", "paid-social", "", stats.ChannelPaidSocial},
	{"Meta's fb, retargeting", "", "fb", "retargeting", "", stats.ChannelPaidSocial},
	{"LinkedIn's li, cpc", "", "li", "cpc", "", stats.ChannelPaidSocial},
	{"YouTube's yt, cpv", "", "yt", "cpv", "", stats.ChannelPaidVideo},
	{"display", "", "adnet", "display", "", stats.ChannelDisplay},
	{"banner", "", "", "Banner", "", stats.ChannelDisplay},
	{"cpm of no listed site", "", "adnet", "cpm", "", stats.ChannelDisplay},
	{"ppc of no listed site", "", "adnet", "ppc", "", stats.ChannelPaidOther},
	{"paid anything", "", "newsletter", "paid_email", "", stats.ChannelPaidOther},
	{"shopping campaign", "", "partner", "", "Black Friday Shopping", stats.ChannelOrganicShop},
	{"workshop is no shop", "", "partner", "", "workshop", stats.ChannelUnassigned},
	{"a social network's name", "", "facebook", "", "", stats.ChannelOrganicSocial},
	{"tw", "", "tw", "", "", stats.ChannelOrganicSocial},
	{"a social medium", "", "partner", "social-media", "", stats.ChannelOrganicSocial},
	{"hacker news tagged", "", "Hacker News", "", "", stats.ChannelOrganicSocial},
	{"youtube tagged", "", "youtube", "", "", stats.ChannelOrganicVideo},
	{"a video medium", "", "partner", "video-review", "", stats.ChannelOrganicVideo},
	{"a search engine's name", "", "bing", "", "", stats.ChannelOrganicSearch},
	{"organic medium", "", "partner", "organic", "", stats.ChannelOrganicSearch},
	{"referral medium", "", "partner", "referral", "", stats.ChannelReferral},
	{"link medium", "", "partner", "link", "", stats.ChannelReferral},
	{"email medium", "", "newsletter", "email", "", stats.ChannelEmail},
	{"e-mail medium with the referrer of a webmail", "mail.google.com", "", "e-mail", "", stats.ChannelEmail},
	{"email source", "", "e_mail", "", "", stats.ChannelEmail},
	{"email medium without a source", "", "", "email", "", stats.ChannelEmail},
	{"affiliate", "", "partner", "affiliate", "", stats.ChannelAffiliates},
	{"audio", "", "podcast", "audio", "", stats.ChannelAudio},
	{"sms source", "", "sms", "", "", stats.ChannelSMS},
	{"sms medium", "", "twilio", "SMS", "", stats.ChannelSMS},
	{"web push", "", "braze", "web-push", "", stats.ChannelMobilePush},
	{"mobile medium", "", "app", "mobile-banner", "", stats.ChannelMobilePush},
	{"firebase", "", "firebase", "", "", stats.ChannelMobilePush},
	{"a source alone says where, not how", "", "newsletter", "", "", stats.ChannelUnassigned},
	{"an unknown medium", "", "partner", "flyer", "", stats.ChannelUnassigned},
	{"a campaign alone", "", "", "", "spring", stats.ChannelUnassigned},
	// without utm_source the referrer still says where: the medium the tag
	// gives does not make Hacker News email (Organic Social comes first)
	{"a referrer says where when no tag does", "news.ycombinator.com", "", "email", "", stats.ChannelOrganicSocial},
}

// stored is what ingestion stores of a visit's source (its source step):
// the utm_source classified, else the referrer's host, else Direct.
func stored(c *referrer.Classifier, host, utmSource string) referrer.Source {
	switch {
	case utmSource != "":
		return c.FromUTMSource(utmSource)
	case host != "":
		return c.FromHost(host)
	}
	return referrer.Source{Name: referrer.DirectName, Type: referrer.Direct}
}

// The channel rule, as the reports send it to ClickHouse, puts each case in
// its channel on the real server: on a visit's columns, and on a payment's
// of each attribution model.
func TestChannelRuleOnClickHouse(t *testing.T) {
	opts := testenv.ClickHouseOptions(t, "default")
	ch, err := chstore.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Close()
	c, err := referrer.New()
	if err != nil {
		t.Fatal(err)
	}
	var names, sources, types, utmSources, mediums, campaigns []string
	want := map[string]string{}
	for _, tc := range channelCases {
		s := stored(c, tc.host, tc.utmSource)
		names, sources, types = append(names, tc.name), append(sources, s.Name), append(types, string(s.Type))
		utmSources, mediums, campaigns = append(utmSources, tc.utmSource), append(mediums, tc.medium), append(campaigns, tc.campa)
		want[tc.name] = tc.want
	}
	for _, attribution := range []string{"", stats.LastNonDirect, stats.LastTouch, stats.FirstTouch} {
		expr, args := stats.ChannelSQL(attribution)
		prefix := map[string]string{"": "", stats.LastNonDirect: "", stats.LastTouch: "lt_", stats.FirstTouch: "ft_"}[attribution]
		source := prefix + "source"
		if attribution == "" {
			source = "referrer_source"
		}
		query := "SELECT name AS d0, toString(" + expr + ") AS d1 FROM system.one ARRAY JOIN ? AS name, ? AS " + source +
			", ? AS " + prefix + "source_type, ? AS " + prefix + "utm_source, ? AS " + prefix + "utm_medium, ? AS " +
			prefix + "utm_campaign"
		res, err := ch.Rows(context.Background(), query, append(args, names, sources, types, utmSources, mediums, campaigns), 2, 0)
		if err != nil {
			t.Fatalf("attribution %q: %v", attribution, err)
		}
		got := map[string]string{}
		for _, row := range res.Rows {
			got[row.Dims[0]] = row.Dims[1]
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("attribution %q (-want +got):\n%s", attribution, diff)
		}
	}
}

// Every channel of the rule has a case, so that none is left unchecked.
func TestChannelCasesCoverEveryChannel(t *testing.T) {
	seen := map[string]bool{}
	for _, tc := range channelCases {
		seen[tc.want] = true
	}
	var missing []string
	for _, ch := range stats.Channels {
		if !seen[ch] {
			missing = append(missing, ch)
		}
	}
	if len(missing) > 0 {
		t.Errorf("no case for %s", strings.Join(missing, ", "))
	}
}

// A channel filter takes a channel's name in any case and keeps it spelt
// as the report spells it; any other value is refused, naming channel.
func TestChannelFilter(t *testing.T) {
	fs, err := stats.ParseFilters(url.Values{"channel": {" organic SEARCH"}})
	if err != nil || len(fs) != 1 || fs[0].Value != stats.ChannelOrganicSearch || fs[0].Dim.Name != stats.Channel.Name {
		t.Errorf("channel=organic SEARCH: %+v, %v", fs, err)
	}
	for _, bad := range []string{"Organic", "Paid", "Direct / None", ""} {
		_, err := stats.ParseFilters(url.Values{"channel": {bad}})
		var e *errs.Error
		if !errors.As(err, &e) || e.Kind != errs.Invalid || e.Field != "channel" {
			t.Errorf("channel=%q: %v; want invalid, naming channel", bad, err)
		}
	}
}

// No rollup holds what the rule reads: a query filtered or grouped by
// channel reads the raw table, even where rollups are allowed.
func TestChannelReadsRawRows(t *testing.T) {
	from := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	for _, q := range []stats.Query{
		{Table: stats.Sessions, Dimensions: []stats.Dimension{stats.Source}, Filters: []stats.Filter{stats.Eq(stats.Channel, stats.ChannelEmail)}},
		{Table: stats.Sessions, Dimensions: []stats.Dimension{stats.Channel}},
	} {
		q.Site, q.From, q.To, q.Metrics, q.Rollups = "s1", from, from.AddDate(0, 0, 30), []stats.Metric{stats.Visitors}, true
		sql, _, err := q.Build()
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(sql, " FROM sessions WHERE") || strings.Contains(sql, "_days") {
			t.Errorf("%s: reads a rollup", sql)
		}
	}
}

package stats

import (
	"fmt"
	"strings"

	"github.com/tally-analytics/tally/internal/ingest/referrer"
)

// The acquisition channels: GA4's default channel group, whose names and
// order of precedence they keep (Plausible's and Rybbit's follow it too).
const (
	ChannelDirect        = "Direct"
	ChannelCrossNetwork  = "Cross-network"
	ChannelPaidShopping  = "Paid Shopping"
	ChannelPaidSearch    = "Paid Search"
	ChannelPaidSocial    = "Paid Social"
	ChannelPaidVideo     = "Paid Video"
	ChannelDisplay       = "Display"
	ChannelPaidOther     = "Paid Other"
	ChannelOrganicShop   = "Organic Shopping"
	ChannelOrganicSocial = "Organic Social"
	ChannelOrganicVideo  = "Organic Video"
	ChannelOrganicSearch = "Organic Search"
	ChannelReferral      = "Referral"
	ChannelEmail         = "Email"
	ChannelAffiliates    = "Affiliates"
	ChannelAudio         = "Audio"
	ChannelSMS           = "SMS"
	ChannelMobilePush    = "Mobile Push Notifications"
	ChannelUnassigned    = "Unassigned"
)

// channelRules are the channel rule, GA4's, in its order: a visit is in
// the first channel whose condition it meets, Unassigned when none. The
// conditions read a visit's
//
//   - {medium}: utm_medium, lower-cased; without one, "organic" for a
//     search engine's referrer, "email" for a webmail's, "referral" for
//     any other referrer, and none for a visit without a referrer or with a
//     utm_source (GA4's "(not set)": a source alone says where, not how);
//   - {source}: utm_source, lower-cased ("" without one: a referrer's
//     source never is email, sms or firebase);
//   - {campaign}: utm_campaign, lower-cased;
//   - {category}: the kind of site the visit came from (channelCategory):
//     shopping, video, search, social or none;
//   - {direct}: no referrer and no UTM source, medium or campaign;
//   - {paid}: a medium GA4 calls paid, ^(.*cp.*|ppc|retargeting|paid.*)$;
//   - {shopCampaign}: a campaign GA4 calls shopping,
//     ^(.*(([^a-df-z]|^)shop|shopping).*)$ (both RE2, as ClickHouse's
//     match is).
//
// channelExpr expands the tokens.
var channelRules = []struct{ channel, cond string }{
	{ChannelDirect, "{direct}"},
	{ChannelCrossNetwork, "position({campaign}, 'cross-network') > 0"},
	{ChannelPaidShopping, "({category} = 'shopping' OR {shopCampaign}) AND {paid}"},
	{ChannelPaidSearch, "{category} = 'search' AND {paid}"},
	{ChannelPaidSocial, "{category} = 'social' AND {paid}"},
	{ChannelPaidVideo, "{category} = 'video' AND {paid}"},
	{ChannelDisplay, "{medium} IN ('display', 'banner', 'expandable', 'interstitial', 'cpm')"},
	{ChannelPaidOther, "{paid}"},
	{ChannelOrganicShop, "{category} = 'shopping' OR {shopCampaign}"},
	{ChannelOrganicSocial, "{category} = 'social' OR {medium} IN ('social', 'social-network', 'social-media', 'sm', 'social network', 'social media')"},
	{ChannelOrganicVideo, "{category} = 'video' OR position({medium}, 'video') > 0"},
	{ChannelOrganicSearch, "{category} = 'search' OR {medium} = 'organic'"},
	{ChannelReferral, "{medium} IN ('referral', 'app', 'link')"},
	{ChannelEmail, "{source} IN ('email', 'e-mail', 'e_mail', 'e mail') OR {medium} IN ('email', 'e-mail', 'e_mail', 'e mail')"},
	{ChannelAffiliates, "{medium} = 'affiliate'"},
	{ChannelAudio, "{medium} = 'audio'"},
	{ChannelSMS, "{source} = 'sms' OR {medium} = 'sms'"},
	{ChannelMobilePush, "endsWith({medium}, 'push') OR position({medium}, 'mobile') > 0 OR position({medium}, 'notification') > 0 OR {source} = 'firebase'"},
}

// Channels are the channel names, in the rule's order, Unassigned last.
var Channels = channelNames()

func channelNames() []string {
	out := make([]string, 0, len(channelRules)+1)
	for _, r := range channelRules {
		out = append(out, r.channel)
	}
	return append(out, ChannelUnassigned)
}

// channelColumns are the stored columns a channel is decided from, as a
// table names them: the sessions' (and events', which carry their
// session's), or the payments' columns of an attribution model's touch.
type channelColumns struct {
	source, sourceType, utmSource, utmMedium, utmCampaign string
}

var visitColumns = channelColumns{source: "referrer_source", sourceType: "source_type", utmSource: "utm_source",
	utmMedium: "utm_medium", utmCampaign: "utm_campaign"}

// paymentChannelColumns are the payments' columns of the touch of an
// attribution model.
func paymentChannelColumns(attribution string) channelColumns {
	col := func(c string) string { return attributionColumn(attribution, c) }
	return channelColumns{source: col("source"), sourceType: col("source_type"), utmSource: col("utm_source"),
		utmMedium: col("utm_medium"), utmCampaign: col("utm_campaign")}
}

// sourceSets are the categories' lists (referrer.SourceCategories) as the
// sets the rule's SQL binds: sent beside each query as external data, one
// table a list however often the expression names it.
type sourceSets struct {
	search, social, video, shopping, email Set
}

// channelSets are built once from the lists the binary embeds; they cannot
// fail but for a broken embedded list, which the referrer package's tests
// would catch first.
var channelSets = func() sourceSets {
	c, err := referrer.SourceCategories()
	if err != nil {
		panic(fmt.Sprintf("stats: channel categories: %v", err))
	}
	return sourceSets{search: c.Search, social: c.Social, video: c.Video, shopping: c.Shopping, email: c.Email}
}()

// channelCategory is the kind of site a visit came from: shopping or video
// when its utm_source or its source's name (the stored name of a listed
// referrer, the host of another, or the utm_source as classified) is in
// those lists, which come first (the vendored list calls Amazon a search
// engine and YouTube social, GA4 shopping and video); else search or
// social as the visit's stored source type says (the classifier's reading
// of the referrer or the utm_source at ingest) or as its utm_source names
// one (the lists again, and a few short codes: li, tw, yt).
func channelCategory(c channelColumns, sets sourceSets) (string, []any) {
	src, name := "lowerUTF8("+c.utmSource+")", "lowerUTF8("+c.source+")"
	sql := "multiIf(" + src + " IN ? OR " + name + " IN ?, 'shopping', " +
		src + " IN ? OR " + name + " IN ?, 'video', " +
		c.sourceType + " = 'search' OR " + src + " IN ?, 'search', " +
		c.sourceType + " = 'social' OR " + src + " IN ?, 'social', '')"
	return sql, []any{sets.shopping, sets.shopping, sets.video, sets.video, sets.search, sets.social}
}

// channelMedium is a visit's effective medium (see channelRules).
func channelMedium(c channelColumns, sets sourceSets) (string, []any) {
	sql := "multiIf(" + c.utmMedium + " != '', lowerUTF8(" + c.utmMedium + "), " +
		c.utmSource + " != '' OR " + c.sourceType + " = 'direct' OR " + c.source + " = '', '', " +
		c.sourceType + " = 'search', 'organic', " +
		"lowerUTF8(" + c.source + ") IN ?, 'email', 'referral')"
	return sql, []any{sets.email}
}

// channelExpr is the channel of a visit (channelRules) on columns c, with
// its arguments: the lists as sets, the channels' names.
func channelExpr(c channelColumns, sets sourceSets) (string, []any) {
	category, categoryArgs := channelCategory(c, sets)
	medium, mediumArgs := channelMedium(c, sets)
	type expansion struct {
		sql  string
		args []any
	}
	tokens := map[string]expansion{
		"category":     {category, categoryArgs},
		"medium":       {medium, mediumArgs},
		"source":       {"lowerUTF8(" + c.utmSource + ")", nil},
		"campaign":     {"lowerUTF8(" + c.utmCampaign + ")", nil},
		"paid":         {"match(" + medium + ", '^(.*cp.*|ppc|retargeting|paid.*)$')", mediumArgs},
		"shopCampaign": {"match(lowerUTF8(" + c.utmCampaign + "), '^(.*(([^a-df-z]|^)shop|shopping).*)$')", nil},
		"direct": {"(" + c.utmSource + " = '' AND (" + c.sourceType + " = 'direct' OR " + c.source + " = '') AND " +
			c.utmMedium + " = '' AND " + c.utmCampaign + " = '')", nil},
	}
	var s sqlb
	s.add("multiIf(")
	for _, r := range channelRules {
		rest := r.cond
		for {
			before, after, found := strings.Cut(rest, "{")
			s.add(before)
			if !found {
				break
			}
			name, tail, _ := strings.Cut(after, "}")
			t, ok := tokens[name]
			if !ok { // the rules are constants: this cannot pass their test
				panic("stats: unknown token {" + name + "} in a channel rule")
			}
			s.add(t.sql, t.args...)
			rest = tail
		}
		s.add(", ?, ", r.channel)
	}
	s.add("?)", ChannelUnassigned)
	return s.b.String(), s.args
}

// Channel is a visit's acquisition channel (channelRules), decided when a
// report runs from the columns a session stored when it started: no
// migration, every stored visit has one, and ingestion pays nothing. No
// rollup holds the five columns it reads, so a report grouped or filtered
// by it reads raw rows.
var Channel = func() Dimension {
	sql, args := channelExpr(visitColumns, channelSets)
	return Dimension{Name: "channel", exprs: map[Table]string{Events: sql, Sessions: sql}, args: args}
}()

// paymentChannels are the channel of a payment's touch of each attribution
// model, as the payments store it (its five columns, for each model);
// UnattributedLabel for a payment tally could tie to no visit, whose empty
// columns would otherwise read as Direct.
var paymentChannels = func() map[string]Dimension {
	out := make(map[string]Dimension, len(AttributionModels))
	for _, m := range AttributionModels {
		sql, args := channelExpr(paymentChannelColumns(m), channelSets)
		out[m] = Dimension{Name: Channel.Name, exprs: map[Table]string{Payments: "if(attributed = 0, ?, " + sql + ")"},
			args: append([]any{UnattributedLabel}, args...)}
	}
	return out
}()

// paymentChannel is the channel of a payment's touch of an attribution
// model (paymentChannels).
func paymentChannel(attribution string) Dimension { return paymentChannels[attribution] }

// canonicalChannel reads a channel filter's value: a channel's name in
// any case, spelt as Channels spell it.
func canonicalChannel(s string) (string, bool) {
	for _, c := range Channels {
		if strings.EqualFold(strings.TrimSpace(s), c) {
			return c, true
		}
	}
	return "", false
}

package referrer

import (
	"strings"

	"golang.org/x/net/publicsuffix"
)

// socialHosts are social networks and messengers the vendored list misses
// (it predates some, and has no messengers), by the names dashboards show.
var socialHosts = map[string]string{
	"tiktok.com":      "TikTok",
	"threads.net":     "Threads",
	"threads.com":     "Threads",
	"snapchat.com":    "Snapchat",
	"telegram.org":    "Telegram",
	"t.me":            "Telegram",
	"whatsapp.com":    "WhatsApp",
	"wa.me":           "WhatsApp",
	"messenger.com":   "Messenger",
	"slack.com":       "Slack",
	"discord.com":     "Discord",
	"discord.gg":      "Discord",
	"workplace.com":   "Workplace",
	"tildes.net":      "Tildes",
	"lnk.bio":         "Lnk.Bio",
	"linktr.ee":       "Linktree",
	"lemmy.world":     "Lemmy",
	"bsky.app":        "Bluesky",
	"nextdoor.com":    "Nextdoor",
	"line.me":         "LINE",
	"kakaotalk.com":   "KakaoTalk",
	"band.us":         "BAND",
	"xiaohongshu.com": "Xiaohongshu",
}

// socialUTMSources are the utm_source values Meta's ads write for its
// networks (the {{site_source_name}} parameter of an ad's URL: fb, ig, msg),
// by the names dashboards show. A name or host the lists know wins.
var socialUTMSources = map[string]string{
	"fb":  "Facebook",
	"ig":  "Instagram",
	"msg": "Messenger",
}

// socialBrands are networks that serve one site under many country domains
// (pinterest.de, pinterest.com.au): any host whose registrable domain is
// the brand on a public suffix is that network.
var socialBrands = map[string]string{
	"pinterest": "Pinterest",
	"facebook":  "Facebook",
	"instagram": "Instagram",
	"tiktok":    "TikTok",
	"linkedin":  "LinkedIn",
	"reddit":    "Reddit",
}

// socialApps are Android apps by package name: a link opened from an app
// arrives with the referrer android-app://<package>/, whose host is the
// package. Third-party clients count as the network they read.
var socialApps = map[string]string{
	"com.facebook.katana":                "Facebook",
	"com.facebook.lite":                  "Facebook",
	"com.facebook.orca":                  "Messenger",
	"com.instagram.android":              "Instagram",
	"com.instagram.barcelona":            "Threads",
	"com.whatsapp":                       "WhatsApp",
	"com.whatsapp.w4b":                   "WhatsApp",
	"org.telegram.messenger":             "Telegram",
	"org.thunderdog.challegram":          "Telegram",
	"com.snapchat.android":               "Snapchat",
	"com.pinterest":                      "Pinterest",
	"com.slack":                          "Slack",
	"com.discord":                        "Discord",
	"com.linkedin.android":               "LinkedIn",
	"com.twitter.android":                "Twitter",
	"com.zhiliaoapp.musically":           "TikTok",
	"com.ss.android.ugc.trill":           "TikTok",
	"com.reddit.frontpage":               "Reddit",
	"com.laurencedawson.reddit_sync":     "Reddit",
	"com.laurencedawson.reddit_sync.pro": "Reddit",
	"io.syncapps.lemmy_sync":             "Reddit",
	"com.google.android.youtube":         "Youtube",
	"io.github.hidroh.materialistic":     "Hacker News",
	"com.talklittle.android.tildes":      "Tildes",
	"jp.naver.line.android":              "LINE",
	"com.vkontakte.android":              "Vkontakte",
	"com.tumblr":                         "Tumblr",
	"com.quora.android":                  "Quora",
	"xyz.blueskyweb.app":                 "Bluesky",
	"org.joinmastodon.android":           "Mastodon",
}

// socialAppFamilies are package prefixes of a network's forks and clients
// (Telegram's many: org.telegram.plus, org.telegram.messenger.web).
var socialAppFamilies = map[string]string{
	"org.telegram.": "Telegram",
}

// socialBrand names the network of a host on a brand's country domain
// ("pinterest.co.uk" → Pinterest).
func socialBrand(h string) (Source, bool) {
	site, err := publicsuffix.EffectiveTLDPlusOne(h)
	if err != nil {
		return Source{}, false
	}
	label, _, _ := strings.Cut(site, ".")
	if name, ok := socialBrands[label]; ok {
		return Source{Name: name, Type: Social}, true
	}
	return Source{}, false
}

// socialAppFamily names the network of an app package of a family.
func socialAppFamily(h string) (Source, bool) {
	for prefix, name := range socialAppFamilies {
		if strings.HasPrefix(h, prefix) {
			return Source{Name: name, Type: Social}, true
		}
	}
	return Source{}, false
}

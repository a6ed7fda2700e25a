package referrer

// videoHosts are video sites, by the names dashboards show, for the channel
// grouping's video category (GA4's "video sites"): a visit from one is
// Organic Video, or Paid Video with a paid medium. The vendored list calls
// YouTube and Vimeo social and misses the others; the categories read this
// list first, so that YouTube is video, as GA4 has it. The classifier does
// not read it: the sources report names these hosts as it always did.
var videoHosts = map[string]string{
	"youtube.com":       "YouTube",
	"m.youtube.com":     "YouTube",
	"music.youtube.com": "YouTube",
	"youtu.be":          "YouTube",
	"vimeo.com":         "Vimeo",
	"player.vimeo.com":  "Vimeo",
	"twitch.tv":         "Twitch",
	"m.twitch.tv":       "Twitch",
	"dailymotion.com":   "Dailymotion",
	"dai.ly":            "Dailymotion",
	"wistia.com":        "Wistia",
	"rumble.com":        "Rumble",
	"bilibili.com":      "Bilibili",
	"nicovideo.jp":      "Niconico",
	"iqiyi.com":         "iQIYI",
	"youku.com":         "Youku",
}

package referrer

// searchHosts are search engines the vendored list misses, by the names
// dashboards show: Google's country domains it lacks (of Google's own list of
// its domains), Yandex's ya.ru and country domains, Sogou's sogou.com (the
// list has only a misspelt www.sougou.com), and engines it predates. A visitor
// who clicks a result there is search traffic, not a referral.
var searchHosts = map[string]string{
	"google.al":       "Google",
	"google.bt":       "Google",
	"google.co.ao":    "Google",
	"google.com.mm":   "Google",
	"google.com.pg":   "Google",
	"google.sr":       "Google",
	"ya.ru":           "Yandex",
	"yandex.az":       "Yandex",
	"yandex.com.am":   "Yandex",
	"yandex.com.ge":   "Yandex",
	"yandex.com.tr":   "Yandex",
	"yandex.eu":       "Yandex",
	"yandex.fr":       "Yandex",
	"yandex.kz":       "Yandex",
	"yandex.tj":       "Yandex",
	"yandex.tm":       "Yandex",
	"yandex.uz":       "Yandex",
	"sogou.com":       "Sogou",
	"coccoc.com":      "Cốc Cốc",
	"kagi.com":        "Kagi",
	"startpage.com":   "Startpage",
	"petalsearch.com": "Petal Search",
	"mojeek.com":      "Mojeek",
	"presearch.com":   "Presearch",
	"metager.org":     "Metager",
	"search.lilo.org": "Lilo",
}

package referrer

// shoppingHosts are shopping sites, by the names dashboards show, for the
// channel grouping's shopping category (GA4's "shopping sites"): a visit
// from one is Organic Shopping, or Paid Shopping with a paid medium. The
// vendored list calls Amazon a search engine and misses the others; the
// categories read this list first. A store's country domains are listed
// one by one (the big ones): a channel is decided in ClickHouse, which
// matches a host exactly. The classifier does not read this list.
var shoppingHosts = map[string]string{
	"amazon.com":       "Amazon",
	"amazon.de":        "Amazon",
	"amazon.co.uk":     "Amazon",
	"amazon.fr":        "Amazon",
	"amazon.it":        "Amazon",
	"amazon.es":        "Amazon",
	"amazon.ca":        "Amazon",
	"amazon.co.jp":     "Amazon",
	"amazon.in":        "Amazon",
	"ebay.com":         "eBay",
	"ebay.de":          "eBay",
	"ebay.co.uk":       "eBay",
	"etsy.com":         "Etsy",
	"walmart.com":      "Walmart",
	"aliexpress.com":   "AliExpress",
	"alibaba.com":      "Alibaba",
	"temu.com":         "Temu",
	"shopify.com":      "Shopify",
	"shop.app":         "Shop",
	"target.com":       "Target",
	"bestbuy.com":      "Best Buy",
	"rakuten.co.jp":    "Rakuten",
	"mercadolibre.com": "Mercado Libre",
	"idealo.de":        "idealo",
	"zalando.de":       "Zalando",
}

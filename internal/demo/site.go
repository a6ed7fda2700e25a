package demo

import "fmt"

// The demo site sells an analytics product: a home page, pricing, feature
// pages, documentation, a blog, sign-up and checkout. Each page has its own
// reading time and bounce rate; visitors move between sections by the
// transition weights below.

// section is a part of the site.
type section int

const (
	home section = iota
	pricing
	features
	docs
	blog
	signup
	login
	checkout
	company
	numSections
)

// page is one page of the demo site.
type page struct {
	path string
	sec  section
	// dwell is the median number of seconds a visitor spends on the page.
	dwell float64
	// bounce is the chance that a visit entering here sees no other page.
	bounce float64
	// cont is the chance of going on to another page after this one, past
	// the entry page.
	cont float64
	// weight is the page's popularity within its section.
	weight float64
}

// Paths of the conversion funnel.
const (
	pathSignup   = "/signup"
	pathCheckout = "/checkout"
	pathSuccess  = "/checkout/success"
	pathPricing  = "/pricing"
)

// blogPosts, most read first.
var blogPosts = []string{
	"analytics-without-cookies", "clickhouse-in-production", "how-we-count-visitors", "revenue-attribution-explained",
	"utm-parameters-a-practical-guide", "what-bounce-rate-tells-you", "server-side-tracking", "self-hosting-on-a-small-vps",
	"privacy-laws-and-analytics", "reading-your-first-dashboard", "goals-that-matter", "launching-revenue-reports",
	"sampling-large-sites", "year-in-review",
}

// archivedPosts is how many older blog posts there are.
const archivedPosts = 150

var pages = func() []page {
	ps := []page{
		{"/", home, 28, 0.42, 0.55, 1},
		{pathPricing, pricing, 80, 0.32, 0.6, 1},
		{"/features", features, 45, 0.38, 0.6, 4},
		{"/features/realtime", features, 55, 0.45, 0.55, 2},
		{"/features/revenue", features, 70, 0.40, 0.6, 3},
		{"/features/goals", features, 50, 0.45, 0.55, 1.5},
		{"/features/privacy", features, 65, 0.48, 0.5, 2},
		{"/docs", docs, 35, 0.30, 0.8, 5},
		{"/docs/getting-started", docs, 200, 0.40, 0.7, 8},
		{"/docs/tracking-script", docs, 240, 0.48, 0.65, 6},
		{"/docs/events-api", docs, 260, 0.50, 0.65, 4},
		{"/docs/goals", docs, 170, 0.52, 0.6, 3},
		{"/docs/revenue", docs, 230, 0.50, 0.6, 3},
		{"/docs/webhooks", docs, 280, 0.50, 0.6, 3},
		{"/docs/self-hosting", docs, 320, 0.42, 0.6, 5},
		{"/docs/api-keys", docs, 140, 0.55, 0.6, 2},
		{"/docs/filters", docs, 150, 0.58, 0.55, 2},
		{"/blog", blog, 30, 0.45, 0.6, 3},
		{pathSignup, signup, 55, 0.28, 0.8, 1},
		{"/login", login, 15, 0.65, 0.3, 1},
		{pathCheckout, checkout, 95, 0.20, 0.9, 0},
		{pathSuccess, checkout, 25, 0.50, 0.4, 0},
		{"/about", company, 45, 0.50, 0.5, 2},
		{"/changelog", company, 70, 0.45, 0.55, 4},
		{"/customers", company, 60, 0.45, 0.55, 2},
		{"/contact", company, 40, 0.55, 0.4, 1.5},
		{"/privacy", company, 50, 0.70, 0.3, 1},
		{"/terms", company, 40, 0.75, 0.3, 0.5},
	}
	for i, slug := range blogPosts {
		// long reads, mostly single-page visits; popularity falls off
		ps = append(ps, page{"/blog/" + slug, blog, 150 + float64(i%5)*25, 0.68 + float64(i%4)*0.03, 0.35,
			12 / float64(i+1)})
	}
	for i := range archivedPosts {
		// the long tail of older posts, each read now and then
		ps = append(ps, page{fmt.Sprintf("/blog/archive/post-%d", i+1), blog, 120 + float64(i%7)*20, 0.7, 0.3,
			0.3 / (1 + float64(i)/10)})
	}
	return ps
}()

// pageIndex finds a page by its path.
var pageIndex = func() map[string]int {
	m := make(map[string]int, len(pages))
	for i, p := range pages {
		m[p.path] = i
	}
	return m
}()

func pageOf(path string) int {
	i, ok := pageIndex[path]
	if !ok {
		panic(fmt.Sprintf("demo: no page %s", path))
	}
	return i
}

// sectionPages picks a page of each section by popularity (checkout pages
// are reached through the funnel only).
var sectionPages = func() [numSections]chooser[int] {
	var items [numSections][]weighted[int]
	for i, p := range pages {
		if p.weight > 0 {
			items[p.sec] = append(items[p.sec], weighted[int]{i, p.weight})
		}
	}
	var out [numSections]chooser[int]
	for s := range out {
		if len(items[s]) > 0 {
			out[s] = choose(items[s]...)
		}
	}
	return out
}()

type w = weighted[section]

// next is where visitors go from each section when they go on.
var next = [numSections]chooser[section]{
	home:     choose(w{features, 28}, w{pricing, 26}, w{docs, 14}, w{blog, 10}, w{signup, 10}, w{login, 6}, w{company, 6}),
	pricing:  choose(w{features, 30}, w{docs, 25}, w{home, 15}, w{company, 15}, w{blog, 5}),
	features: choose(w{pricing, 34}, w{features, 22}, w{docs, 16}, w{signup, 12}, w{home, 8}, w{company, 8}),
	docs:     choose(w{docs, 66}, w{pricing, 10}, w{home, 6}, w{signup, 8}, w{features, 6}, w{blog, 4}),
	blog:     choose(w{blog, 34}, w{home, 24}, w{pricing, 10}, w{features, 12}, w{docs, 12}, w{signup, 4}, w{company, 4}),
	signup:   choose(w{docs, 50}, w{home, 15}, w{pricing, 15}, w{features, 20}),
	login:    choose(w{docs, 60}, w{company, 25}, w{home, 15}),
	checkout: choose(w{docs, 70}, w{home, 30}),
	company:  choose(w{home, 26}, w{pricing, 24}, w{features, 18}, w{blog, 16}, w{docs, 10}, w{company, 6}),
}

// client is a browser on a device, as the user-agent parser names them.
type client struct{ device, browser, browserVersion, os, osVersion string }

type cw = weighted[client]

var desktopClients = choose(
	cw{client{"Desktop", "Chrome", "131.0", "Windows", "10"}, 38},
	cw{client{"Desktop", "Chrome", "131.0", "macOS", "10.15"}, 14},
	cw{client{"Desktop", "Safari", "18.1", "macOS", "10.15"}, 12},
	cw{client{"Desktop", "Edge", "131.0", "Windows", "10"}, 10},
	cw{client{"Desktop", "Firefox", "133.0", "Windows", "10"}, 5},
	cw{client{"Desktop", "Firefox", "133.0", "Linux", ""}, 5},
	cw{client{"Desktop", "Chrome", "131.0", "Linux", ""}, 3},
	cw{client{"Desktop", "Chrome", "131.0", "ChromeOS", "14816.99"}, 2},
	cw{client{"Desktop", "Opera", "114.0", "Windows", "10"}, 1},
	cw{client{}, 1}, // an agent nobody recognises
)

var mobileClients = choose(
	cw{client{"Mobile", "Safari", "18.1", "iOS", "18.1"}, 36},
	cw{client{"Mobile", "Chrome", "131.0", "Android", "14"}, 32},
	cw{client{"Mobile", "Samsung Internet", "26.0", "Android", "14"}, 8},
	cw{client{"Mobile", "Chrome", "131.0", "iOS", "18.1"}, 6},
	cw{client{"Mobile", "Firefox", "133.0", "Android", "14"}, 2},
	cw{client{"Tablet", "Safari", "18.1", "iOS", "18.1"}, 6},
	cw{client{"Tablet", "Chrome", "131.0", "Android", "13"}, 3},
	cw{client{"TV", "Samsung Internet", "7.4", "Tizen", "8.0"}, 0.3},
)

// place is where a visitor is; offset is its hours from UTC, for the time
// of day people browse.
type place struct {
	country, region, regionName, city string
	offset                            float64
}

type pw = weighted[place]

var places = choose(
	pw{place{"US", "US-CA", "California", "San Francisco", -8}, 8},
	pw{place{"US", "US-CA", "California", "Los Angeles", -8}, 4},
	pw{place{"US", "US-NY", "New York", "New York", -5}, 7},
	pw{place{"US", "US-TX", "Texas", "Austin", -6}, 4},
	pw{place{"US", "US-WA", "Washington", "Seattle", -8}, 3},
	pw{place{"US", "US-MA", "Massachusetts", "Boston", -5}, 2},
	pw{place{"US", "US-IL", "Illinois", "Chicago", -6}, 2},
	pw{place{"CA", "CA-ON", "Ontario", "Toronto", -5}, 3},
	pw{place{"CA", "CA-BC", "British Columbia", "Vancouver", -8}, 1.5},
	pw{place{"GB", "GB-ENG", "England", "London", 0}, 7},
	pw{place{"GB", "GB-ENG", "England", "Manchester", 0}, 1.5},
	pw{place{"GB", "GB-SCT", "Scotland", "Edinburgh", 0}, 1},
	pw{place{"DE", "DE-BE", "Berlin", "Berlin", 1}, 5},
	pw{place{"DE", "DE-BY", "Bavaria", "Munich", 1}, 3},
	pw{place{"DE", "DE-HH", "Hamburg", "Hamburg", 1}, 2},
	pw{place{"FR", "FR-IDF", "Île-de-France", "Paris", 1}, 4},
	pw{place{"FR", "FR-ARA", "Auvergne-Rhône-Alpes", "Lyon", 1}, 1},
	pw{place{"NL", "NL-NH", "North Holland", "Amsterdam", 1}, 3},
	pw{place{"ES", "ES-MD", "Madrid", "Madrid", 1}, 2},
	pw{place{"IT", "IT-25", "Lombardy", "Milan", 1}, 1.5},
	pw{place{"SE", "SE-AB", "Stockholm", "Stockholm", 1}, 1.5},
	pw{place{"PL", "PL-14", "Mazovia", "Warsaw", 1}, 1.5},
	pw{place{"IN", "IN-KA", "Karnataka", "Bengaluru", 5.5}, 5},
	pw{place{"IN", "IN-MH", "Maharashtra", "Mumbai", 5.5}, 2},
	pw{place{"JP", "JP-13", "Tokyo", "Tokyo", 9}, 3},
	pw{place{"AU", "AU-NSW", "New South Wales", "Sydney", 10}, 2},
	pw{place{"BR", "BR-SP", "São Paulo", "São Paulo", -3}, 2},
	pw{place{"", "", "", "", 0}, 3}, // no location known
)

// hourWeights is how much people browse at each local hour.
var hourWeights = func() chooser[int] {
	ws := []float64{0.25, 0.15, 0.1, 0.08, 0.08, 0.12, 0.25, 0.45, 0.7, 0.9, 1, 1,
		0.95, 1, 1, 0.95, 0.9, 0.8, 0.7, 0.65, 0.6, 0.55, 0.45, 0.35}
	items := make([]weighted[int], len(ws))
	for h, x := range ws {
		items[h] = weighted[int]{h, x}
	}
	return choose(items...)
}()

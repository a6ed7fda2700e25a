package ingest

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tally-analytics/tally/internal/accounts"
	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/money"
)

// Limits of an event (spec "Limits" and DESIGN §6 Ingestion).
const (
	MaxProps        = model.MaxProps
	MaxPropKeyLen   = model.MaxPropKeyLen
	MaxPropValueLen = model.MaxPropValueLen
	MaxEventNameLen = model.MaxEventNameLen
	MaxURLLen       = 8192 // a page URL with a long query string still counts
	MaxUserAgentLen = 512
	MaxVisitorIDLen = 128
	MaxSiteIDLen    = 64
	PageviewName    = model.PageviewName
	// EngagementName is the name the tracking script gives its reports of
	// how far a page was scrolled; what makes one is its scroll_depth.
	EngagementName   = "engagement"
	maxReferrerLen   = 4096 // what browsers send at most
	maxPathStoredLen = 1024
)

// Input is an event as a client sent it, before validation.
type Input struct {
	// Pageview is true for a pageview, false for a custom event.
	Pageview  bool
	SiteID    string
	URL       string
	Referrer  string
	UserAgent string
	IPAddress string
	// VisitorID is the client's own identifier (the tracker's analytics_vid); optional.
	VisitorID string
	EventName string
	// Props as decoded from JSON with UseNumber: string, json.Number or bool
	// values are valid.
	Props map[string]any
	// Revenue of a custom event, in major units (the tracker's
	// analytics('event', name, {revenue: {amount, currency}})).
	Revenue *Revenue
	// CheckoutSession is a payment provider's checkout session id seen in the
	// page URL; a later payment webhook is attributed to this visitor.
	CheckoutSession string
	// Browser marks events from the tracking script: no credential, and a
	// request without a user agent is not a browser.
	Browser bool
	// AcceptsLanguage says the request carried Accept-Language, which every
	// browser sends with the script's requests; a tracker request without it
	// is a bot.
	AcceptsLanguage bool
	// HashRoutes keeps the URL's fragment in the path, up to its query
	// string: the page of an app that routes by the hash (/#/pricing).
	HashRoutes bool
	// ScrollDepth, the text of a JSON number, makes the tracking script's
	// event a report of how far the page was scrolled (0 to 100 percent),
	// named EngagementName: no event, no session, only the page's scroll
	// depth. Empty for every other event.
	ScrollDepth string
}

// Revenue is an amount in major units ("49.99") and its currency.
type Revenue struct {
	Amount   string
	Currency string
}

// event is a validated Input.
type event struct {
	pageview   bool
	site       model.SiteID
	url        *url.URL
	referrer   *url.URL // nil when absent
	userAgent  string
	ip         netip.Addr // invalid when absent
	visitorID  string
	name       string
	propKeys   []string
	propValues []string
	// revenue in minor units of revenueCurrency; zero when none
	revenueAmount   int64
	revenueCurrency string
	checkoutSession string
	browser         bool
	acceptsLanguage bool
	hashRoutes      bool
	// engagement marks a report of the page's scroll depth (Input.ScrollDepth)
	engagement  bool
	scrollDepth uint8
	// params are the first values of the page's query parameters tally
	// reads (queryParams), from one walk of its query string
	params [len(queryParams)]string
}

// queryParams are the query parameters of a page tally reads: the UTM
// parameters, and the checkout session ids of payment providers' success
// URLs. Indexes into event.params.
var queryParams = [...]string{"utm_source", "utm_medium", "utm_campaign", "utm_content", "utm_term", "session_id", "checkout_session_id"}

const (
	paramUTMSource = iota
	paramUTMMedium
	paramUTMCampaign
	paramUTMContent
	paramUTMTerm
	paramSessionID
	paramCheckoutSessionID
)

// readParams sets the first value of each of queryParams in raw, a URL's
// query string, as url.Values.Get would read it (pairs with a semicolon or
// a bad escape are skipped), without building the map of every parameter.
func readParams(raw string, out *[len(queryParams)]string) {
	var found [len(queryParams)]bool
	for raw != "" {
		var pair string
		pair, raw, _ = strings.Cut(raw, "&")
		if pair == "" || strings.Contains(pair, ";") {
			continue
		}
		k, v, _ := strings.Cut(pair, "=")
		key, err := url.QueryUnescape(k)
		if err != nil {
			continue
		}
		i := slices.Index(queryParams[:], key)
		if i < 0 || found[i] {
			continue
		}
		if value, err := url.QueryUnescape(v); err == nil {
			if !utf8.ValidString(value) {
				value = v // as the path: bytes that are no UTF-8 stay encoded
			}
			out[i], found[i] = value, true
		}
	}
}

// Validate checks an event against every rule that needs no site lookup
// (the batch endpoint and the fuzz targets use it).
func Validate(in Input) error {
	_, err := validate(in)
	return err
}

// validate checks every rule and returns the first violation as an
// invalid_request (or invalid_props) error naming its field.
func validate(in Input) (event, error) {
	ev := event{pageview: in.Pageview, visitorID: in.VisitorID, browser: in.Browser, acceptsLanguage: in.AcceptsLanguage,
		hashRoutes: in.HashRoutes}
	site := strings.TrimSpace(in.SiteID)
	if site == "" {
		return ev, errs.InvalidField("site_id", "site_id is required")
	}
	if len(site) > MaxSiteIDLen {
		return ev, accounts.InvalidSite()
	}
	ev.site = model.SiteID(site)

	u, err := parseEventURL(in.URL)
	if err != nil {
		return ev, err
	}
	ev.url = u
	readParams(u.RawQuery, &ev.params)
	// What the tracking script passes on from the browser as it found it
	// (the referrer, the visitor id it keeps, a checkout session id of the
	// page's query) only adds to the event: one tally cannot use is dropped,
	// not the event. A sender of the Events API is told.
	if in.Referrer != "" {
		r, err := url.Parse(in.Referrer)
		switch {
		case err == nil && len(in.Referrer) <= maxReferrerLen && r.Host != "" && r.Scheme != "":
			ev.referrer = r
		case !in.Browser:
			return ev, errs.InvalidField("referrer", "must be an absolute URL of at most %d characters", maxReferrerLen)
		}
	}
	ev.userAgent = truncateUTF8(strings.TrimSpace(in.UserAgent), MaxUserAgentLen)
	if in.IPAddress != "" {
		ip, err := netip.ParseAddr(strings.TrimSpace(in.IPAddress))
		if err != nil {
			return ev, errs.InvalidField("ip_address", "must be an IPv4 or IPv6 address")
		}
		ev.ip = ip.Unmap()
	}
	if len(in.VisitorID) > MaxVisitorIDLen {
		if !in.Browser {
			return ev, errs.InvalidField("visitor_id", "must be at most %d characters", MaxVisitorIDLen)
		}
		ev.visitorID = ""
	}
	if in.ScrollDepth != "" {
		return ev, engagement(in, &ev)
	}
	if in.Pageview {
		ev.name = PageviewName
	} else {
		name := strings.TrimSpace(in.EventName)
		switch {
		case name == "":
			return ev, errs.InvalidField("event_name", "event_name is required")
		case !model.EventNameFits(name):
			return ev, errs.InvalidField("event_name", "must be 1 to %d characters of UTF-8 text", MaxEventNameLen)
		case name == PageviewName:
			return ev, errs.InvalidField("event_name", "%q is reserved for pageviews", PageviewName)
		}
		ev.name = PlainText(name)
	}
	if ev.propKeys, ev.propValues, err = validateProps(in.Props); err != nil {
		return ev, err
	}
	if in.Revenue != nil {
		if in.Pageview {
			return ev, errs.InvalidField("revenue", "revenue belongs to custom events, not pageviews")
		}
		if ev.revenueAmount, ev.revenueCurrency, err = validateRevenue(*in.Revenue); err != nil {
			return ev, err
		}
	}
	if cs := strings.TrimSpace(in.CheckoutSession); validCheckoutSession(cs) {
		ev.checkoutSession = cs
	} else if cs != "" && !in.Browser {
		return ev, errs.InvalidField("checkout_session_id", "must be 1 to %d printable ASCII characters, not starting with %q",
			maxCheckoutSessionLen, model.SubscriptionKeyPrefix)
	} else if cs := checkoutSessionOf(&ev); validCheckoutSession(cs) {
		ev.checkoutSession = cs
	}
	return ev, nil
}

// engagement validates a report of the page's scroll depth: the tracking
// script's event named EngagementName with a scroll_depth, an integer
// percentage, and nothing of an event (props, revenue).
func engagement(in Input, ev *event) error {
	if strings.TrimSpace(in.EventName) != EngagementName {
		return errs.InvalidField("event_name", "an event with a scroll_depth must be named %q", EngagementName)
	}
	depth, err := strconv.ParseUint(in.ScrollDepth, 10, 8)
	if err != nil || depth > 100 {
		return errs.InvalidField("scroll_depth", "must be a whole number of percent, 0 to 100")
	}
	if len(in.Props) > 0 || in.Revenue != nil {
		return errs.InvalidField("scroll_depth", "a report of the scroll depth carries no props and no revenue")
	}
	ev.name, ev.engagement, ev.scrollDepth = EngagementName, true, uint8(depth)
	return nil
}

// checkoutSessionOf is the checkout session id a page's query carries, as a
// provider's success URL passes it (Stripe's ?session_id=…, or
// ?checkout_session_id=…): a server-side sender forwarding the page's URL
// gets the checkout attributed as the tracking script does. One that is not
// a valid id is ignored: the event does not depend on it.
func checkoutSessionOf(ev *event) string {
	return strings.TrimSpace(cmp.Or(ev.params[paramSessionID], ev.params[paramCheckoutSessionID]))
}

// validCheckoutSession reports whether cs may be claimed: printable ASCII,
// and not a key of a subscription's link (model.SubscriptionKeyPrefix).
func validCheckoutSession(cs string) bool {
	return cs != "" && len(cs) <= maxCheckoutSessionLen && !strings.ContainsFunc(cs, func(r rune) bool { return r < 0x21 || r > 0x7e }) &&
		!strings.HasPrefix(cs, model.SubscriptionKeyPrefix)
}

const (
	maxCheckoutSessionLen = 255
	// maxRevenueMinor bounds one event's revenue (10^12 minor units).
	maxRevenueMinor = 1_000_000_000_000
)

// validateRevenue converts a major-unit amount into minor units exactly.
func validateRevenue(r Revenue) (int64, string, error) {
	cur := strings.ToUpper(strings.TrimSpace(r.Currency))
	if !money.ValidCurrency(cur) {
		return 0, "", errs.InvalidField("revenue.currency", "must be an ISO 4217 currency code such as EUR")
	}
	if r.Amount == "" {
		return 0, "", errs.InvalidField("revenue.amount", "amount is required (in major units, such as 49.99)")
	}
	minor, err := money.MinorUnits(r.Amount, cur)
	if err != nil {
		return 0, "", errs.InvalidField("revenue.amount", "%v", err)
	}
	if minor <= 0 || minor > maxRevenueMinor {
		return 0, "", errs.InvalidField("revenue.amount", "must be positive and at most 10^12 minor units")
	}
	return minor, cur, nil
}

func parseEventURL(raw string) (*url.URL, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return nil, errs.InvalidField("url", "url is required")
	}
	if len(raw) > MaxURLLen {
		return nil, errs.InvalidField("url", "must be at most %d characters", MaxURLLen)
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return nil, errs.InvalidField("url", "must be an absolute http(s) URL")
	}
	return u, nil
}

// numberValue is how a prop's number n (f as a float) is stored: an
// integer as written, every digit kept (an order number of 20 digits is
// not a float), zero as 0 however written; any other number as its float
// in plain decimals (1.50 and 1.5 are one value).
func numberValue(n json.Number, f float64) string {
	if f == 0 {
		return "0"
	}
	if s := strings.TrimPrefix(string(n), "-"); s != "" && strings.Trim(s, "0123456789") == "" {
		return string(n)
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

func invalidProps(field, format string, args ...any) *errs.Error {
	return &errs.Error{Kind: errs.Invalid, Code: "invalid_props", Field: field, Message: fmt.Sprintf(format, args...)}
}

// validateProps applies the props limits and renders the values as strings
// (numbers in their shortest form, booleans as true/false), sorted by key.
// Keys and string values are stored as PlainText.
func validateProps(props map[string]any) (keys, values []string, err error) {
	if len(props) > MaxProps {
		return nil, nil, invalidProps("props", "at most %d props are allowed, got %d", MaxProps, len(props))
	}
	for k := range props {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int { return strings.Compare(PlainText(a), PlainText(b)) })
	values = make([]string, len(keys))
	for i, k := range keys {
		field := "props." + k
		if !model.PropKeyFits(k) {
			return nil, nil, invalidProps(field, "prop keys must be 1 to %d characters", MaxPropKeyLen)
		}
		keys[i] = PlainText(k) // the value was looked up by the key as sent
		switch v := props[k].(type) {
		case string:
			if utf8.RuneCountInString(v) > MaxPropValueLen {
				return nil, nil, invalidProps(field, "string values must be at most %d characters", MaxPropValueLen)
			}
			values[i] = PlainText(v)
		case bool:
			values[i] = strconv.FormatBool(v)
		case json.Number:
			f, err := v.Float64()
			if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
				return nil, nil, invalidProps(field, "numbers must be finite")
			}
			values[i] = numberValue(v, f)
		case float64:
			if math.IsInf(v, 0) || math.IsNaN(v) {
				return nil, nil, invalidProps(field, "numbers must be finite")
			}
			values[i] = strconv.FormatFloat(v, 'f', -1, 64)
		default:
			return nil, nil, invalidProps(field, "values must be a string, number or boolean")
		}
	}
	if len(keys) == 0 {
		return nil, nil, nil
	}
	return keys, values, nil
}

// truncateUTF8 cuts s to at most n bytes without splitting a character.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

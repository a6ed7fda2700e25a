package ingest

import (
	"context"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tally-analytics/tally/internal/ingest/geo"
	"github.com/tally-analytics/tally/internal/ingest/referrer"
	"github.com/tally-analytics/tally/internal/ingest/useragent"
	"github.com/tally-analytics/tally/internal/model"
)

// Enricher turns a validated event into the attribution tally stores: page,
// campaign, device, browser, OS, location, traffic source and visitor id.
// Each step is a small method; Enrich runs them in order.
type Enricher struct {
	UA        *useragent.Parser
	Geo       *geo.DB
	Referrers *referrer.Classifier
	Visitors  *Visitors
}

// draft is an event on its way through the steps.
type draft struct {
	ev       *event
	at       time.Time
	site     *model.Site
	pathname string
	attr     model.Attribution
	visitor  uint64
	// botReason is set when the event comes from a bot; it then goes no further.
	botReason string
}

const maxUTMLen = 256

// enrich runs the steps; a step that recognises a bot stops the pipeline.
func (e *Enricher) enrich(ctx context.Context, d *draft) error {
	e.page(d)
	if e.userAgent(d); d.botReason != "" {
		return nil
	}
	e.location(d)
	e.source(d)
	return e.visitor(ctx, d)
}

// page takes the host name, the path (no query string or fragment, but the
// route of a hash-routed page) and the UTM parameters from the event's URL,
// each made safe to show (see text.go).
func (e *Enricher) page(d *draft) {
	d.attr.Hostname = urlText(model.StoredHost(d.ev.url.Hostname()))
	d.pathname = pathnameOf(d.ev)
	utm := func(i int) string { return truncateUTF8(PlainText(strings.TrimSpace(d.ev.params[i])), maxUTMLen) }
	d.attr.UTMSource, d.attr.UTMMedium, d.attr.UTMCampaign = utm(paramUTMSource), utm(paramUTMMedium), utm(paramUTMCampaign)
	d.attr.UTMContent, d.attr.UTMTerm = utm(paramUTMContent), utm(paramUTMTerm)
}

// pathnameOf is the page of an event as tally stores it (and goals and
// exclusions match it): the URL's path without query string or fragment,
// but with the route of a hash-routed page, as urlText (no control or
// bidirectional character but percent-encoded).
func pathnameOf(ev *event) string {
	u := ev.url
	pathname := u.Path
	route := hashRoute(u.Fragment)
	if ev.hashRoutes && route != "" {
		pathname += "#" + route
	}
	if !utf8.ValidString(pathname) {
		// percent-encoded bytes that are no UTF-8 (a Latin-1 "%E9") stay
		// encoded: text that every report and export can carry as it is;
		// the route is cut from the decoded fragment, so that a
		// percent-encoded "=" or "?" ends it as the plain one does
		pathname = u.EscapedPath()
		if ev.hashRoutes && route != "" {
			pathname += "#" + (&url.URL{Fragment: route}).EscapedFragment()
		}
	}
	if pathname == "" {
		pathname = "/"
	}
	return truncateUTF8(urlText(pathname), maxPathStoredLen)
}

// hashRoute is the route of a hash-routed page: its fragment up to its
// query string (#/pricing?plan=pro is /pricing's page) and up to its
// parameters, which are no route: a sign-in's redirect puts its access token
// there (#access_token=…&token_type=bearer), and it must not be stored. The
// route ends at the last "/" before the first "=".
func hashRoute(fragment string) string {
	route, _, _ := strings.Cut(fragment, "?")
	if i := strings.IndexByte(route, '='); i >= 0 {
		route = route[:max(strings.LastIndexByte(route[:i], '/'), 0)]
	}
	if route == "/" || route == "!" || route == "!/" {
		return "" // the app's root: a hash router writes #/ on the page it lands on
	}
	return route
}

// userAgent sets device, browser and OS, and recognises bots. A tracker
// request without a user agent or without Accept-Language did not come from
// a browser.
func (e *Enricher) userAgent(d *draft) {
	if d.ev.browser && (d.ev.userAgent == "" || !d.ev.acceptsLanguage) {
		d.botReason = useragent.OtherBot
		return
	}
	info := e.UA.Parse(d.ev.userAgent)
	if info.Bot {
		d.botReason = info.BotCategory
		return
	}
	d.attr.Device, d.attr.Browser, d.attr.BrowserVersion = info.Device, info.Browser, info.BrowserVersion
	d.attr.OS, d.attr.OSVersion = info.OS, info.OSVersion
}

// location looks the IP address up; the address itself goes no further.
func (e *Enricher) location(d *draft) {
	if !d.ev.ip.IsValid() {
		return
	}
	loc := e.Geo.Lookup(d.ev.ip)
	d.attr.CountryCode, d.attr.RegionCode, d.attr.RegionName, d.attr.City = loc.CountryCode, loc.RegionCode, loc.RegionName, loc.City
}

// source classifies where the visit came from: utm_source wins over the
// referrer; a referrer from the site itself is internal navigation, not a
// source; nothing at all is direct traffic.
func (e *Enricher) source(d *draft) {
	if r := d.ev.referrer; r != nil && !e.internal(d, r) {
		host := urlText(strings.ToLower(r.Hostname())) // an unknown host is the source's name
		d.attr.Referrer = truncateUTF8(strings.TrimPrefix(host, "www.")+r.EscapedPath(), maxPathStoredLen)
		src := e.Referrers.FromHost(host)
		d.attr.ReferrerSource, d.attr.SourceType = src.Name, string(src.Type)
	}
	if d.attr.UTMSource != "" {
		src := e.Referrers.FromUTMSource(d.attr.UTMSource)
		d.attr.ReferrerSource, d.attr.SourceType = src.Name, string(src.Type)
	}
	if d.attr.ReferrerSource == "" {
		d.attr.ReferrerSource, d.attr.SourceType = referrer.DirectName, model.SourceDirect
	}
}

// internal reports whether a referrer is the site itself (or the page's own host).
func (e *Enricher) internal(d *draft, r *url.URL) bool {
	host := model.StoredHost(r.Hostname())
	return host == d.attr.Hostname || OnDomain(host, d.site.Domain)
}

// visitor derives the visitor id (see Visitors).
func (e *Enricher) visitor(ctx context.Context, d *draft) error {
	if d.ev.visitorID != "" {
		d.visitor = FromClientID(d.ev.site, d.ev.visitorID)
		return nil
	}
	ip := ""
	if d.ev.ip.IsValid() {
		ip = d.ev.ip.String()
	}
	v, err := e.Visitors.Anonymous(ctx, d.ev.site, ip, d.ev.userAgent, d.at)
	d.visitor = v
	return err
}

package demo

import (
	"math/rand/v2"
	"time"

	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/realtime"
)

// The funnel: pricing → sign-up → checkout → success. Each chance is
// multiplied by the source's intent.
const (
	signupFromPricing   = 0.22 // a visitor on the pricing page goes on to sign up
	checkoutFromPricing = 0.35 // … or, signed up already, to the checkout
	signupCompleted     = 0.60 // a visitor on the sign-up page signs up
	checkoutFromSignup  = 0.16 // a new user goes straight to the checkout
	checkoutCompleted   = 0.72 // a checkout is paid
	maxPages            = 25
)

// session generates one visit of v from src starting at at; it returns when
// the visit ended and whether it was a bounce.
func (g *generator) session(v *visitor, src *source, at time.Time) (time.Time, bool) {
	attr := src.attr
	attr.Hostname = g.opts.Hostname
	c, pl := v.client, v.place
	attr.Device, attr.Browser, attr.BrowserVersion, attr.OS, attr.OSVersion = c.device, c.browser, c.browserVersion, c.os, c.osVersion
	attr.CountryCode, attr.RegionCode, attr.RegionName, attr.City = pl.country, pl.region, pl.regionName, pl.city
	s := model.SessionRow{SiteID: g.opts.Site, SessionID: g.r.Uint64() | 1, VisitorID: v.id, Sign: 1, Version: 1,
		Start: at, End: at, Attribution: attr}
	mobile := c.device == model.DeviceMobile
	cur := g.entryPage(v, src)
	bounce := pages[cur].bounce + src.bounce
	if mobile {
		bounce += 0.05
	}
	bounce = clamp(bounce, 0.03, 0.97)
	t, prev, prevAt := at, -1, at
	for n := 0; n < maxPages; n++ {
		g.pageview(&s, cur, prev, t, prevAt)
		stay := seconds(g.r, pages[cur].dwell)
		if mobile {
			stay = stay * 4 / 5
		}
		g.onArrival(&s, v, src, cur, t, stay)
		goOn := chance(g.r, pages[cur].cont)
		if n == 0 {
			goOn = !chance(g.r, bounce)
		}
		nxt := -1
		switch {
		case pages[cur].path == pathCheckout:
			if chance(g.r, checkoutCompleted) {
				nxt = pageOf(pathSuccess)
			}
		case goOn:
			nxt = g.nextPage(v, src, cur)
		}
		if nxt < 0 || !t.Add(stay).Before(g.end) {
			break
		}
		prev, prevAt, t, cur = cur, t, t.Add(stay), nxt
	}
	s.IsBounce = model.Bounce(s.Pageviews, s.Events)
	g.sessions = append(g.sessions, s)
	if g.known != nil {
		v.touches = append(v.touches, model.SessionTouch{Start: s.Start, Touch: attr.Touch(s.EntryPage)})
	}
	if !s.End.Before(g.end.Add(-realtime.Window)) {
		g.active[v.id] = realtime.Active{Visitor: v.id, Seen: s.End, Page: s.ExitPage, Source: attr.ReferrerSource}
	}
	return s.End, s.IsBounce
}

// entryPage is where a visit from src starts: the source's landing page,
// else a page of a section it sends people to. Users coming back on their
// own mostly log in or read the docs.
func (g *generator) entryPage(v *visitor, src *source) int {
	if src.landing != "" && chance(g.r, src.landingShare) {
		return pageOf(src.landing)
	}
	sec := src.entry.pick(g.r)
	if src == g.src.direct && v.signedUp {
		sec = returningUser.pick(g.r)
	}
	return sectionPages[sec].pick(g.r)
}

var returningUser = choose(sw{login, 50}, sw{docs, 30}, sw{home, 10}, sw{company, 10})

// nextPage is where a visitor goes from cur: down the funnel, or wherever
// the section leads.
func (g *generator) nextPage(v *visitor, src *source, cur int) int {
	switch pages[cur].path {
	case pathPricing:
		if !v.signedUp && chance(g.r, signupFromPricing*src.intent) {
			return pageOf(pathSignup)
		}
		if v.signedUp && !v.bought && chance(g.r, checkoutFromPricing*src.intent) {
			return pageOf(pathCheckout)
		}
	case pathSignup:
		if v.signedUp && !v.bought && chance(g.r, checkoutFromSignup*src.intent) {
			return pageOf(pathCheckout)
		}
	}
	return sectionPages[next[pages[cur].sec].pick(g.r)].pick(g.r)
}

// pageview appends a pageview of page p at at; prev is the page before it
// in the session (-1 for none), left at the time of this view.
func (g *generator) pageview(s *model.SessionRow, p, prev int, at, prevAt time.Time) {
	ev := model.EventRow{SiteID: s.SiteID, Timestamp: at, EventID: newUUID(g.r), Name: model.PageviewName,
		VisitorID: s.VisitorID, StableVisitor: true, SessionID: s.SessionID, Pathname: pages[p].path, Attribution: s.Attribution}
	if prev >= 0 {
		ev.PrevPathname, ev.TimeOnPrev = pages[prev].path, uint32(at.Sub(prevAt)/time.Second)
	}
	g.events = append(g.events, ev)
	s.Pageviews++
	if s.EntryPage == "" {
		s.EntryPage = ev.Pathname
	}
	s.ExitPage, s.End = ev.Pathname, at
}

// custom appends a custom event on the session's current page.
func (g *generator) custom(s *model.SessionRow, name string, at time.Time, keys, values []string) {
	if !at.Before(g.end) {
		return
	}
	g.events = append(g.events, model.EventRow{SiteID: s.SiteID, Timestamp: at, EventID: newUUID(g.r), Name: name,
		VisitorID: s.VisitorID, StableVisitor: true, SessionID: s.SessionID, Pathname: s.ExitPage, Attribution: s.Attribution,
		PropKeys: keys, PropValues: values})
	s.Events++
	if at.After(s.End) {
		s.End = at
	}
}

// onArrival generates what a visitor does on page p, which they view at at
// for stay: the funnel's steps and the page's custom events.
func (g *generator) onArrival(s *model.SessionRow, v *visitor, src *source, p int, at time.Time, stay time.Duration) {
	during := func() time.Time { return at.Add(time.Duration(g.r.Int64N(int64(stay) + 1))) }
	switch pages[p].path {
	case pathSignup:
		if !v.signedUp && chance(g.r, signupCompleted) {
			v.signedUp = true
			g.custom(s, "signup", during(), signupKeys, []string{pick3(g.r, "free", "pro", "business", 60, 30, 10),
				pick3(g.r, "email", "github", "google", 55, 30, 15)})
		}
	case pathCheckout:
		prod := products.pick(g.r)
		g.custom(s, "checkout_started", at.Add(2*time.Second), checkoutKeys, []string{prod.name, prod.billing()})
		v.checkout = prod
	case pathSuccess:
		v.bought = true
		if g.plan != nil && v.checkout != nil && at.Before(g.end) {
			g.plan.purchase(v, v.checkout, src, at)
			v.pays = true
		}
	}
	for _, e := range pageEvents[p] {
		if chance(g.r, e.p) {
			g.custom(s, e.name, during(), e.keys, []string{e.values.pick(g.r)})
		}
	}
}

func pick3(r *rand.Rand, a, b, c string, wa, wb, wc float64) string {
	x := r.Float64() * (wa + wb + wc)
	switch {
	case x < wa:
		return a
	case x < wa+wb:
		return b
	}
	return c
}

var (
	signupKeys   = []string{"plan", "method"}
	checkoutKeys = []string{"plan", "billing"}
)

// pageEvent is a custom event visitors of a page may send.
type pageEvent struct {
	name   string
	p      float64
	keys   []string // one prop, whose value is drawn from values
	values chooser[string]
}

type vw = weighted[string]

// pageEvents are the custom events of each page.
var pageEvents = func() [][]pageEvent {
	out := make([][]pageEvent, len(pages))
	snippet := pageEvent{"copy_snippet", 0.30, []string{"snippet"}, choose(vw{"script", 60}, vw{"curl", 25}, vw{"go", 15})}
	download := pageEvent{"download", 0.35, []string{"file"},
		choose(vw{"app-linux-amd64.tar.gz", 50}, vw{"app-darwin-arm64.tar.gz", 25}, vw{"docker-compose.yml", 25})}
	outbound := pageEvent{"outbound_click", 0.04, []string{"host"}, choose(vw{"github.com", 60}, vw{"discord.com", 25},
		vw{"status.example.com", 15})}
	letter := pageEvent{"newsletter_subscribe", 0.03, []string{"location"}, choose(vw{"blog", 1})}
	footer := pageEvent{"newsletter_subscribe", 0.01, []string{"location"}, choose(vw{"footer", 1})}
	for i, p := range pages {
		switch {
		case p.path == "/docs/getting-started" || p.path == "/docs/tracking-script" || p.path == "/docs/events-api":
			out[i] = append(out[i], snippet)
		case p.path == "/docs/self-hosting":
			out[i] = append(out[i], download)
		case p.path == "/" || p.path == "/changelog":
			out[i] = append(out[i], footer)
		case p.sec == blog && p.path != "/blog":
			out[i] = append(out[i], letter)
		}
		if p.sec == docs || p.sec == blog {
			out[i] = append(out[i], outbound)
		}
	}
	return out
}()

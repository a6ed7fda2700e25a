package demo

import (
	"context"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"time"

	"github.com/tally-analytics/tally/internal/ingest"
	"github.com/tally-analytics/tally/internal/ingest/session"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/realtime"
)

// visitor is one person with one browser: the device, browser, system and
// place stay theirs on every visit.
type visitor struct {
	id     uint64 // as ingestion derives it from vid
	vid    string // the tracking script's analytics_vid
	client client
	place  place
	origin *source // how they first came

	signedUp, bought bool
	checkout         *product // what they last went to pay for
	// customer: subscribed before the generated span; they come back to
	// log in and read the docs, and their subscription renews.
	customer bool
	// pays: a payment names them; touches are their sessions, kept for the
	// attribution of their payments (with Stores.Visits).
	pays    bool
	touches []model.SessionTouch
}

// Shares of visitors and how often they come back.
const (
	customerShare     = 0.015 // visitors who subscribed before the span
	customerFirstDays = 7     // they come back within the span's first days
	returnBounced     = 0.18  // chance to come back after a visit of one page
	returnEngaged     = 0.38  // … after a longer visit
	returnUser        = 0.60  // … once signed up
	returnDays        = 3.5   // mean days until they do
)

// generator makes the traffic of one load.
type generator struct {
	opts Options
	r    *rand.Rand // the traffic
	// scrolls draws the scroll depths reported, apart from r: adding them
	// left the traffic as it was
	scrolls    *rand.Rand
	src        *sources
	start, end time.Time
	days       chooser[time.Time] // calendar days (UTC midnights), weekdays and later days busier
	sends      []time.Time        // the newsletter's sends

	sink     Sink
	events   []model.EventRow
	sessions []model.SessionRow
	res      Result
	plan     *plan   // payments to record; nil when none are wanted
	known    *Visits // where paying visitors' sessions are kept; may be nil
	active   map[uint64]realtime.Active
}

// spanStart is where traffic ending at end starts: the first midnight (UTC)
// of the last days days, so that the span is whole days and today's part,
// as a dashboard's "last N days" reads it.
func spanStart(end time.Time, days int) time.Time {
	start := end.Add(-time.Duration(days) * 24 * time.Hour)
	if t := start.Truncate(24 * time.Hour); t.Before(start) {
		return t.Add(24 * time.Hour)
	}
	return start
}

func newGenerator(opts Options, sink Sink, payments bool, visits *Visits) (*generator, error) {
	src, err := newSources()
	if err != nil {
		return nil, err
	}
	g := &generator{opts: opts, r: rand.New(rand.NewPCG(opts.Seed, opts.Seed^0x9e3779b97f4a7c15)),
		scrolls: rand.New(rand.NewPCG(opts.Seed, opts.Seed^0x2545f4914f6cdd1d)), src: src,
		end: opts.End, start: spanStart(opts.End, opts.Days), sink: sink,
		events: make([]model.EventRow, 0, opts.Batch+1024), known: visits, active: map[uint64]realtime.Active{}}
	var days []weighted[time.Time]
	first := g.start.Truncate(24 * time.Hour)
	n := g.end.Sub(first).Hours() / 24
	for d := first; d.Before(g.end); d = d.Add(24 * time.Hour) {
		w := 1 + 0.35*d.Sub(first).Hours()/24/n // a site that grows
		if wd := d.Weekday(); wd == time.Saturday || wd == time.Sunday {
			w *= 0.6
		}
		days = append(days, weighted[time.Time]{d, w})
		if d.Weekday() == time.Tuesday {
			g.sends = append(g.sends, d.Add(8*time.Hour))
		}
	}
	g.days = choose(days...)
	if payments {
		g.plan = newPlan(opts, g.start)
	}
	return g, nil
}

// run generates visitors until the events reach opts.Events, writing them
// in batches.
func (g *generator) run(ctx context.Context) error {
	for g.res.Events+len(g.events) < g.opts.Events {
		if chance(g.r, customerShare) {
			g.customer()
		} else {
			g.newcomer()
		}
		if len(g.events) >= g.opts.Batch {
			if err := g.flush(ctx); err != nil {
				return err
			}
		}
	}
	return g.flush(ctx)
}

func (g *generator) flush(ctx context.Context) error {
	if len(g.events) == 0 {
		return nil
	}
	if err := g.sink.InsertEvents(ctx, "", g.events); err != nil {
		return err
	}
	if err := g.sink.InsertSessions(ctx, "", g.sessions); err != nil {
		return err
	}
	if err := g.sink.InsertBotEvents(ctx, "", g.bots()); err != nil {
		return err
	}
	if err := g.sink.InsertEngagements(ctx, "", g.engagements()); err != nil {
		return err
	}
	g.res.Events += len(g.events)
	g.res.Sessions += len(g.sessions)
	g.events, g.sessions = g.events[:0], g.sessions[:0]
	if g.opts.Progress != nil {
		g.opts.Progress("events", g.res.Events, g.opts.Events)
	}
	return nil
}

// botShare is how many bot events there are per event of people.
const botShare = 0.05

var botReasons = choose(weighted[string]{model.BotCrawler, 55}, weighted[string]{model.BotAIAgent, 22},
	weighted[string]{model.BotMonitor, 12}, weighted[string]{model.BotAutomation, 6}, weighted[string]{model.BotOther, 5})

// bots are the bot events filtered out while the batch's events came in:
// any time of day, as bots keep no hours.
func (g *generator) bots() []model.BotEventRow {
	rows := make([]model.BotEventRow, int(float64(len(g.events))*botShare))
	span := int64(g.end.Sub(g.start))
	for i := range rows {
		rows[i] = model.BotEventRow{SiteID: g.opts.Site, Timestamp: g.start.Add(time.Duration(g.r.Int64N(span))),
			EventID: newUUID(g.r), Reason: botReasons.pick(g.r)}
	}
	g.res.BotEvents += len(rows)
	return rows
}

// reportShare is the share of pageviews whose browser reports how far the
// page was scrolled (the others left before, or blocked the request).
const reportShare = 0.85

// engagements are the scroll depths reported for the batch's pageviews, a
// minute after each: every page has a typical depth of its own (a short
// page is read to its end, a long article rarely), each report spread
// around it.
func (g *generator) engagements() []model.EngagementRow {
	rows := make([]model.EngagementRow, 0, len(g.events))
	for i := range g.events {
		e := &g.events[i]
		if e.Name != model.PageviewName || !chance(g.scrolls, reportShare) {
			continue
		}
		h := fnv.New32a()
		h.Write([]byte(e.Pathname))
		typical := 30 + float64(h.Sum32()%65) // 30–94 %
		depth := clamp(typical+g.scrolls.NormFloat64()*18, 5, 100)
		rows = append(rows, model.EngagementRow{SiteID: e.SiteID, Timestamp: e.Timestamp.Add(time.Minute), EventID: newUUID(g.scrolls),
			VisitorID: e.VisitorID, Pathname: e.Pathname, ScrollDepth: uint8(math.Round(depth))})
	}
	g.res.Engagements += len(rows)
	return rows
}

func (g *generator) newVisitor(origin *source) *visitor {
	v := &visitor{vid: clientID(g.r), origin: origin, place: places.pick(g.r)}
	v.id = ingest.FromClientID(g.opts.Site, v.vid)
	if chance(g.r, origin.mobile) {
		v.client = mobileClients.pick(g.r)
	} else {
		v.client = desktopClients.pick(g.r)
	}
	return v
}

// newcomer is a visitor who finds the site during the span.
func (g *generator) newcomer() {
	src := g.src.pick.pick(g.r)
	v := g.newVisitor(src)
	if at, ok := g.firstVisit(src, v.place); ok {
		g.visits(v, src, at)
	}
}

// customer is a visitor who subscribed before the span.
func (g *generator) customer() {
	src := g.src.returned.pick(g.r)
	v := g.newVisitor(src)
	v.customer, v.signedUp, v.bought = true, true, true
	if g.plan != nil {
		g.plan.existing(v)
		v.pays = true
	}
	// regulars: they come early in the span and often
	if at, ok := g.dayTime(v.place, g.start, g.start.Add(customerFirstDays*24*time.Hour)); ok {
		g.visits(v, src, at)
	} else if v.pays && g.known != nil {
		g.known.remember(g.opts.Site, v.id, nil) // no visit this time
	}
}

// visits generates a visitor's visits from the first at at, each one
// making a return more or less likely.
func (g *generator) visits(v *visitor, src *source, at time.Time) {
	g.res.Visitors++
	defer func() {
		if v.pays && g.known != nil {
			g.known.remember(g.opts.Site, v.id, v.touches)
		}
	}()
	for {
		end, bounced := g.session(v, src, at)
		p := returnEngaged
		switch {
		case v.customer || v.signedUp:
			p = returnUser
		case bounced:
			p = returnBounced
		}
		if !chance(g.r, p) {
			return
		}
		var ok bool
		if at, ok = g.returnAt(end, v.place); !ok {
			return
		}
		src = g.returning(v)
	}
}

// returning is the source of a visitor's next visit: mostly typed in or
// searched for, sometimes the way they first came.
func (g *generator) returning(v *visitor) *source {
	if v.origin.when.kind != burst && chance(g.r, 0.15) {
		return v.origin
	}
	return g.src.returned.pick(g.r)
}

// firstVisit draws when a visitor from src first comes.
func (g *generator) firstVisit(src *source, pl place) (time.Time, bool) {
	for range 20 {
		var t time.Time
		switch src.when.kind {
		case burst:
			t = g.end.Add(-time.Duration(src.when.days*24) * time.Hour).Truncate(24 * time.Hour).Add(14 * time.Hour).
				Add(hours(g.r, src.when.hours))
		case weekly:
			if len(g.sends) == 0 {
				return g.dayTime(pl, g.start, g.end)
			}
			t = g.sends[g.r.IntN(len(g.sends))].Add(hours(g.r, src.when.hours))
		case campaign:
			var ok bool
			if t, ok = g.dayTime(pl, g.end.Add(-time.Duration(src.when.days*24)*time.Hour), g.end); !ok {
				continue
			}
		default:
			return g.dayTime(pl, g.start, g.end)
		}
		if t = t.Truncate(time.Second); !t.Before(g.start) && t.Before(g.end) {
			return t, true
		}
	}
	return g.dayTime(pl, g.start, g.end) // a burst before a short span: spread out instead
}

// dayTime draws a time in [from, until) within the span, on a busy day at
// a busy local hour of pl.
func (g *generator) dayTime(pl place, from, until time.Time) (time.Time, bool) {
	for range 40 {
		day := g.days.pick(g.r)
		t := g.atLocalHour(day, pl)
		if !t.Before(g.start) && !t.Before(from) && t.Before(g.end) && t.Before(until) {
			return t, true
		}
	}
	return time.Time{}, false
}

// atLocalHour is a time on day at an hour people browse where pl is.
func (g *generator) atLocalHour(day time.Time, pl place) time.Time {
	h := float64(hourWeights.pick(g.r)) - pl.offset
	return day.Add(time.Duration(h*float64(time.Hour)) + time.Duration(g.r.Int64N(int64(time.Hour)))).Truncate(time.Second)
}

// returnAt is when a visitor whose last visit ended at last comes back
// (false: not within the span).
func (g *generator) returnAt(last time.Time, pl place) (time.Time, bool) {
	day := last.Add(time.Hour + hours(g.r, returnDays*24)).Truncate(24 * time.Hour)
	t := g.atLocalHour(day, pl)
	for t.Before(last.Add(session.DefaultIdle)) { // a new visit, not the same one going on
		t = t.Add(24 * time.Hour)
	}
	return t, t.Before(g.end)
}

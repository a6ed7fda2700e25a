// Package ingest accepts pageviews and custom events: it validates them,
// checks the site, enriches them (page, campaign, device, location, source,
// visitor), and hands the resulting records to the write buffer, which
// gives them their sessions once they are durable. Bots are recognised and
// only counted.
package ingest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/tally-analytics/tally/internal/accounts"
	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/metrics"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/outage"
)

// SiteAccess says what a site is (the tracker's events carry no
// credential), and whether a principal may send events to it (the
// accounts' guard over the cached access).
type SiteAccess interface {
	Site(ctx context.Context, id model.SiteID) (model.Site, error)
	Check(ctx context.Context, p auth.Principal, id model.SiteID, a accounts.Action) (model.Site, model.Role, error)
}

// Writer stores records durably; when WriteMany returns nil all of them
// survive a crash, otherwise none was acknowledged.
type Writer interface {
	// WriteMany must not keep recs, nor what they point to, once it
	// returns: accept reuses their rows for the next request.
	WriteMany(ctx context.Context, recs []model.Record) error
}

// Checkouts remembers which visitors claimed a payment provider's checkout
// session (and when), for the revenue attribution of its webhook.
type Checkouts interface {
	RememberCheckout(ctx context.Context, site model.SiteID, checkoutSession string, visitor uint64, at time.Time) error
}

// ClientRevenue holds revenue the tracking script reports to the site's
// policy (the revenue service).
type ClientRevenue interface {
	CheckClientRevenue(ctx context.Context, site model.Site, amount int64, currency string) error
}

// RevenueAllowance spends one of a site's allowance of tracking-script
// events with revenue, or refuses the event (errs.RateLimited). The API
// holds it, as it holds every limit, and answers with its headers.
type RevenueAllowance func(site model.SiteID) error

// Service is the ingest pipeline.
type Service struct {
	access    SiteAccess
	enricher  *Enricher
	writer    Writer
	checkouts Checkouts
	revenue   ClientRevenue
	// refusals counts refused events per site, flushed to refusalSink
	refusals    *refusals
	refusalSink RefusalSink
	now         func() time.Time
	log         *slog.Logger
	metrics     *metrics.Metrics
	// checkoutsDown logs failures to remember checkout sessions once per interval
	checkoutsDown *outage.Reporter
	// scratch holds *scratch: the drafts and rows of a request's events,
	// reused by the next (see accept)
	scratch sync.Pool
}

// scratch is the room for a request's drafts, rows and records. They live
// only until accept returns, the Writer having encoded the records; a batch
// of 1,000 events takes ~860 KB of them, which allocated anew each request
// was 46 % of the bytes BenchmarkTrackBatch allocates, and large
// allocations are zeroed and taken from the OS page by page.
type scratch struct {
	drafts []draft
	rows   []model.EventRow
	recs   []model.Record
	// one and site are a single-event request's event and site (acceptOne):
	// a draft points to them, so anywhere else they would be moved to the
	// heap, half of what the ingest service allocates for such a request
	one  [1]accepted
	site model.Site
}

// take returns room for n drafts and rows; prepare overwrites each whole.
func (s *scratch) take(n int) ([]draft, []model.EventRow) {
	if cap(s.drafts) < n {
		s.drafts, s.rows = make([]draft, n), make([]model.EventRow, n)
	}
	return s.drafts[:n], s.rows[:n]
}

// release drops what the first n drafts and rows, the records and the
// single event point to (the request's strings), so that a pooled scratch
// keeps no request alive.
func (s *scratch) release(n int) {
	clear(s.drafts[:n])
	clear(s.rows[:n])
	clear(s.recs)
	s.recs = s.recs[:0]
	s.one[0], s.site = accepted{}, model.Site{}
}

// room takes a scratch from the pool; put it back with done.
func (s *Service) room() *scratch {
	if room, _ := s.scratch.Get().(*scratch); room != nil {
		return room
	}
	return &scratch{}
}

// done releases room's first n drafts and rows and pools it again.
func (s *Service) done(room *scratch, n int) {
	room.release(n)
	s.scratch.Put(room)
}

// NewService wires the pipeline; m may be nil.
func NewService(access SiteAccess, enricher *Enricher, writer Writer, checkouts Checkouts, revenue ClientRevenue,
	refusalSink RefusalSink, now func() time.Time, log *slog.Logger, m *metrics.Metrics) *Service {
	return &Service{access: access, enricher: enricher, writer: writer, checkouts: checkouts, revenue: revenue,
		refusals: newRefusals(log), refusalSink: refusalSink, now: now, log: log,
		metrics: m, checkoutsDown: outage.New(log, "ingest: checkout sessions cannot be remembered (Postgres unavailable)", 0)}
}

// Track accepts one event from an authenticated caller and returns its id.
// Bot traffic is accepted too (the caller cannot tell) but only counted, as
// is an event the site's exclusions keep out.
func (s *Service) Track(ctx context.Context, p auth.Principal, in Input) (string, error) {
	if err := p.Require(model.ScopeEventsWrite); err != nil {
		return "", err
	}
	ev, err := validate(in)
	if err != nil {
		return "", s.refusedFor(&p, in.SiteID, err, 1)
	}
	site, err := s.authorize(ctx, p, ev.site)
	if err != nil {
		return "", s.refusedFor(&p, in.SiteID, err, 1)
	}
	if excluded(&site, &ev) {
		return s.exclude(site.ID)
	}
	return s.acceptOne(ctx, &site, &ev)
}

// TrackBrowser accepts one event from the tracking script. There is no
// credential: the site must exist and the page must be on its domain (or a
// subdomain), like Plausible's /api/event. An event with revenue spends one
// of the site's allowance, once it passed every check.
func (s *Service) TrackBrowser(ctx context.Context, in Input, spend RevenueAllowance) (string, error) {
	in.Browser = true
	ev, err := validate(in)
	if err != nil {
		return "", s.refusedFor(nil, in.SiteID, err, 1)
	}
	site, err := s.access.Site(ctx, ev.site)
	if errors.Is(err, errs.ErrNotFound) {
		return "", s.refused(accounts.InvalidSite(), 1)
	}
	if err != nil {
		return "", s.refused(unavailable("cannot check the site now", err), 1)
	}
	if !OnDomain(ev.url.Hostname(), site.Domain) {
		err := errs.InvalidField("url", "the page is not on the site's domain")
		if ev.engagement {
			// the scroll depth of a page whose pageview was refused and
			// counted so: no event of the site's tracking health
			return "", s.refused(err, 1)
		}
		return "", s.refusedAt(site.ID, model.RefusedHostMismatch, err, 1)
	}
	if ev.revenueAmount > 0 {
		if err := s.revenue.CheckClientRevenue(ctx, site, ev.revenueAmount, ev.revenueCurrency); err != nil {
			return "", s.refusedAt(site.ID, "", err, 1)
		}
		// spent last: an event refused by a check must leave the allowance
		// to the events that follow
		if err := spend(site.ID); err != nil {
			s.countAt(site.ID, "", err, 1) // the limit counts it in the metrics
			return "", err
		}
	}
	// after the revenue checks: an excluded event is answered as a stored
	// one, refusals and allowance included, or anyone could probe which
	// pages and hosts a site excludes
	if excluded(&site, &ev) {
		if ev.engagement {
			return "", nil // the scroll depth of a page kept out: no event to count
		}
		return s.exclude(site.ID)
	}
	return s.acceptOne(ctx, &site, &ev)
}

// OnDomain reports whether host is domain or one of its subdomains, both
// read as events store a host (model.StoredHost: "www." ignored on both
// sides, an internationalised name in punycode as the domain is kept).
func OnDomain(host, domain string) bool {
	host, domain = model.StoredHost(host), model.StoredHost(domain)
	return domain != "" && (host == domain || strings.HasSuffix(host, "."+domain))
}

// authorize checks that p may send events to the site.
func (s *Service) authorize(ctx context.Context, p auth.Principal, id model.SiteID) (model.Site, error) {
	site, _, err := s.access.Check(ctx, p, id, accounts.SendEvents)
	return site, err
}

// acceptOne accepts a validated event of a known site. It copies both into
// a pooled scratch, so that neither is moved to the heap.
func (s *Service) acceptOne(ctx context.Context, site *model.Site, ev *event) (string, error) {
	room := s.room()
	defer s.done(room, 1)
	room.site = *site
	room.one[0] = accepted{site: &room.site, ev: *ev}
	var res [1]Result
	s.acceptIn(ctx, room, room.one[:], res[:])
	return res[0].EventID, res[0].Err
}

// accepted is a validated event of a known site, on its way to the buffer.
// The site is shared by the events of a batch: a copy each would cost an
// event the size of a site (its exclusions included).
type accepted struct {
	site *model.Site
	ev   event
	d    *draft
	id   string
	row  *model.EventRow
	rec  model.Record
}

// accept enriches validated events and writes them in one commit of the
// write buffer. Nothing is changed elsewhere before that commit, so an event
// refused here leaves no trace: its session only moves on once the buffer
// has it. It returns one result per event, in order.
func (s *Service) accept(ctx context.Context, items []accepted) []Result {
	results := make([]Result, len(items))
	room := s.room()
	defer s.done(room, len(items))
	s.acceptIn(ctx, room, items, results)
	return results
}

// acceptIn is accept with the request's scratch, writing the results into
// results (one per item).
func (s *Service) acceptIn(ctx context.Context, room *scratch, items []accepted, results []Result) {
	drafts, rows := room.take(len(items))
	recs := room.recs[:0]
	for i := range items {
		it := &items[i]
		it.d, it.row = &drafts[i], &rows[i]
		if err := s.prepare(ctx, it); err != nil {
			results[i].Err = err
			continue
		}
		if it.rec.Event == nil && it.rec.Bot == nil && it.rec.Engagement == nil {
			continue // a bot's scroll depth: nothing to store
		}
		recs = append(recs, it.rec)
	}
	room.recs = recs // kept for the next request, cleared by release
	if err := s.writer.WriteMany(ctx, recs); err != nil {
		err = s.refused(fmt.Errorf("ingest: write: %w", err), len(recs))
		for i := range results {
			if results[i].Err == nil {
				results[i].Err = err
				s.countAt(items[i].site.ID, "", err, 1)
			}
		}
		return
	}
	bots := 0
	for i := range items {
		if results[i].Err != nil {
			continue
		}
		results[i].EventID = items[i].id
		if items[i].rec.Bot != nil {
			bots++
		}
		s.rememberCheckout(ctx, &items[i])
	}
	s.metrics.CountEvents(metrics.OutcomeBot, bots)
	s.metrics.CountEvents(metrics.OutcomeAccepted, len(recs)-bots)
}

// prepare gives an event its id and enrichment and builds its record in
// it.d and it.row (a bot's record holds only the bot row, a scroll depth's
// only its row; row becomes nil).
func (s *Service) prepare(ctx context.Context, it *accepted) error {
	id, err := uuid.NewV7()
	if err != nil {
		return s.refusedAt(it.site.ID, "", fmt.Errorf("ingest: event id: %w", err), 1)
	}
	it.id = id.String()
	*it.d = draft{ev: &it.ev, at: s.now().UTC().Truncate(time.Second), site: it.site}
	if err := s.enricher.enrich(ctx, it.d); err != nil {
		return s.refusedAt(it.site.ID, "", unavailable("cannot accept events now", err), 1)
	}
	d, ev := it.d, it.ev
	switch {
	case d.botReason != "" && ev.engagement:
		// a bot's scroll depth is no event: it is neither stored nor counted
		it.row, it.rec = nil, model.Record{}
		return nil
	case d.botReason != "":
		it.row = nil
		it.rec = model.Record{Bot: &model.BotEventRow{SiteID: it.site.ID, Timestamp: d.at, EventID: it.id, Reason: d.botReason}}
		return nil
	case ev.engagement:
		it.row = nil
		it.rec = model.Record{Engagement: &model.EngagementRow{SiteID: it.site.ID, Timestamp: d.at, EventID: it.id,
			VisitorID: d.visitor, Pathname: d.pathname, ScrollDepth: ev.scrollDepth}}
		return nil
	}
	*it.row = model.EventRow{SiteID: it.site.ID, Timestamp: d.at, EventID: it.id, Name: ev.name, VisitorID: d.visitor,
		StableVisitor: ev.visitorID != "", Pathname: d.pathname, Attribution: d.attr, PropKeys: ev.propKeys, PropValues: ev.propValues,
		RevenueAmount: ev.revenueAmount, RevenueCurrency: ev.revenueCurrency}
	it.rec = model.Record{Event: it.row}
	if ev.revenueAmount > 0 {
		it.rec.BaseCurrency, it.rec.ClientRevenue = it.site.BaseCurrency, ev.browser
	}
	return nil
}

// rememberCheckout links a payment provider's checkout session to the
// visitor of an accepted event. Best effort: the event counts even if the
// link cannot be kept.
func (s *Service) rememberCheckout(ctx context.Context, it *accepted) {
	if it.ev.checkoutSession == "" || it.row == nil {
		return
	}
	if err := s.checkouts.RememberCheckout(ctx, it.site.ID, it.ev.checkoutSession, it.d.visitor, it.d.at); err != nil {
		s.checkoutsDown.Fail(1, err)
		return
	}
	s.checkoutsDown.OK()
}

// refusedFor counts n events refused with err, sent by p (nil: the tracking
// script) to the site the request named, in the metrics and for that site's
// tracking health (if p could send to it: see refusals), and returns err.
func (s *Service) refusedFor(p *auth.Principal, site string, err error, n int) error {
	s.countRefused(p, site, err, n)
	return s.refused(err, n)
}

// refusedAt is refusedFor for a site already checked, counted under reason
// (or, when reason is empty, the reason of err).
func (s *Service) refusedAt(site model.SiteID, reason string, err error, n int) error {
	s.countAt(site, reason, err, n)
	return s.refused(err, n)
}

// unavailable is the 503 of an event refused only for now, saying msg:
// like every answer of a store that is down it says when to retry, the
// cause kept for the log.
func unavailable(msg string, err error) *errs.Error {
	e := errs.StoreDown(err)
	e.Message = msg
	return e
}

// refused counts n events refused with err in the metrics, and returns err.
func (s *Service) refused(err error, n int) error {
	outcome := metrics.OutcomeUnavailable
	var e *errs.Error
	if errors.As(err, &e) && e.Kind != errs.Unavailable {
		outcome = metrics.OutcomeInvalid
	}
	s.metrics.CountEvents(outcome, n)
	return err
}

// Package ingest accepts pageviews and custom events: it validates them,
// checks the site, enriches them (page, campaign, device, location, source,
// visitor), updates the visitor's session, and hands the resulting rows to
// the write buffer. Bots are recognised and only counted.
package ingest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/ingest/session"
	"github.com/tally-analytics/tally/internal/metrics"
	"github.com/tally-analytics/tally/internal/model"
)

// SiteAccess answers which role a user has on a site, and what the site is.
type SiteAccess interface {
	Role(ctx context.Context, user model.UserID, site model.SiteID) (model.Role, error)
	Site(ctx context.Context, id model.SiteID) (model.Site, error)
}

// Sessions applies events to their visitors' sessions, in order.
type Sessions interface {
	TouchMany(ctx context.Context, evs []session.Event) []session.Touched
}

// Writer stores records durably; when WriteMany returns nil all of them
// survive a crash, otherwise none was acknowledged.
type Writer interface {
	WriteMany(ctx context.Context, recs []model.Record) error
}

// RevenueRecorder puts the revenue of custom events into the payments
// ledger, so that it counts in the revenue reports like payments do.
type RevenueRecorder interface {
	RecordTracked(ctx context.Context, site model.Site, eventID string, at time.Time, visitor uint64, name string,
		amount int64, currency string, hint *model.Touch) error
}

// Checkouts remembers which visitor opened a payment provider's checkout
// session, for the revenue attribution of its webhook.
type Checkouts interface {
	RememberCheckout(ctx context.Context, site model.SiteID, checkoutSession string, visitor uint64) error
}

// Service is the ingest pipeline.
type Service struct {
	access    SiteAccess
	enricher  *Enricher
	sessions  Sessions
	writer    Writer
	checkouts Checkouts
	revenue   RevenueRecorder
	now       func() time.Time
	log       *slog.Logger
	metrics   *metrics.Metrics
}

// NewService wires the pipeline; m may be nil.
func NewService(access SiteAccess, enricher *Enricher, sessions Sessions, writer Writer, checkouts Checkouts,
	revenue RevenueRecorder, now func() time.Time, log *slog.Logger, m *metrics.Metrics) *Service {
	return &Service{access: access, enricher: enricher, sessions: sessions, writer: writer, checkouts: checkouts,
		revenue: revenue, now: now, log: log, metrics: m}
}

// Track accepts one event from an authenticated caller and returns its id.
// Bot traffic is accepted too (the caller cannot tell) but only counted.
func (s *Service) Track(ctx context.Context, p auth.Principal, in Input) (string, error) {
	if err := p.Require(model.ScopeEventsWrite); err != nil {
		return "", err
	}
	ev, err := validate(in)
	if err != nil {
		return "", s.refused(err, 1)
	}
	site, err := s.authorize(ctx, p.UserID, ev.site)
	if err != nil {
		return "", s.refused(err, 1)
	}
	return s.acceptOne(ctx, site, ev)
}

// TrackBrowser accepts one event from the tracking script. There is no
// credential: the site must exist and the page must be on its domain (or a
// subdomain), like Plausible's /api/event.
func (s *Service) TrackBrowser(ctx context.Context, in Input) (string, error) {
	in.Browser = true
	ev, err := validate(in)
	if err != nil {
		return "", s.refused(err, 1)
	}
	site, err := s.access.Site(ctx, ev.site)
	if errors.Is(err, errs.ErrNotFound) {
		return "", s.refused(invalidSite(), 1)
	}
	if err != nil {
		return "", s.refused(errs.E(errs.Unavailable, "service_unavailable", "cannot check the site now").Wrap(err), 1)
	}
	if !OnDomain(ev.url.Hostname(), site.Domain) {
		return "", s.refused(errs.InvalidField("url", "the page is not on the site's domain"), 1)
	}
	return s.acceptOne(ctx, site, ev)
}

// OnDomain reports whether host is domain or one of its subdomains ("www."
// ignored on both sides).
func OnDomain(host, domain string) bool {
	host = strings.TrimPrefix(strings.TrimSuffix(strings.ToLower(host), "."), "www.")
	domain = strings.TrimPrefix(strings.ToLower(domain), "www.")
	return domain != "" && (host == domain || strings.HasSuffix(host, "."+domain))
}

func invalidSite() *errs.Error {
	return errs.E(errs.Invalid, "invalid_site_id", "unknown site, or not one this credential can send events to").WithField("site_id")
}

// authorize checks that the user may send events to the site.
func (s *Service) authorize(ctx context.Context, user model.UserID, id model.SiteID) (model.Site, error) {
	role, err := s.access.Role(ctx, user, id)
	if errors.Is(err, errs.ErrNotFound) {
		return model.Site{}, invalidSite()
	}
	if err != nil {
		return model.Site{}, errs.E(errs.Unavailable, "service_unavailable", "cannot check the site now").Wrap(err)
	}
	if !role.CanWrite() {
		return model.Site{}, errs.E(errs.Forbidden, "forbidden", "viewers cannot send events to this site")
	}
	site, err := s.access.Site(ctx, id)
	if errors.Is(err, errs.ErrNotFound) {
		return model.Site{}, invalidSite()
	}
	if err != nil {
		return model.Site{}, errs.E(errs.Unavailable, "service_unavailable", "cannot check the site now").Wrap(err)
	}
	return site, nil
}

// acceptOne accepts a validated event of a known site.
func (s *Service) acceptOne(ctx context.Context, site model.Site, ev event) (string, error) {
	res := s.accept(ctx, []accepted{{site: site, ev: ev}})
	return res[0].EventID, res[0].Err
}

// accepted is a validated event of a known site, on its way to the buffer.
type accepted struct {
	site model.Site
	ev   event
	d    *draft
	id   string
	row  *model.EventRow
	rec  model.Record
}

// accept enriches validated events, applies them to their sessions in one
// round trip to Redis, and writes them in one commit of the write buffer.
// It returns one result per event, in order.
func (s *Service) accept(ctx context.Context, items []accepted) []Result {
	results := make([]Result, len(items))
	var touches []session.Event
	var touched []int // index into items of each touch
	ok := items[:0:0]
	for i := range items {
		it := &items[i]
		if err := s.prepare(ctx, it); err != nil {
			results[i].Err = err
			continue
		}
		if it.row != nil {
			touched = append(touched, i)
			touches = append(touches, session.Event{Site: it.site.ID, Visitor: it.d.visitor, Time: it.d.at,
				Pageview: it.ev.pageview, Path: it.d.pathname, Attribution: it.d.attr, NewSessionID: randomSessionID()})
		}
	}
	updates := s.sessions.TouchMany(ctx, touches)
	for k, i := range touched {
		s.withSession(&items[i], updates[k])
	}
	recs := make([]model.Record, 0, len(items))
	for i := range items {
		if results[i].Err == nil {
			ok = append(ok, items[i])
			recs = append(recs, items[i].rec)
		}
	}
	if err := s.writer.WriteMany(ctx, recs); err != nil {
		err = s.refused(fmt.Errorf("ingest: write: %w", err), len(recs))
		for i := range results {
			if results[i].Err == nil {
				results[i].Err = err
			}
		}
		return results
	}
	bots := 0
	for i := range items {
		it := &items[i]
		if results[i].Err != nil {
			continue
		}
		results[i].EventID = it.id
		if it.row == nil {
			bots++
		} else if it.ev.revenueAmount > 0 {
			s.recordRevenue(ctx, it.site, it.row, it.rec.Sessions)
		}
	}
	s.metrics.CountEvents(metrics.OutcomeBot, bots)
	s.metrics.CountEvents(metrics.OutcomeAccepted, len(ok)-bots)
	return results
}

// prepare gives an event its id and enrichment and builds its record (a
// bot's record holds only the bot row; row stays nil).
func (s *Service) prepare(ctx context.Context, it *accepted) error {
	id, err := uuid.NewV7()
	if err != nil {
		return s.refused(fmt.Errorf("ingest: event id: %w", err), 1)
	}
	it.id = id.String()
	it.d = &draft{ev: it.ev, at: s.now().UTC().Truncate(time.Second), site: it.site}
	if err := s.enricher.enrich(ctx, it.d); err != nil {
		return s.refused(errs.E(errs.Unavailable, "service_unavailable", "cannot accept events now").Wrap(err), 1)
	}
	d, ev := it.d, it.ev
	if d.botReason != "" {
		it.rec = model.Record{Bot: &model.BotEventRow{SiteID: it.site.ID, Timestamp: d.at, EventID: it.id, Reason: d.botReason}}
		return nil
	}
	it.row = &model.EventRow{SiteID: it.site.ID, Timestamp: d.at, EventID: it.id, Name: ev.name, VisitorID: d.visitor,
		Pathname: d.pathname, Attribution: d.attr, PropKeys: ev.propKeys, PropValues: ev.propValues,
		RevenueAmount: ev.revenueAmount, RevenueCurrency: ev.revenueCurrency}
	it.rec = model.Record{Event: it.row}
	if ev.checkoutSession != "" {
		// Best effort: the event counts even if the mapping cannot be kept.
		if err := s.checkouts.RememberCheckout(ctx, it.site.ID, ev.checkoutSession, d.visitor); err != nil {
			s.log.Warn("ingest: could not remember a checkout session", "site_id", it.site.ID, "err", err)
		}
	}
	return nil
}

// withSession adds an event's session rows to its record. When Redis could
// not answer, the event still counts; only its session is lost.
func (s *Service) withSession(it *accepted, t session.Touched) {
	if t.Err != nil {
		s.log.Warn("ingest: session state unavailable; event stored without session", "err", t.Err)
		return
	}
	upd, row := t.Update, it.row
	// Every event carries its session's attribution, so that a filter on
	// the source or campaign selects whole visits.
	row.SessionID, row.Attribution = upd.State.SessionID, upd.State.Attribution
	row.PrevPathname, row.TimeOnPrev = upd.PrevPath, upd.TimeOnPrev
	if upd.Cancel != nil {
		it.rec.Sessions = append(it.rec.Sessions, *upd.Cancel)
	}
	it.rec.Sessions = append(it.rec.Sessions, upd.State)
}

// recordRevenue hands an event's revenue to the payments ledger, with the
// session it happened in (its newest session row) as attribution hint. The
// event itself is stored already; a failure here is logged, not returned.
func (s *Service) recordRevenue(ctx context.Context, site model.Site, row *model.EventRow, sessions []model.SessionRow) {
	var hint *model.Touch
	if len(sessions) > 0 {
		st := sessions[len(sessions)-1]
		a := st.Attribution
		hint = &model.Touch{Source: a.ReferrerSource, SourceType: a.SourceType, EntryPage: st.EntryPage,
			UTMSource: a.UTMSource, UTMMedium: a.UTMMedium, UTMCampaign: a.UTMCampaign, UTMContent: a.UTMContent,
			CountryCode: a.CountryCode, Device: a.Device}
	}
	if err := s.revenue.RecordTracked(ctx, site, row.EventID, row.Timestamp, row.VisitorID, row.Name,
		row.RevenueAmount, row.RevenueCurrency, hint); err != nil {
		s.log.Warn("ingest: the event's revenue could not be recorded", "site_id", site.ID, "err", err)
	}
}

// refused counts n events refused with err, and returns err.
func (s *Service) refused(err error, n int) error {
	outcome := metrics.OutcomeUnavailable
	var e *errs.Error
	if errors.As(err, &e) && e.Kind != errs.Unavailable {
		outcome = metrics.OutcomeInvalid
	}
	s.metrics.CountEvents(outcome, n)
	return err
}

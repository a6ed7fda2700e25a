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
	"github.com/tally-analytics/tally/internal/model"
)

// SiteAccess answers which role a user has on a site, and what the site is.
type SiteAccess interface {
	Role(ctx context.Context, user model.UserID, site model.SiteID) (model.Role, error)
	Site(ctx context.Context, id model.SiteID) (model.Site, error)
}

// Sessions applies an event to its visitor's session.
type Sessions interface {
	Touch(ctx context.Context, ev session.Event) (session.Update, error)
}

// Writer stores records durably; when Write returns nil the record survives a crash.
type Writer interface {
	Write(ctx context.Context, rec model.Record) error
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
}

// NewService wires the pipeline.
func NewService(access SiteAccess, enricher *Enricher, sessions Sessions, writer Writer, checkouts Checkouts,
	revenue RevenueRecorder, now func() time.Time, log *slog.Logger) *Service {
	return &Service{access: access, enricher: enricher, sessions: sessions, writer: writer, checkouts: checkouts,
		revenue: revenue, now: now, log: log}
}

// Track accepts one event from an authenticated caller and returns its id.
// Bot traffic is accepted too (the caller cannot tell) but only counted.
func (s *Service) Track(ctx context.Context, p auth.Principal, in Input) (string, error) {
	if err := p.Require(model.ScopeEventsWrite); err != nil {
		return "", err
	}
	ev, err := validate(in)
	if err != nil {
		return "", err
	}
	site, err := s.authorize(ctx, p.UserID, ev.site)
	if err != nil {
		return "", err
	}
	return s.accept(ctx, site, ev)
}

// TrackBrowser accepts one event from the tracking script. There is no
// credential: the site must exist and the page must be on its domain (or a
// subdomain), like Plausible's /api/event.
func (s *Service) TrackBrowser(ctx context.Context, in Input) (string, error) {
	in.Browser = true
	ev, err := validate(in)
	if err != nil {
		return "", err
	}
	site, err := s.access.Site(ctx, ev.site)
	if errors.Is(err, errs.ErrNotFound) {
		return "", invalidSite()
	}
	if err != nil {
		return "", errs.E(errs.Unavailable, "service_unavailable", "cannot check the site now").Wrap(err)
	}
	if !OnDomain(ev.url.Hostname(), site.Domain) {
		return "", errs.InvalidField("url", "the page is not on the site's domain")
	}
	return s.accept(ctx, site, ev)
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

// accept enriches a validated event of a known site and writes it.
func (s *Service) accept(ctx context.Context, site model.Site, ev event) (string, error) {
	id, err := uuid.NewV7()
	if err != nil {
		return "", fmt.Errorf("ingest: event id: %w", err)
	}
	d := &draft{ev: ev, at: s.now().UTC().Truncate(time.Second), site: site}
	if err := s.enricher.enrich(ctx, d); err != nil {
		return "", errs.E(errs.Unavailable, "service_unavailable", "cannot accept events now").Wrap(err)
	}
	if d.botReason != "" {
		bot := &model.BotEventRow{SiteID: site.ID, Timestamp: d.at, EventID: id.String(), Reason: d.botReason}
		return id.String(), s.write(ctx, model.Record{Bot: bot})
	}
	row := &model.EventRow{SiteID: site.ID, Timestamp: d.at, EventID: id.String(), Name: ev.name, VisitorID: d.visitor,
		Pathname: d.pathname, Attribution: d.attr, PropKeys: ev.propKeys, PropValues: ev.propValues,
		RevenueAmount: ev.revenueAmount, RevenueCurrency: ev.revenueCurrency}
	if ev.checkoutSession != "" {
		// Best effort: the event counts even if the mapping cannot be kept.
		if err := s.checkouts.RememberCheckout(ctx, site.ID, ev.checkoutSession, d.visitor); err != nil {
			s.log.Warn("ingest: could not remember a checkout session", "site_id", site.ID, "err", err)
		}
	}
	rec := model.Record{Event: row}
	upd, err := s.sessions.Touch(ctx, session.Event{Site: site.ID, Visitor: d.visitor, Time: d.at, Pageview: ev.pageview,
		Path: d.pathname, Attribution: d.attr, NewSessionID: randomSessionID()})
	hasSession := err == nil
	if !hasSession {
		// Redis is unavailable: the event still counts; only its session is lost.
		s.log.Warn("ingest: session state unavailable; event stored without session", "err", err)
	} else {
		// Every event carries its session's attribution, so that a filter on
		// the source or campaign selects whole visits.
		row.SessionID, row.Attribution = upd.State.SessionID, upd.State.Attribution
		row.PrevPathname, row.TimeOnPrev = upd.PrevPath, upd.TimeOnPrev
		if upd.Cancel != nil {
			rec.Sessions = append(rec.Sessions, *upd.Cancel)
		}
		rec.Sessions = append(rec.Sessions, upd.State)
	}
	if err := s.write(ctx, rec); err != nil {
		return "", err
	}
	if ev.revenueAmount > 0 {
		s.recordRevenue(ctx, site, row, upd, hasSession)
	}
	return id.String(), nil
}

// recordRevenue hands an event's revenue to the payments ledger, with the
// session it happened in as attribution hint. The event itself is stored
// already; a failure here is logged, not returned.
func (s *Service) recordRevenue(ctx context.Context, site model.Site, row *model.EventRow, upd session.Update, hasSession bool) {
	var hint *model.Touch
	if hasSession {
		a := upd.State.Attribution
		hint = &model.Touch{Source: a.ReferrerSource, SourceType: a.SourceType, EntryPage: upd.State.EntryPage,
			UTMSource: a.UTMSource, UTMMedium: a.UTMMedium, UTMCampaign: a.UTMCampaign, UTMContent: a.UTMContent,
			CountryCode: a.CountryCode, Device: a.Device}
	}
	if err := s.revenue.RecordTracked(ctx, site, row.EventID, row.Timestamp, row.VisitorID, row.Name,
		row.RevenueAmount, row.RevenueCurrency, hint); err != nil {
		s.log.Warn("ingest: the event's revenue could not be recorded", "site_id", site.ID, "err", err)
	}
}

func (s *Service) write(ctx context.Context, rec model.Record) error {
	if err := s.writer.Write(ctx, rec); err != nil {
		return fmt.Errorf("ingest: write: %w", err)
	}
	return nil
}

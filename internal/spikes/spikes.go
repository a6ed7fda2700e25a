// Package spikes sends traffic spike notifications: a site's owners and
// admins set a threshold of current visitors — the realtime view's count of
// the last 5 minutes, the dashboard's "visitors right now" — and list up to
// MaxRecipients addresses; once the site's current visitors reach the
// threshold, each address gets one email with the count and where those
// visitors are and came from. A site's notification goes at most once in
// QuietFor, however many servers check: a server sends only after an UPDATE
// of the site's row that moves its last notification on, which of several
// servers checking at once one makes. Each message carries an unsubscribe
// link of its own, as the email reports' do (unsubscribe.go).
//
// The recipients' addresses are personal data of the site's team: they stay
// in Postgres and in the mail itself, and are never logged (the logs name
// the site).
package spikes

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/tally-analytics/tally/internal/accounts"
	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/emailreports"
	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/stats"
)

const (
	// MaxRecipients is the most addresses a site's notification goes to,
	// as for its email reports.
	MaxRecipients = emailreports.MaxRecipients
	// MaxThreshold bounds a threshold: past it a number is a typing error
	// rather than a site's traffic.
	MaxThreshold = 1_000_000
)

// Store keeps the notifications, their recipients and their unsubscribe
// tokens.
type Store interface {
	SpikeNotification(ctx context.Context, site model.SiteID) (model.SpikeNotification, error)
	SetSpikeThreshold(ctx context.Context, site model.SiteID, threshold int, at time.Time) error
	DeleteSpikeNotification(ctx context.Context, site model.SiteID, at time.Time) error
	AddSpikeRecipient(ctx context.Context, r model.SpikeRecipient, limit int) (model.SpikeRecipient, error)
	DeleteSpikeRecipient(ctx context.Context, site model.SiteID, id model.SpikeRecipientID) error
	SpikeWatches(ctx context.Context, quietSince time.Time) ([]model.SpikeNotification, error)
	ClaimSpike(ctx context.Context, site model.SiteID, now, quietSince time.Time) (bool, error)
	ReleaseSpike(ctx context.Context, site model.SiteID, claimed, previous time.Time) error
	AddSpikeUnsubscribe(ctx context.Context, recipient model.SpikeRecipientID, tokenHash []byte, at time.Time) error
	DropSpikeUnsubscribe(ctx context.Context, tokenHash []byte) error
	SpikeUnsubscribeSite(ctx context.Context, tokenHash []byte) (string, error)
	UnsubscribeSpikes(ctx context.Context, tokenHash []byte) (string, error)
	ForgetSpikeUnsubscribes(ctx context.Context, since time.Time) error
}

// Sites answers whether a principal may do an action to a site (the
// accounts' guard).
type Sites interface {
	Check(ctx context.Context, p auth.Principal, id model.SiteID, a accounts.Action) (model.Site, model.Role, error)
}

// Stats is the realtime view, as the dashboard reads it.
type Stats interface {
	Realtime(ctx context.Context, p auth.Principal, r stats.Request) (stats.Realtime, error)
	RealtimeAtMost(ctx context.Context, p auth.Principal, r stats.Request) (int64, error)
}

// Options are the site's mail settings, the email reports': the mailer
// (nil: this server sends no email, and notifications are only kept), the
// From header and the public URL of the messages' links.
type Options = emailreports.Options

// Service manages a site's notification and sends it.
type Service struct {
	store Store
	sites Sites
	stats Stats
	opts  Options
	now   func() time.Time
	log   *slog.Logger
}

// NewService wires the spike notifications.
func NewService(store Store, sites Sites, st Stats, opts Options, now func() time.Time, log *slog.Logger) *Service {
	opts.PublicURL = strings.TrimSuffix(opts.PublicURL, "/")
	return &Service{store: store, sites: sites, stats: st, opts: opts, now: now, log: log}
}

// Enabled reports whether this server sends email.
func (s *Service) Enabled() bool { return s.opts.Sender != nil }

// manageable checks that p may manage the site's notification: whoever
// may change the site's settings (owners and admins).
func (s *Service) manageable(ctx context.Context, p auth.Principal, site model.SiteID) error {
	_, _, err := s.sites.Check(ctx, p, site, accounts.ManageSite)
	return err
}

// Settings is a site's notification as its settings show it; a Threshold
// of 0 is none.
func (s *Service) Settings(ctx context.Context, p auth.Principal, site model.SiteID) (model.SpikeNotification, error) {
	if err := s.manageable(ctx, p, site); err != nil {
		return model.SpikeNotification{}, err
	}
	n, err := s.store.SpikeNotification(ctx, site)
	if errors.Is(err, errs.ErrNotFound) {
		return model.SpikeNotification{SiteID: site}, nil
	}
	return n, err
}

// Threshold reads a threshold as typed: a whole number of visitors from 1
// to MaxThreshold.
func Threshold(typed string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(typed))
	if err != nil || n < 1 || n > MaxThreshold {
		return 0, errs.InvalidField("threshold", "The threshold must be a whole number of visitors from 1 to 1,000,000.")
	}
	return n, nil
}

// SetThreshold turns the site's notification on at the threshold typed,
// or changes its threshold; its addresses, and the quiet period of a
// notification sent, stay.
func (s *Service) SetThreshold(ctx context.Context, p auth.Principal, site model.SiteID, typed string) error {
	if err := s.manageable(ctx, p, site); err != nil {
		return err
	}
	n, err := Threshold(typed)
	if err != nil {
		return err
	}
	return siteGone(s.store.SetSpikeThreshold(ctx, site, n, s.now()))
}

// TurnOff turns the site's notification off and removes its addresses; a
// site without one is left as it is. The quiet period of a notification
// sent stays: turned on again, it sends nothing before its end.
func (s *Service) TurnOff(ctx context.Context, p auth.Principal, site model.SiteID) error {
	if err := s.manageable(ctx, p, site); err != nil {
		return err
	}
	if err := s.store.DeleteSpikeNotification(ctx, site, s.now()); err != nil && !errors.Is(err, errs.ErrNotFound) {
		return err
	}
	return nil
}

// AddRecipient adds an address to the site's notification, which must be
// on (an address listed already is left as it is).
func (s *Service) AddRecipient(ctx context.Context, p auth.Principal, site model.SiteID, typed string) (model.SpikeRecipient, error) {
	if err := s.manageable(ctx, p, site); err != nil {
		return model.SpikeRecipient{}, err
	}
	email, err := emailreports.Address(typed)
	if err != nil {
		return model.SpikeRecipient{}, err
	}
	r, err := s.store.AddSpikeRecipient(ctx, model.SpikeRecipient{SiteID: site, Email: email, CreatedAt: s.now()}, MaxRecipients)
	switch {
	case errors.Is(err, errs.ErrConflict):
		return model.SpikeRecipient{}, errs.E(errs.Invalid, "too_many_recipients",
			"A site's spike notification goes to at most %d addresses; remove one first.", MaxRecipients).WithField("email")
	case errors.Is(err, errs.ErrNotFound): // no threshold (or, rarely, the site went meanwhile)
		return model.SpikeRecipient{}, errs.E(errs.Invalid, "spike_notification_off",
			"Set a threshold first, then the addresses it notifies.").WithField("threshold")
	}
	return r, err
}

// RemoveRecipient takes an address off the site's notification.
func (s *Service) RemoveRecipient(ctx context.Context, p auth.Principal, site model.SiteID, id model.SpikeRecipientID) error {
	if err := s.manageable(ctx, p, site); err != nil {
		return err
	}
	err := s.store.DeleteSpikeRecipient(ctx, site, id)
	if errors.Is(err, errs.ErrNotFound) {
		return errs.E(errs.NotFound, "recipient_not_found", "recipient not found")
	}
	return err
}

// siteGone names a site that went between the guard's check and a write.
func siteGone(err error) error {
	if errors.Is(err, errs.ErrNotFound) {
		return errs.E(errs.NotFound, "site_not_found", "site not found").WithField("site_id")
	}
	return err
}

// Package emailreports sends each site's weekly and monthly reports by
// email to the addresses its owners and admins list (at most MaxRecipients),
// with the dashboard's numbers: the overview compared with the period
// before, the top sources and pages. A background pass on every server finds
// the reports due and sends each once, however many servers run it: a
// delivery is a Postgres row claimed before each attempt. Each message
// carries an unsubscribe link of its own, which removes its recipient
// without a login (unsubscribe.go).
//
// The recipients' addresses are personal data of the site's team: they stay
// in Postgres and in the mail itself, and are never logged (the logs name a
// site and a delivery id).
package emailreports

import (
	"context"
	"errors"
	"log/slog"
	"net/mail"
	"strings"
	"time"

	"github.com/tally-analytics/tally/internal/accounts"
	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/mailer"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/stats"
)

// MaxRecipients is the most addresses a site's reports go to.
const MaxRecipients = 10

// Store keeps the recipients and the record of deliveries.
type Store interface {
	SetReportRecipient(ctx context.Context, r model.ReportRecipient, limit int) (model.ReportRecipient, error)
	ReportRecipients(ctx context.Context, site model.SiteID) ([]model.ReportRecipient, error)
	DeleteReportRecipient(ctx context.Context, site model.SiteID, id model.ReportRecipientID) error
	ReportSubscriptions(ctx context.Context) ([]model.ReportSubscription, error)
	SettledReports(ctx context.Context, since time.Time, maxAttempts int) ([]model.ReportDelivery, error)
	ClaimReport(ctx context.Context, d model.ReportDelivery, now, leaseUntil time.Time, maxAttempts int) (model.ReportAttempt, bool, error)
	ReportSent(ctx context.Context, id string, at time.Time) error
	ReportFailed(ctx context.Context, id, reason string, retryAt time.Time) error
	ReportUnknown(ctx context.Context, id, reason string, at time.Time) error
	ForgetReports(ctx context.Context, since time.Time) (int64, error)
	AddReportUnsubscribe(ctx context.Context, recipient model.ReportRecipientID, tokenHash []byte, at time.Time) error
	ReportUnsubscribeSite(ctx context.Context, tokenHash []byte) (string, error)
	UnsubscribeReports(ctx context.Context, tokenHash []byte) (string, error)
}

// Sites answers whether a principal may do an action to a site (the
// accounts' guard).
type Sites interface {
	Check(ctx context.Context, p auth.Principal, id model.SiteID, a accounts.Action) (model.Site, model.Role, error)
}

// Stats are the reports an email is made of, as the dashboard reads them.
type Stats interface {
	Overview(ctx context.Context, p auth.Principal, r stats.Request) (stats.Overview, error)
	Sources(ctx context.Context, p auth.Principal, r stats.Request) (stats.List[stats.SourceRow], error)
	Pages(ctx context.Context, p auth.Principal, r stats.Request) (stats.Pages, error)
}

// Sender delivers a message (the mailer).
type Sender interface {
	Send(ctx context.Context, msg mailer.Message) error
}

// Options are the email reports' settings.
type Options struct {
	// Sender sends the mail; nil: this server sends no email (no
	// TALLY_SMTP_URL), and recipients are only kept.
	Sender Sender
	// From is the messages' From header (TALLY_MAIL_FROM).
	From string
	// PublicURL is the server's address for the messages' links, the
	// unsubscribe link among them; empty: the messages have none.
	PublicURL string
}

// Service manages a site's recipients and sends the reports.
type Service struct {
	store Store
	sites Sites
	stats Stats
	opts  Options
	now   func() time.Time
	log   *slog.Logger
}

// NewService wires the email reports.
func NewService(store Store, sites Sites, st Stats, opts Options, now func() time.Time, log *slog.Logger) *Service {
	opts.PublicURL = strings.TrimSuffix(opts.PublicURL, "/")
	return &Service{store: store, sites: sites, stats: st, opts: opts, now: now, log: log}
}

// Enabled reports whether this server sends email.
func (s *Service) Enabled() bool { return s.opts.Sender != nil }

// Input is a recipient as the settings form sends it.
type Input struct {
	Email           string
	Weekly, Monthly bool
}

// Address is an address as typed into a site's settings, as its lists
// keep it (trimmed, lower-case), or the error to show: one rule for every
// list of addresses a site's mail goes to.
func Address(typed string) (string, error) {
	email := strings.ToLower(strings.TrimSpace(typed))
	if addr, err := mail.ParseAddress(email); err != nil || addr.Address != email || len(email) > 254 {
		return "", errs.InvalidField("email", "The email must be an address such as name@example.com.")
	}
	return email, nil
}

// manageable checks that p may manage the site's recipients: whoever may
// change the site's settings (owners and admins).
func (s *Service) manageable(ctx context.Context, p auth.Principal, site model.SiteID) error {
	_, _, err := s.sites.Check(ctx, p, site, accounts.ManageSite)
	return err
}

// Recipients lists a site's recipients by address.
func (s *Service) Recipients(ctx context.Context, p auth.Principal, site model.SiteID) ([]model.ReportRecipient, error) {
	if err := s.manageable(ctx, p, site); err != nil {
		return nil, err
	}
	return s.store.ReportRecipients(ctx, site)
}

// SetRecipient adds an address to a site's reports, or changes which
// reports an address of the site gets.
func (s *Service) SetRecipient(ctx context.Context, p auth.Principal, site model.SiteID, in Input) (model.ReportRecipient, error) {
	if err := s.manageable(ctx, p, site); err != nil {
		return model.ReportRecipient{}, err
	}
	email, err := Address(in.Email)
	if err != nil {
		return model.ReportRecipient{}, err
	}
	if !in.Weekly && !in.Monthly {
		return model.ReportRecipient{}, errs.InvalidField("frequency", "Choose weekly, monthly or both.")
	}
	r, err := s.store.SetReportRecipient(ctx, model.ReportRecipient{SiteID: site, Email: email, Weekly: in.Weekly,
		Monthly: in.Monthly, CreatedAt: s.now()}, MaxRecipients)
	switch {
	case errors.Is(err, errs.ErrConflict):
		return model.ReportRecipient{}, errs.E(errs.Invalid, "too_many_recipients",
			"A site's reports go to at most %d addresses; remove one first.", MaxRecipients).WithField("email")
	case errors.Is(err, errs.ErrNotFound): // the site went meanwhile
		return model.ReportRecipient{}, errs.E(errs.NotFound, "site_not_found", "site not found").WithField("site_id")
	}
	return r, err
}

// RemoveRecipient takes an address off a site's reports, with the record
// of what was sent to it.
func (s *Service) RemoveRecipient(ctx context.Context, p auth.Principal, site model.SiteID, id model.ReportRecipientID) error {
	if err := s.manageable(ctx, p, site); err != nil {
		return err
	}
	err := s.store.DeleteReportRecipient(ctx, site, id)
	if errors.Is(err, errs.ErrNotFound) {
		return errs.E(errs.NotFound, "recipient_not_found", "recipient not found")
	}
	return err
}

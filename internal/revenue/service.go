// Package revenue records payments and refunds from the payments API, the
// tracker's revenue events and the payment providers' webhooks into one
// ledger (Postgres), deduplicated by (site, provider, transaction id, kind);
// converts them into the site's base currency at the ECB rate of their day;
// attributes them to the paying visitor's traffic source; and exports them
// to ClickHouse for the revenue reports.
package revenue

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/ingest"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/money"
)

// Ledger is the Postgres side.
type Ledger interface {
	InsertPayment(ctx context.Context, p model.Payment) (model.Payment, bool, error)
	PaymentByKey(ctx context.Context, site model.SiteID, provider, transactionID string, kind model.PaymentKind) (model.Payment, error)
	PaymentByRef(ctx context.Context, site model.SiteID, provider, ref string) (model.Payment, error)
	// InsertRefund inserts a refund of the payment its provider knows as
	// p.PaymentRef, whether tally has that payment or not, as settle gives
	// it from what is refunded of that payment already: the sum of the
	// refunds recorded of it (but for p's own transaction id: a repeat of
	// it is a duplicate, not one more refund), chargebacks included, less
	// its payments marked Reinstatement, never below zero. The refunds of
	// one payment are settled one at a time; settle must not use the
	// ledger, and its error is returned as it is.
	InsertRefund(ctx context.Context, p model.Payment, settle func(refunded int64) (model.Payment, error)) (model.Payment, bool, error)
	// UnexportedPayments locks up to limit rows to export, none held at
	// now, and marks them exported when export succeeds.
	UnexportedPayments(ctx context.Context, now time.Time, limit int, export func([]model.Payment) error) (int, error)
	// LinkRefunds gives the refunds of paid that name no payment and are
	// not exported yet paid's id, visitor and attribution, and releases them.
	LinkRefunds(ctx context.Context, paid model.Payment) (int64, error)
	// PendingPayments lists up to limit payments waiting for a rate, in
	// the order of (OccurredAt, ID), from the one after after (the zero
	// Payment: from the first).
	PendingPayments(ctx context.Context, after model.Payment, limit int) ([]model.Payment, error)
	SetConversion(ctx context.Context, id string, baseAmount int64, rate string, day time.Time) error
	RateOn(ctx context.Context, currency string, day time.Time) (string, time.Time, bool, error)
	// LatestRate is the latest rate of a currency on or before day,
	// however old (errs.ErrNotFound when it has none).
	LatestRate(ctx context.Context, currency string, day time.Time) (string, error)
	CheckoutVisitor(ctx context.Context, site model.SiteID, checkoutSession string) (uint64, error)
	CheckoutClaims(ctx context.Context, site model.SiteID, checkoutSession string, since time.Time) ([]model.CheckoutClaim, error)
	RememberCheckout(ctx context.Context, site model.SiteID, checkoutSession string, visitor uint64, at time.Time) error
	ForgetClaims(ctx context.Context, before time.Time, keep string) (int64, error)
	DeletePayments(ctx context.Context, site model.SiteID, provider string) (int64, error)
	// ProviderSecrets are a site's signing secrets for a provider
	// (errs.ErrNotFound when it has none).
	ProviderSecrets(ctx context.Context, site model.SiteID, p model.Provider) ([]string, error)
}

// Warehouse is the ClickHouse side.
type Warehouse interface {
	VisitorSessions(ctx context.Context, site model.SiteID, visitor uint64, from, to time.Time) ([]model.SessionTouch, error)
	InsertPayments(ctx context.Context, rows []model.Payment, writtenAt time.Time) error
	ExistingPaymentIDs(ctx context.Context, ids []string) (map[string]bool, error)
	DeletePayments(ctx context.Context, site model.SiteID, provider string) error
}

// EventWriter stores event rows (the ingest write buffer), for payments that
// name an event and so appear in the Events report.
type EventWriter interface {
	Write(ctx context.Context, rec model.Record) error
}

// Service is the revenue domain.
type Service struct {
	ledger    Ledger
	warehouse Warehouse
	events    EventWriter
	now       func() time.Time
	log       *slog.Logger
	exported  chan struct{} // wakes the exporter
	rates     rateCache     // latest rates, to hold client revenue to a site's cap
}

// NewService wires the revenue service.
func NewService(ledger Ledger, warehouse Warehouse, events EventWriter, now func() time.Time, log *slog.Logger) *Service {
	return &Service{ledger: ledger, warehouse: warehouse, events: events, now: now, log: log, exported: make(chan struct{}, 1)}
}

// ErrNothingToRefund: a refund of a payment whose refunds are all recorded.
var ErrNothingToRefund = errs.InvalidField("amount", "the payment has no amount left to refund")

// maxRevenueMinor bounds one payment or refund, from any source: 10^12 minor
// units, far below what converting it or summing a site's payments could
// overflow.
const maxRevenueMinor = 1_000_000_000_000

// RefundHold is how long a refund of a payment tally does not hold yet waits
// for that payment before it is exported as it is, unattributed. Providers
// deliver out of order and retry for days, so a refund may come first; the
// payment, recorded within the hold, gives it its visitor and attribution
// before it reaches ClickHouse, where a row cannot be corrected (a second
// copy would count the refund twice). A refund whose payment never comes (one
// made before the site used tally) waits this long and no longer.
const RefundHold = time.Hour

// AttributionWindow is how far back a payment looks for the visits that led to it.
const AttributionWindow = 90 * 24 * time.Hour

// Incoming is a payment, refund or failed attempt about to be recorded.
type Incoming struct {
	Site          model.Site
	Provider      string
	TransactionID string
	Kind          model.PaymentKind
	Amount        int64 // positive minor units
	Currency      string
	OccurredAt    time.Time
	PaymentRef    string
	RefundOf      string // the provider's ref of the refunded payment
	// ReinstateOf, for a payment, is the provider's ref of a payment whose
	// chargeback a won dispute undoes: this payment is that money coming
	// back, with that payment's visitor and attribution.
	ReinstateOf string
	// CumulativeRefund: Amount is the total refunded so far for RefundOf
	// (Stripe's amount_refunded); what is refunded of it already is
	// subtracted: the refunds recorded, less what won disputes brought back
	// (a chargeback is recorded as a refund, and such totals count no
	// dispute).
	CumulativeRefund bool
	// The visitor: known id, else the client's id (analytics_vid), else the
	// checkout session or subscription the tracker or a checkout linked to one.
	Visitor         uint64
	ClientVisitorID string
	CheckoutSession string
	SubscriptionID  string
	EventName       string
	// EmitEvent writes an event row too, so the payment shows in the Events report.
	EmitEvent bool
	Metadata  []byte
	// Hint is the attribution of the session the payment happened in, when
	// the tracker sent it (not yet in ClickHouse).
	Hint *model.Touch
}

// Recorded is the outcome of Record.
type Recorded struct {
	Payment   model.Payment
	Duplicate bool
}

// Record stores an incoming payment once: resolves the visitor, links a
// refund to its payment, attributes, converts, and inserts into the ledger
// (a duplicate returns the first copy).
func (s *Service) Record(ctx context.Context, in Incoming) (Recorded, error) {
	if in.Amount > maxRevenueMinor {
		return Recorded{}, errs.InvalidField("amount", "must be at most 10^12 minor units")
	}
	occurred, err := s.occurredAt(in.OccurredAt)
	if err != nil {
		return Recorded{}, err
	}
	// the event name is shown in the revenue and events reports: it follows
	// ingest's rule for text, whichever source sent it
	p := model.Payment{SiteID: in.Site.ID, Provider: in.Provider, TransactionID: in.TransactionID, Kind: in.Kind,
		Amount: in.Amount, Currency: in.Currency, OccurredAt: occurred,
		PaymentRef: in.PaymentRef, EventName: ingest.PlainText(in.EventName), Metadata: in.Metadata, BaseCurrency: in.Site.BaseCurrency}
	if p.EventName == "" {
		p.EventName = string(in.Kind)
	}
	var settle func(p *model.Payment, refunded int64) error
	linked := false // a refund of a payment tally has: its visitor and attribution are the payment's, even none
	if in.Kind == model.KindRefund && in.RefundOf != "" {
		if settle, linked, err = s.linkRefund(ctx, &p, in); err != nil {
			return Recorded{}, err
		}
	}
	if in.Kind == model.KindPayment && in.ReinstateOf != "" {
		if linked, err = s.linkReinstated(ctx, &p, in); err != nil {
			return Recorded{}, err
		}
	}
	if p.Kind == model.KindRefund && in.RefundOf != "" && !linked {
		held := s.now().Add(RefundHold)
		p.HeldUntil = &held
	}
	if p.VisitorID == 0 && !linked {
		if p.VisitorID, err = s.visitor(ctx, in); err != nil {
			return Recorded{}, err
		}
	}
	if p.Attribution == nil && p.VisitorID != 0 && !linked {
		if p.Attribution, err = s.attribute(ctx, in.Site.ID, p.VisitorID, p.OccurredAt, in.Hint); err != nil {
			return Recorded{}, err
		}
	}
	fx, err := s.ratesFor(ctx, p.Currency, p.BaseCurrency, p.OccurredAt)
	if err != nil {
		return Recorded{}, err
	}
	var stored model.Payment
	var inserted bool
	switch {
	case settle == nil && p.Amount <= 0:
		err = errNothingNew
	case settle == nil:
		if err := fx.convert(&p); err != nil {
			return Recorded{}, err
		}
		stored, inserted, err = s.ledger.InsertPayment(ctx, p)
	default:
		stored, inserted, err = s.ledger.InsertRefund(ctx, p, func(refunded int64) (model.Payment, error) {
			q := p
			if err := settle(&q, refunded); err != nil {
				return q, err
			}
			if q.Amount <= 0 {
				return q, errNothingNew
			}
			return q, fx.convert(&q)
		})
	}
	if errors.Is(err, errNothingNew) {
		// a cumulative refund total that adds nothing: a redelivery, or a
		// state tally has already recorded
		if first, err := s.ledger.PaymentByKey(ctx, p.SiteID, p.Provider, p.TransactionID, p.Kind); err == nil {
			return Recorded{Payment: first, Duplicate: true}, nil
		}
		return Recorded{}, ErrNothingToRefund
	}
	if err != nil {
		return Recorded{}, fmt.Errorf("revenue: record: %w", err)
	}
	if stored.Kind == model.KindPayment && in.ReinstateOf == "" || stored.HeldUntil != nil && stored.RefundOf == "" {
		// on a duplicate too: a delivery retried because linking failed
		if err := s.linkHeld(ctx, stored); err != nil {
			return Recorded{}, err
		}
	}
	if inserted {
		if in.EmitEvent && p.Kind == model.KindPayment {
			s.emitEvent(ctx, stored)
		}
		s.wake()
	}
	return Recorded{Payment: stored, Duplicate: !inserted}, nil
}

// errNothingNew: a running refund total that adds nothing to the refunds
// recorded of its payment.
var errNothingNew = errors.New("the refund adds nothing to those recorded")

// linkRefund finds the refunded payment (found: tally has it); the refund
// inherits its visitor and attribution, none when it has none. A refund
// keeps the provider's id of its payment, so that a running total is
// counted once even when tally never saw the payment. When
// what is refunded already matters, linkRefund returns settle, which the
// ledger calls with that sum (chargebacks count as refunds, and a won
// dispute's money back is taken off): a cumulative amount becomes this
// refund's share, and a refund sent through the payments API is checked
// against its payment (a provider's is the provider's word): in its
// currency, and no more than is left of it.
func (s *Service) linkRefund(ctx context.Context, p *model.Payment, in Incoming) (settle func(p *model.Payment, refunded int64) error, found bool, err error) {
	p.PaymentRef = in.RefundOf
	paid, err := s.ledger.PaymentByRef(ctx, in.Site.ID, in.Provider, in.RefundOf)
	found = err == nil
	if err != nil && !errors.Is(err, errs.ErrNotFound) {
		return nil, false, fmt.Errorf("revenue: link refund: %w", err)
	}
	if found {
		p.RefundOf, p.VisitorID, p.Attribution = paid.ID, paid.VisitorID, paid.Attribution
	}
	checked := found && in.Provider == model.ProviderAPI
	if !in.CumulativeRefund && !checked {
		return nil, found, nil
	}
	return func(p *model.Payment, refunded int64) error {
		if in.CumulativeRefund {
			p.Amount -= refunded
		}
		if !checked {
			return nil
		}
		if p.Currency != paid.Currency {
			return errs.InvalidField("currency", "a refund is in the currency of its payment (%s)", paid.Currency)
		}
		if left := paid.Amount - refunded; p.Amount > left {
			return errs.InvalidField("amount", "more than is left to refund of the payment (%s)", money.Format(left, paid.Currency))
		}
		return nil
	}, found, nil
}

// linkReinstated gives money a won dispute returns the visitor and
// attribution of the payment disputed, when tally has it (found), as its
// chargeback, a refund of that payment, has them; else it is attributed
// as any payment. It keeps that payment's ref, marked as a reinstatement
// so that the refunds settled later take it off their chargeback, and does
// not link held refunds: they wait for the payment itself.
func (s *Service) linkReinstated(ctx context.Context, p *model.Payment, in Incoming) (found bool, err error) {
	p.PaymentRef, p.Reinstatement = in.ReinstateOf, true
	paid, err := s.ledger.PaymentByRef(ctx, in.Site.ID, in.Provider, in.ReinstateOf)
	if errors.Is(err, errs.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("revenue: link reinstated payment: %w", err)
	}
	p.VisitorID, p.Attribution = paid.VisitorID, paid.Attribution
	return true, nil
}

// occurredAt is when a payment's money moved, to the second: the time it
// names, or now when it names none (a webhook whose body holds no time tally
// can read). A time before 2000 or more than an hour ahead of the clock is
// refused, whatever the source: no rate converts it, and no report would
// show it.
func (s *Service) occurredAt(t time.Time) (time.Time, error) {
	now := s.now()
	if t.IsZero() {
		t = now
	}
	if t.Year() < 2000 || t.After(now.Add(time.Hour)) {
		return time.Time{}, errs.InvalidField("timestamp", "must be in the years since 2000 and not in the future")
	}
	return t.UTC().Truncate(time.Second), nil
}

// linkHeld links the refunds of a payment recorded before it, when tally
// holds the payment: after a payment is recorded, and after a refund is
// recorded without its payment. Both are needed, and enough, when a payment
// and its refund are recorded at the same time (two servers): each is
// committed before linkHeld reads the other, and in Postgres's read committed
// a statement sees all that was committed before it started. So if the
// payment's LinkRefunds does not see the refund, the refund was committed
// after that statement started, after the payment was committed, and the
// refund's own PaymentByRef finds the payment. The refund is linked at least
// once, and at most once: LinkRefunds takes only refunds that name no
// payment (the second of two concurrent updates waits for the first and
// re-checks). The exporter does not take a refund before it is linked while
// it is held (RefundHold); after the hold, a refund the exporter has locked
// is linked only if the export fails: LinkRefunds waits for the lock and
// leaves a refund marked exported as it is.
func (s *Service) linkHeld(ctx context.Context, p model.Payment) error {
	if p.PaymentRef == "" {
		return nil
	}
	paid := p
	if p.Kind != model.KindPayment {
		var err error
		paid, err = s.ledger.PaymentByRef(ctx, p.SiteID, p.Provider, p.PaymentRef)
		if errors.Is(err, errs.ErrNotFound) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("revenue: link held refunds: %w", err)
		}
	}
	n, err := s.ledger.LinkRefunds(ctx, paid)
	if err != nil {
		return fmt.Errorf("revenue: link held refunds: %w", err)
	}
	if n > 0 {
		s.wake()
	}
	return nil
}

// visitor finds the paying visitor from what the payment carries.
func (s *Service) visitor(ctx context.Context, in Incoming) (uint64, error) {
	if in.Visitor != 0 {
		return in.Visitor, nil
	}
	if in.ClientVisitorID != "" {
		return clientVisitor(in.Site.ID, in.ClientVisitorID), nil
	}
	if in.CheckoutSession != "" {
		v, err := s.claimant(ctx, in.Site.ID, in.CheckoutSession)
		if v != 0 || err != nil {
			return v, err
		}
	}
	if in.SubscriptionID == "" {
		return 0, nil
	}
	v, err := s.ledger.CheckoutVisitor(ctx, in.Site.ID, subscriptionKey(in.SubscriptionID))
	if errors.Is(err, errs.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("revenue: subscription visitor: %w", err)
	}
	return v, nil
}

// ClaimTTL is how long a visitor's claim of a checkout session stands.
const ClaimTTL = 7 * 24 * time.Hour

// claimant is the buyer of a checkout session: of the visitors who claimed
// it through the tracking script (unsigned: anyone who knows the id can),
// the first who had viewed a page of the site before claiming it, within
// ClaimTTL. 0 when none did.
func (s *Service) claimant(ctx context.Context, site model.SiteID, checkoutSession string) (uint64, error) {
	claims, err := s.ledger.CheckoutClaims(ctx, site, checkoutSession, s.now().Add(-ClaimTTL))
	if err != nil {
		return 0, fmt.Errorf("revenue: checkout claims: %w", err)
	}
	for _, c := range claims {
		earlier, err := s.warehouse.VisitorSessions(ctx, site, c.Visitor, c.At.Add(-AttributionWindow), c.At.Add(-time.Second))
		if err != nil {
			return 0, fmt.Errorf("revenue: checkout claims: %w", err)
		}
		if len(earlier) > 0 {
			return c.Visitor, nil
		}
	}
	return 0, nil
}

func subscriptionKey(id string) string {
	if id == "" {
		return ""
	}
	return model.SubscriptionKeyPrefix + id
}

// attribute applies the attribution rules, within the attribution window:
// the last session before the payment that is not direct (see direct; else
// the last session), the last session (direct included), and the first
// session. No session: unattributed.
func (s *Service) attribute(ctx context.Context, site model.SiteID, visitor uint64, at time.Time, hint *model.Touch) (*model.PaymentAttribution, error) {
	sessions, err := s.warehouse.VisitorSessions(ctx, site, visitor, at.Add(-AttributionWindow), at)
	if err != nil {
		return nil, fmt.Errorf("revenue: attribute: %w", err)
	}
	if hint != nil {
		sessions = append(sessions, model.SessionTouch{Start: at, Touch: *hint})
	}
	if len(sessions) == 0 {
		return nil, nil
	}
	latest := sessions[len(sessions)-1].Touch
	a := &model.PaymentAttribution{First: sessions[0].Touch, LastNonDirect: latest, Latest: &latest}
	for i := len(sessions) - 1; i >= 0; i-- {
		if !direct(sessions[i].Touch) {
			a.LastNonDirect = sessions[i].Touch
			break
		}
	}
	return a, nil
}

// direct reports whether a session is direct traffic to the last
// non-direct model: no source (no referrer, no utm_source), no utm_medium
// and no utm_campaign — the visits the channels report calls Direct
// (stats.Channel). A visit tagged utm_medium=email or with a utm_campaign
// alone came from a campaign, as GA4 and Plausible count it, though its
// source reads Direct / None. (utm_content and utm_term name a link or a
// keyword within a campaign, not where a visit came from: alone, such a
// visit stays direct, in both.)
func direct(t model.Touch) bool {
	return t.SourceType == model.SourceDirect && t.UTMSource == "" && t.UTMMedium == "" && t.UTMCampaign == ""
}

// convert sets the base amount when the rates of the payment's day are known.
// fx is what converting an amount into a base currency takes: the ECB rates
// of the day of the payment, read beforehand.
type fx struct {
	from, to         string
	rateFrom, rateTo string
	day              time.Time
	ok               bool // false while a rate is not published yet
}

// convert sets p's amount in its base currency, unless a rate is missing
// (the payment then waits, it is never guessed).
func (f fx) convert(p *model.Payment) error {
	base, rate, ok, err := f.amount(p.Amount)
	if ok {
		p.BaseAmount, p.FXRate, p.FXDay = &base, rate, &f.day
	}
	return err
}

// amount converts amount minor units of f.from into f.to; ok is false while
// a rate is missing.
func (f fx) amount(amount int64) (base int64, rate string, ok bool, err error) {
	if !f.ok {
		return 0, "", false, nil
	}
	if f.from == f.to {
		return amount, "1", true, nil
	}
	if base, rate, err = money.Convert(amount, f.from, f.to, f.rateFrom, f.rateTo); err != nil {
		return 0, "", false, fmt.Errorf("revenue: convert: %w", err)
	}
	return base, rate, true, nil
}

// ratesFor reads the ECB rates of the day of at (in UTC, whatever at's
// location) that convert from into to.
func (s *Service) ratesFor(ctx context.Context, from, to string, at time.Time) (fx, error) {
	at = at.UTC()
	f := fx{from: from, to: to, rateFrom: "1", rateTo: "1", day: time.Date(at.Year(), at.Month(), at.Day(), 0, 0, 0, 0, time.UTC)}
	if from == to {
		f.ok = true
		return f, nil
	}
	for _, cur := range []struct {
		code string
		rate *string
	}{{from, &f.rateFrom}, {to, &f.rateTo}} {
		if cur.code == "EUR" {
			continue
		}
		rate, on, settled, err := s.ledger.RateOn(ctx, cur.code, f.day)
		if errors.Is(err, errs.ErrNotFound) || (err == nil && !on.Equal(f.day) && !settled) {
			return f, nil
		}
		if err != nil {
			return f, fmt.Errorf("revenue: rate of %s: %w", cur.code, err)
		}
		*cur.rate = rate
	}
	f.ok = true
	return f, nil
}

// emitEvent writes the payment as a custom event with revenue.
func (s *Service) emitEvent(ctx context.Context, p model.Payment) {
	row := &model.EventRow{SiteID: p.SiteID, Timestamp: p.OccurredAt, EventID: p.ID, Name: p.EventName,
		VisitorID: p.VisitorID, RevenueAmount: p.Amount, RevenueCurrency: p.Currency}
	if a := p.Attribution; a != nil {
		row.Pathname, row.Attribution = a.LastNonDirect.EntryPage, a.LastNonDirect.Attribution()
	}
	if err := s.events.Write(ctx, model.Record{Event: row, NoSession: true}); err != nil {
		s.log.Warn("revenue: the payment's event could not be stored", "payment_id", p.ID, "err", err)
	}
}

// wake asks the exporter to run now.
func (s *Service) wake() {
	select {
	case s.exported <- struct{}{}:
	default:
	}
}

// RecordTracked records the revenue of a custom event as a payment, so it
// counts in the revenue reports: from the tracking script's
// analytics('event', name, {revenue}) when client (model.ProviderTracker,
// kept apart from verified revenue unless the site includes it), else from
// the Events API. The event id deduplicates.
func (s *Service) RecordTracked(ctx context.Context, site model.Site, eventID string, at time.Time, visitor uint64,
	name string, amount int64, currency string, hint *model.Touch, client bool) error {
	provider := model.ProviderEvents
	if client {
		provider = model.ProviderTracker
	}
	_, err := s.Record(ctx, Incoming{Site: site, Provider: provider, TransactionID: eventID, Kind: model.KindPayment,
		Amount: amount, Currency: currency, OccurredAt: at, PaymentRef: eventID, Visitor: visitor, EventName: name, Hint: hint})
	return err
}

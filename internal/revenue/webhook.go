package revenue

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/revenue/providers"
)

// SiteLookup finds a site by id (no user: webhooks authenticate by signature).
type SiteLookup interface {
	Site(ctx context.Context, id model.SiteID) (model.Site, error)
}

// WebhookResult is what a provider is told.
type WebhookResult struct {
	Received  bool
	Ignored   bool
	Reason    string
	PaymentID string
	Duplicate bool
}

// Allowance spends one delivery of a site's allowance of signed webhooks,
// and is the refusal (RateLimited) once it is spent.
type Allowance func(site model.SiteID) error

// Webhook verifies a provider's notification with the site's signing
// secrets for the provider (any one of them will do) and records the money
// it reports. Nothing is recorded unless the signature holds; a signed
// delivery then spends one of the site's allowance (spend), and records
// nothing either when it is refused: the secret is the site owner's, so
// the signature alone bounds nothing. Kinds tally does not subscribe to,
// and events of a provider's test mode, are acknowledged and ignored.
func (s *Service) Webhook(ctx context.Context, sites SiteLookup, provider string, site model.SiteID, h http.Header, body []byte,
	spend Allowance) (WebhookResult, error) {
	prov, ok := providers.Get(provider)
	if !ok {
		return WebhookResult{}, errs.E(errs.NotFound, "not_found", "unknown payment provider %q", provider)
	}
	if site == "" {
		return WebhookResult{}, errs.InvalidField("site_id", "site_id is required in the query string")
	}
	st, err := sites.Site(ctx, site)
	if errors.Is(err, errs.ErrNotFound) {
		// answered like a bad signature: without the secret, nobody learns
		// which site ids exist
		return WebhookResult{}, errs.E(errs.Unauthenticated, "unauthorized", "invalid webhook signature")
	}
	if err != nil {
		return WebhookResult{}, err
	}
	secrets, err := s.ledger.ProviderSecrets(ctx, site, model.Provider(provider))
	if errors.Is(err, errs.ErrNotFound) {
		return WebhookResult{}, errs.E(errs.Unauthenticated, "unauthorized", "invalid webhook signature").
			Wrap(errors.New("no signing secret is configured for this provider"))
	}
	if err != nil {
		return WebhookResult{}, err
	}
	if err := providers.VerifyAny(prov, h, body, secrets, s.now()); err != nil {
		return WebhookResult{}, errs.E(errs.Unauthenticated, "unauthorized", "invalid webhook signature").Wrap(err)
	}
	if err := spend(st.ID); err != nil {
		return WebhookResult{}, err
	}
	n, err := prov.Parse(body)
	if err != nil {
		return WebhookResult{}, errs.E(errs.Invalid, "invalid_request", "the notification could not be read").Wrap(err)
	}
	if n.Ignored {
		// a test-mode checkout links nothing: its subscription never bills live
		if !n.TestMode {
			s.rememberSubscription(ctx, st, n)
		}
		return WebhookResult{Received: true, Ignored: true, Reason: n.IgnoreReason}, nil
	}
	rec, err := s.Record(ctx, Incoming{Site: st, Provider: provider, TransactionID: n.TransactionID,
		Kind: model.PaymentKind(n.Type), Amount: n.Amount, Currency: strings.ToUpper(n.Currency), OccurredAt: n.OccurredAt,
		PaymentRef: n.PaymentRef, RefundOf: n.RefundOf, ReinstateOf: n.ReinstateOf, CumulativeRefund: n.CumulativeRefund,
		ClientVisitorID: n.VisitorID, CheckoutSession: n.CheckoutSession, SubscriptionID: n.SubscriptionID})
	if errors.Is(err, ErrNothingToRefund) {
		return WebhookResult{Received: true, Ignored: true, Reason: "every refund of this payment is recorded already"}, nil
	}
	if err != nil {
		return WebhookResult{}, err
	}
	if n.Type == providers.Payment {
		s.rememberSubscription(ctx, st, n)
	}
	return WebhookResult{Received: true, PaymentID: rec.Payment.ID, Duplicate: rec.Duplicate}, nil
}

// rememberSubscription links a subscription to the visitor of the checkout
// that created it, so that its invoices (renewals included) are attributed.
func (s *Service) rememberSubscription(ctx context.Context, site model.Site, n providers.Notification) {
	sub := n.CheckoutSubscriptionID
	if sub == "" {
		sub = n.SubscriptionID
	}
	if sub == "" {
		return
	}
	visitor, err := s.visitor(ctx, Incoming{Site: site, ClientVisitorID: n.VisitorID, CheckoutSession: n.CheckoutSession})
	if err != nil || visitor == 0 {
		return
	}
	if err := s.ledger.RememberCheckout(ctx, site.ID, subscriptionKey(sub), visitor, s.now()); err != nil {
		s.log.Warn("revenue: could not link a subscription to its visitor", "err", err)
	}
}

// Package providers reads and authenticates the webhooks of the payment
// providers tally takes revenue from: provider_a (Stripe), provider_b (Lemon
// Squeezy), provider_c (Paddle Billing) and provider_d (Polar). Each provider
// lives in a file of its own behind the Provider interface; the package does
// no I/O and knows nothing of sites, ledgers or currencies beyond the payload.
//
// A notification becomes money only after Verify accepted it with the site's
// signing secret; Parse then turns the provider's payload into a
// Notification that says what moved (a payment, a refund, a failed attempt),
// how much, and which visitor it may belong to.
package providers

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// ErrSignature is wrapped by every Verify error: a missing or malformed
// header, a wrong signature, a stale timestamp or no secret at all. The
// message says which, and never contains the secret.
var ErrSignature = errors.New("webhook signature")

// ErrPayload is wrapped by every Parse error: the body is not JSON of the
// provider's shape, or a field tally needs to record the money is missing.
var ErrPayload = errors.New("webhook payload")

// Tolerance is how far a signed timestamp may be from the clock, either way
// (Stripe's libraries default to 300 seconds; Standard Webhooks uses 5 minutes).
const Tolerance = 5 * time.Minute

// Provider authenticates and reads one payment provider's webhooks.
type Provider interface {
	// Name is tally's name of the provider: "provider_a" … "provider_d".
	Name() string
	// Verify checks the request's signature with the site's secret. Any
	// problem is an error wrapping ErrSignature.
	Verify(h http.Header, body []byte, secret string, now time.Time) error
	// Parse reads a verified body. Malformed JSON or a missing required
	// field is an error wrapping ErrPayload; a kind tally does not subscribe
	// to is a Notification with Ignored set, not an error.
	Parse(body []byte) (Notification, error)
}

// Type is what a notification's money is.
type Type string

// The types of notification; the values are those of model.PaymentKind.
const (
	// Payment is money received.
	Payment Type = "payment"
	// Refund is money given back, a chargeback included (a won dispute's
	// money coming back is a Payment with ReinstateOf set).
	Refund Type = "refund"
	// Failed is a failed payment attempt: recorded, never revenue.
	Failed Type = "failed"
)

// Notification is what one webhook delivery says, in tally's terms.
type Notification struct {
	// Kind is the provider's event kind, e.g. "checkout.session.completed".
	Kind string
	// EventID is the provider's id of the event when the body carries one
	// (Stripe evt_…, Paddle evt_…); Lemon Squeezy and Polar bodies have none.
	EventID string
	// Ignored: an unsubscribed kind, a subscribed kind that must not count
	// (IgnoreReason says why), or an event of the provider's test mode.
	// Except in test mode, the ids and attribution hints below are still
	// filled where the payload has them, so a caller can link a checkout to
	// the subscription it created; the money fields are then zero.
	Ignored      bool
	IgnoreReason string
	// TestMode: the provider says the notification comes from its test
	// mode (Stripe's livemode false, Lemon Squeezy's test_mode true). It is
	// Ignored and carries no ids or hints: a test payment is no revenue, and
	// a test subscription never bills in live mode, so there is nothing to
	// link either.
	TestMode bool

	Type Type
	// TransactionID is the deduplication id of this money movement; tally
	// dedups by (site, provider, TransactionID, Type).
	TransactionID string
	// PaymentRef is the provider's id that refunds of this payment will
	// reference: Stripe's payment_intent, Lemon Squeezy's order id, Paddle's
	// transaction id, Polar's order id.
	PaymentRef string
	// RefundOf, for refunds, is the PaymentRef of the refunded payment.
	RefundOf string
	// ReinstateOf, for a payment, says it is money a chargeback took and a
	// won dispute returned (Stripe's charge.dispute.funds_reinstated,
	// Paddle's chargeback_reverse): the PaymentRef of the payment disputed,
	// whose visitor and attribution it takes. Its chargeback was a refund of
	// that payment, so the two net out and the payment counts again.
	ReinstateOf string
	// Amount is in minor units and always positive; a refund is a positive
	// amount of Type Refund.
	Amount int64
	// Tax is the part of Amount that is tax, when the payload says (else 0).
	// Amounts are what the customer paid, tax included, for every provider.
	Tax int64
	// CumulativeRefund: Amount is the total refunded so far on RefundOf, not
	// this refund alone (the provider only sent the running total); the
	// caller subtracts what it already recorded as refunded of RefundOf. Such
	// a total counts refunds, not disputes, so a chargeback a won dispute
	// reversed (ReinstateOf) is not part of what is subtracted.
	CumulativeRefund bool
	// Currency is the ISO 4217 code, upper case.
	Currency   string
	OccurredAt time.Time

	// VisitorID is the tracker's visitor id when the merchant passed it
	// through checkout metadata or custom data (key "analytics_vid" or
	// "visitor_id").
	VisitorID string
	// CheckoutSession is the provider's checkout id (Stripe cs_…, Polar's
	// checkout id, Paddle's checkout transaction), to match the id the
	// tracker captured on the landing page.
	CheckoutSession string
	// SubscriptionID is the subscription this money belongs to, so an
	// invoice can find the visitor of the checkout that created it.
	SubscriptionID string
	// CheckoutSubscriptionID is set when this notification comes from the
	// checkout that created the subscription (a Stripe subscription-mode
	// checkout, ignored as money, or a first Paddle or Polar payment), so the
	// caller can remember checkout session and visitor → subscription.
	CheckoutSubscriptionID string
}

var registry = map[string]Provider{
	stripeName:       stripe{},
	lemonSqueezyName: lemonSqueezy{},
	paddleName:       paddle{},
	polarName:        polar{},
}

// Get returns a provider by tally's name of it.
func Get(name string) (Provider, bool) {
	p, ok := registry[name]
	return p, ok
}

// Visitor id keys a merchant may set in checkout metadata or custom data.
var visitorKeys = []string{"analytics_vid", "visitor_id"}

// visitorFrom returns the first visitor id found in the maps, in order.
func visitorFrom(maps ...map[string]any) string {
	for _, m := range maps {
		for _, k := range visitorKeys {
			if s, ok := m[k].(string); ok && strings.TrimSpace(s) != "" {
				return strings.TrimSpace(s)
			}
		}
	}
	return ""
}

// object decodes raw as a JSON object, or returns nil for anything else
// (null, a string): metadata is a hint, never a reason to reject money.
func object(raw json.RawMessage) map[string]any {
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	return m
}

// currency upper-cases an ISO 4217 code and checks its shape.
func currency(name, code string) (string, error) {
	c := strings.ToUpper(strings.TrimSpace(code))
	if len(c) != 3 {
		return "", payloadErr(name, "currency %q is not an ISO 4217 code", code)
	}
	for _, r := range c {
		if r < 'A' || r > 'Z' {
			return "", payloadErr(name, "currency %q is not an ISO 4217 code", code)
		}
	}
	return c, nil
}

// parseTime reads an RFC 3339 timestamp ("" gives the zero time).
func parseTime(s string) (time.Time, bool) {
	if s == "" {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, false
	}
	return t.UTC(), true
}

// firstTime returns the first of the RFC 3339 timestamps that parses.
func firstTime(values ...string) time.Time {
	for _, v := range values {
		if t, ok := parseTime(v); ok {
			return t
		}
	}
	return time.Time{}
}

func ignored(kind, reason string) Notification {
	return Notification{Kind: kind, Ignored: true, IgnoreReason: reason}
}

// testModeReason is the answer to every notification of a provider's test
// mode.
const testModeReason = "test mode: not counted as revenue"

// testMode is the notification of a test-mode event of kind: acknowledged
// (a provider retries a delivery it sees refused) and recorded as nothing.
func testMode(kind, eventID string) Notification {
	return Notification{Kind: kind, EventID: eventID, Ignored: true, IgnoreReason: testModeReason, TestMode: true}
}

func unsubscribed(kind string) Notification {
	return ignored(kind, fmt.Sprintf("tally does not subscribe to %q", kind))
}

func payloadErr(provider, format string, args ...any) error {
	return fmt.Errorf("%s: %w: %s", provider, ErrPayload, fmt.Sprintf(format, args...))
}

// errMismatch: the signature is well formed and not made with the secret.
var errMismatch = errors.New("signature does not match")

func mismatch(provider string) error {
	return fmt.Errorf("%s: %w: %w", provider, ErrSignature, errMismatch)
}

// VerifyAny checks a request's signature with each of a site's secrets for
// p, in order, and stops at the first that verifies it. When none does, the
// error is the first that is not a plain mismatch (a missing or malformed
// header, the same whatever the secret; a stale timestamp, once a secret
// matched), else a mismatch. It never says which secret matched or failed,
// nor how many there are.
func VerifyAny(p Provider, h http.Header, body []byte, secrets []string, now time.Time) error {
	if len(secrets) == 0 {
		return requireSecret(p.Name(), "")
	}
	var err error
	for _, secret := range secrets {
		if err = p.Verify(h, body, secret, now); err == nil || !errors.Is(err, errMismatch) {
			return err
		}
	}
	return err
}

func signatureErr(provider, format string, args ...any) error {
	return fmt.Errorf("%s: %w: %s", provider, ErrSignature, fmt.Sprintf(format, args...))
}

// decode unmarshals a body, wrapping failures in ErrPayload.
func decode(provider string, body []byte, v any) error {
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("%s: %w: %w", provider, ErrPayload, err)
	}
	return nil
}

// hmacSHA256 is HMAC-SHA256(key, parts…).
func hmacSHA256(key []byte, parts ...[]byte) []byte {
	m := hmac.New(sha256.New, key)
	for _, p := range parts {
		m.Write(p)
	}
	return m.Sum(nil)
}

// anyEqual reports, in constant time per candidate, whether want is among got.
func anyEqual(want []byte, got [][]byte) bool {
	ok := false
	for _, g := range got {
		if hmac.Equal(want, g) {
			ok = true
		}
	}
	return ok
}

// signedHeader is the signature scheme Stripe and Paddle share: one header
// of key=value items, sep-separated, holding a unix timestamp (tsKey) and
// one or more hex HMAC-SHA256s (sigKey) of "<timestamp><joiner><raw body>" —
// several while a secret is rotated. Items of other keys, and signatures
// that are not hex, are other schemes' and skipped.
type signedHeader struct {
	provider, header, sep, tsKey, sigKey, joiner string
}

func (sh signedHeader) verify(h http.Header, body []byte, secret string, now time.Time) error {
	if err := requireSecret(sh.provider, secret); err != nil {
		return err
	}
	header := strings.TrimSpace(h.Get(sh.header))
	if header == "" {
		return signatureErr(sh.provider, "missing %s header", sh.header)
	}
	malformed := func(why string) error {
		return signatureErr(sh.provider, "malformed %s header: %s", sh.header, why)
	}
	var (
		ts   string
		unix int64
		sigs [][]byte
	)
	for _, item := range strings.Split(header, sh.sep) {
		k, v, ok := strings.Cut(strings.TrimSpace(item), "=")
		if !ok {
			return malformed("element without '='")
		}
		switch k {
		case sh.tsKey:
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || ts != "" {
				return malformed("bad or repeated " + sh.tsKey)
			}
			ts, unix = v, n
		case sh.sigKey:
			if sig, err := hex.DecodeString(v); err == nil {
				sigs = append(sigs, sig)
			}
		}
	}
	if ts == "" {
		return malformed("no " + sh.tsKey)
	}
	if len(sigs) == 0 {
		return malformed("no hex " + sh.sigKey + " signature")
	}
	if !anyEqual(hmacSHA256([]byte(secret), []byte(ts), []byte(sh.joiner), body), sigs) {
		return mismatch(sh.provider)
	}
	return checkTimestamp(sh.provider, unix, now)
}

// checkTimestamp rejects a signed unix timestamp more than Tolerance away
// from now, in the past or in the future.
func checkTimestamp(provider string, unix int64, now time.Time) error {
	d := now.Sub(time.Unix(unix, 0))
	switch {
	case d > Tolerance:
		return signatureErr(provider, "stale timestamp: signed %s ago, tolerance %s", d, Tolerance)
	case d < -Tolerance:
		return signatureErr(provider, "stale timestamp: signed %s in the future, tolerance %s", -d, Tolerance)
	}
	return nil
}

// requireSecret refuses an empty secret: anyone can sign with an empty key.
func requireSecret(provider, secret string) error {
	if secret == "" {
		return signatureErr(provider, "no signing secret configured")
	}
	return nil
}

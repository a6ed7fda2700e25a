package providers

import (
	"bytes"
	"encoding/json"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/tally-analytics/tally/internal/money"
)

// provider_a is Stripe.
//
// Signature (https://docs.stripe.com/webhooks#verify-manually):
// "Stripe-Signature: t=<unix>,v1=<hex>[,v1=<hex>…][,v0=…]", where each v1 is
// hex HMAC-SHA256(endpoint secret, "<t>.<raw body>"); several v1 appear while
// a secret is rolled, v0 is a test-mode scheme to ignore. The secret is used
// as is (its whsec_ prefix included), as Stripe's libraries do.
//
// Money: one-time checkouts (checkout.session.completed, mode payment, paid)
// and subscription invoices (invoice.paid, first and renewals) are payments;
// a subscription-mode checkout is not money (its invoice is) but links the
// checkout's visitor to the subscription; charge.refunded is a refund, and
// so is charge.dispute.funds_withdrawn (a chargeback); a won dispute's
// charge.dispute.funds_reinstated is a payment again (see stripeDispute).
//
// Test mode: every event says livemode, false for one of test mode
// (https://docs.stripe.com/api/events/object), and a test-mode endpoint
// signs with a secret of its own, which a merchant may well set on their
// live site. Such an event is acknowledged and ignored whatever its kind,
// so test cards never show as revenue. An event without the field (none
// from Stripe) is read as live.
const stripeName = "provider_a"

type stripe struct{}

func (stripe) Name() string { return stripeName }

var stripeSignature = signedHeader{provider: stripeName, header: "Stripe-Signature", sep: ",", tsKey: "t", sigKey: "v1", joiner: "."}

func (stripe) Verify(h http.Header, body []byte, secret string, now time.Time) error {
	return stripeSignature.verify(h, body, secret, now)
}

// stripeEvent is the envelope of every Stripe webhook.
type stripeEvent struct {
	ID      string `json:"id"`
	Type    string `json:"type"`
	Created int64  `json:"created"`
	// Livemode is false for an event of test mode.
	Livemode *bool `json:"livemode"`
	Data     struct {
		Object             json.RawMessage `json:"object"`
		PreviousAttributes json.RawMessage `json:"previous_attributes"`
	} `json:"data"`
}

func (stripe) Parse(body []byte) (Notification, error) {
	var ev stripeEvent
	if err := decode(stripeName, body, &ev); err != nil {
		return Notification{}, err
	}
	if ev.Type == "" {
		return Notification{}, payloadErr(stripeName, "no event type")
	}
	if ev.Livemode != nil && !*ev.Livemode {
		return testMode(ev.Type, ev.ID), nil
	}
	var (
		n   Notification
		err error
	)
	switch ev.Type {
	case "checkout.session.completed", "checkout.session.async_payment_succeeded":
		n, err = stripeCheckout(ev)
	case "invoice.paid":
		n, err = stripeInvoice(ev)
	case "charge.refunded":
		n, err = stripeRefund(ev)
	case "charge.dispute.funds_withdrawn", "charge.dispute.funds_reinstated":
		n, err = stripeDispute(ev)
	default:
		n = unsubscribed(ev.Type)
	}
	if err == nil && !n.Ignored {
		err = stripeMinorUnits(&n)
	}
	n.EventID = ev.ID
	return n, err
}

// stripeExponents are the currencies whose amounts Stripe writes with
// another number of decimals than tally's minor units (ISO 4217's) have
// (https://docs.stripe.com/currencies#special-cases and #zero-decimal): the
// Icelandic króna and the Ugandan shilling, which have none, with two
// decimals that are always 00 (500 is 5 kr), and the Malagasy ariary, which
// has two, with none (1000 is 1,000 Ar).
var stripeExponents = map[string]int{"ISK": 2, "UGX": 2, "MGA": 0}

// stripeMinorUnits turns the amount and tax of n, as Stripe wrote them, into
// minor units of their currency.
func stripeMinorUnits(n *Notification) error {
	exp, ok := stripeExponents[n.Currency]
	if !ok {
		return nil
	}
	digits, _ := money.Digits(n.Currency)
	for _, v := range []*int64{&n.Amount, &n.Tax} {
		for d := int(digits); d < exp; d++ {
			if *v%10 != 0 {
				return payloadErr(stripeName, "%s: %d %s has decimals Stripe never writes", n.Kind, n.Amount, n.Currency)
			}
			*v /= 10
		}
		for d := exp; d < int(digits); d++ {
			if *v > math.MaxInt64/10 || *v < math.MinInt64/10 {
				return payloadErr(stripeName, "%s: %d %s is too large", n.Kind, n.Amount, n.Currency)
			}
			*v *= 10
		}
	}
	return nil
}

// stripeID is an expandable field: an id, an expanded object with an id, or null.
type stripeID string

func (s *stripeID) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '{' {
		var o struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(b, &o); err != nil {
			return err
		}
		*s = stripeID(o.ID)
		return nil
	}
	var id *string
	if err := json.Unmarshal(b, &id); err != nil {
		return err
	}
	if id != nil {
		*s = stripeID(*id)
	}
	return nil
}

type stripeSession struct {
	ID                string          `json:"id"`
	Mode              string          `json:"mode"`
	PaymentStatus     string          `json:"payment_status"`
	AmountTotal       *int64          `json:"amount_total"`
	Currency          string          `json:"currency"`
	PaymentIntent     stripeID        `json:"payment_intent"`
	Invoice           stripeID        `json:"invoice"`
	Subscription      stripeID        `json:"subscription"`
	ClientReferenceID string          `json:"client_reference_id"`
	Metadata          json.RawMessage `json:"metadata"`
	TotalDetails      struct {
		AmountTax int64 `json:"amount_tax"`
	} `json:"total_details"`
}

// stripeCheckout reads checkout.session.completed and
// checkout.session.async_payment_succeeded. Only a paid one-time checkout is
// money: subscription money is counted from invoice.paid, and a session
// completed unpaid (an asynchronous method such as SEPA debit or ACH) is
// counted when checkout.session.async_payment_succeeded says it was paid
// (https://docs.stripe.com/checkout/fulfillment). Both kinds key the money
// by the same id, so a session announced paid twice counts once.
func stripeCheckout(ev stripeEvent) (Notification, error) {
	kind := ev.Type
	var s stripeSession
	if err := decode(stripeName, ev.Data.Object, &s); err != nil {
		return Notification{}, err
	}
	if s.ID == "" {
		return Notification{}, payloadErr(stripeName, "%s: no session id", kind)
	}
	link := Notification{Kind: kind, Type: Payment, CheckoutSession: s.ID,
		VisitorID: visitorFrom(object(s.Metadata)), SubscriptionID: string(s.Subscription)}
	if link.VisitorID == "" {
		link.VisitorID = strings.TrimSpace(s.ClientReferenceID)
	}
	switch {
	case s.Mode == "subscription":
		link.CheckoutSubscriptionID = link.SubscriptionID
		return ignore(link, "subscription checkout: its money is counted from invoice.paid"), nil
	case s.Mode != "payment":
		return ignore(link, "checkout in mode "+strconv.Quote(s.Mode)+" moves no money"), nil
	case s.PaymentStatus != "paid":
		return ignore(link, "checkout payment_status is "+strconv.Quote(s.PaymentStatus)+", not paid"), nil
	case s.AmountTotal == nil || *s.AmountTotal <= 0:
		return ignore(link, "checkout total is zero"), nil
	}
	cur, err := currency(stripeName, s.Currency)
	if err != nil {
		return Notification{}, err
	}
	n := link
	n.Amount, n.Tax, n.Currency = *s.AmountTotal, s.TotalDetails.AmountTax, cur
	n.PaymentRef = string(s.PaymentIntent)
	n.OccurredAt = time.Unix(ev.Created, 0).UTC()
	// A payment-mode checkout with invoice_creation also sends invoice.paid
	// for the invoice it creates; keying the checkout by that invoice makes
	// the two deduplicate instead of counting the money twice.
	switch {
	case s.Invoice != "":
		n.TransactionID = string(s.Invoice)
	case s.PaymentIntent != "":
		n.TransactionID = string(s.PaymentIntent)
	default:
		n.TransactionID = s.ID
	}
	return n, nil
}

// ignore marks a notification ignored, keeping its ids and hints.
func ignore(n Notification, reason string) Notification {
	n.Ignored, n.IgnoreReason = true, reason
	n.Amount, n.Tax, n.Currency, n.TransactionID = 0, 0, "", ""
	return n
}

type stripeInvoiceData struct {
	ID         string          `json:"id"`
	AmountPaid *int64          `json:"amount_paid"`
	Currency   string          `json:"currency"`
	Metadata   json.RawMessage `json:"metadata"`
	Tax        *int64          `json:"tax"` // before 2025-03-31.basil
	TotalTaxes []struct {
		Amount int64 `json:"amount"`
	} `json:"total_taxes"` // 2025-03-31.basil and later
	StatusTransitions struct {
		PaidAt int64 `json:"paid_at"`
	} `json:"status_transitions"`
	// Before 2025-03-31.basil the invoice named its payment and subscription.
	PaymentIntent       stripeID `json:"payment_intent"`
	Charge              stripeID `json:"charge"`
	Subscription        stripeID `json:"subscription"`
	SubscriptionDetails struct {
		Metadata json.RawMessage `json:"metadata"`
	} `json:"subscription_details"`
	// From 2025-03-31.basil on: parent.subscription_details and payments.
	Parent struct {
		SubscriptionDetails struct {
			Subscription stripeID        `json:"subscription"`
			Metadata     json.RawMessage `json:"metadata"`
		} `json:"subscription_details"`
	} `json:"parent"`
	Payments struct {
		Data []stripeInvoicePayment `json:"data"`
	} `json:"payments"`
}

type stripeInvoicePayment struct {
	Status  string `json:"status"`
	Payment struct {
		PaymentIntent stripeID `json:"payment_intent"`
		Charge        stripeID `json:"charge"`
	} `json:"payment"`
	// Some preview versions put the ids at the top of the invoice payment.
	PaymentIntent stripeID `json:"payment_intent"`
	Charge        stripeID `json:"charge"`
}

// stripeInvoice reads invoice.paid, which covers the first invoice of a
// subscription and every renewal. Zero-amount invoices (trials, 100%
// coupons) move no money and are ignored.
func stripeInvoice(ev stripeEvent) (Notification, error) {
	const kind = "invoice.paid"
	var in stripeInvoiceData
	if err := decode(stripeName, ev.Data.Object, &in); err != nil {
		return Notification{}, err
	}
	if in.ID == "" {
		return Notification{}, payloadErr(stripeName, "%s: no invoice id", kind)
	}
	n := Notification{Kind: kind, Type: Payment, TransactionID: in.ID, PaymentRef: in.paymentRef(),
		SubscriptionID: string(in.Subscription),
		VisitorID: visitorFrom(object(in.Metadata), object(in.Parent.SubscriptionDetails.Metadata),
			object(in.SubscriptionDetails.Metadata))}
	if n.SubscriptionID == "" {
		n.SubscriptionID = string(in.Parent.SubscriptionDetails.Subscription)
	}
	if in.AmountPaid == nil {
		return Notification{}, payloadErr(stripeName, "%s: no amount_paid", kind)
	}
	if *in.AmountPaid <= 0 {
		return ignore(n, "zero-amount invoice (a trial or a full discount)"), nil
	}
	cur, err := currency(stripeName, in.Currency)
	if err != nil {
		return Notification{}, err
	}
	n.Amount, n.Currency = *in.AmountPaid, cur
	if in.TotalTaxes != nil {
		for _, t := range in.TotalTaxes {
			n.Tax += t.Amount
		}
	} else if in.Tax != nil {
		n.Tax = *in.Tax
	}
	n.OccurredAt = time.Unix(ev.Created, 0).UTC()
	if in.StatusTransitions.PaidAt > 0 {
		n.OccurredAt = time.Unix(in.StatusTransitions.PaidAt, 0).UTC()
	}
	return n, nil
}

// paymentRef is the payment intent refunds of this invoice will name:
// the invoice's own field before basil, else its paid invoice payment (only
// present when the payload includes payments), else a bare charge.
func (in stripeInvoiceData) paymentRef() string {
	if in.PaymentIntent != "" {
		return string(in.PaymentIntent)
	}
	for _, p := range in.Payments.Data {
		if p.Status != "" && p.Status != "paid" {
			continue
		}
		for _, id := range []stripeID{p.Payment.PaymentIntent, p.PaymentIntent, p.Payment.Charge, p.Charge} {
			if id != "" {
				return string(id)
			}
		}
	}
	return string(in.Charge)
}

type stripeCharge struct {
	ID             string          `json:"id"`
	AmountRefunded *int64          `json:"amount_refunded"`
	Currency       string          `json:"currency"`
	PaymentIntent  stripeID        `json:"payment_intent"`
	Metadata       json.RawMessage `json:"metadata"`
	Refunds        struct {
		Data []struct {
			ID       string `json:"id"`
			Amount   int64  `json:"amount"`
			Created  int64  `json:"created"`
			Currency string `json:"currency"`
			Status   string `json:"status"`
		} `json:"data"`
	} `json:"refunds"`
}

// stripeRefund reads charge.refunded, sent for every full or partial refund
// of a charge with the charge as it is afterwards: amount_refunded is the
// running total. Since API version 2022-11-15 the charge no longer embeds
// its refunds (https://docs.stripe.com/changelog/2022-11-15/deprecates-charges-auto-expand),
// so the amount of this refund alone is known only when the payload has
// refunds.data (older versions, newest first) or previous_attributes;
// otherwise the notification carries the running total, CumulativeRefund set.
func stripeRefund(ev stripeEvent) (Notification, error) {
	const kind = "charge.refunded"
	var c stripeCharge
	if err := decode(stripeName, ev.Data.Object, &c); err != nil {
		return Notification{}, err
	}
	if c.ID == "" || c.AmountRefunded == nil {
		return Notification{}, payloadErr(stripeName, "%s: no charge id or amount_refunded", kind)
	}
	n := Notification{Kind: kind, Type: Refund, RefundOf: string(c.PaymentIntent),
		VisitorID: visitorFrom(object(c.Metadata)), OccurredAt: time.Unix(ev.Created, 0).UTC()}
	if n.RefundOf == "" {
		n.RefundOf = c.ID // a charge made without a PaymentIntent
	}
	if *c.AmountRefunded <= 0 {
		return ignore(n, "nothing refunded on the charge"), nil
	}
	cur, err := currency(stripeName, c.Currency)
	if err != nil {
		return Notification{}, err
	}
	n.Currency = cur
	n.TransactionID = c.ID + ":" + strconv.FormatInt(*c.AmountRefunded, 10)
	n.Amount, n.CumulativeRefund = *c.AmountRefunded, true
	for _, r := range c.Refunds.Data {
		if r.Status == "failed" || r.Status == "canceled" || r.ID == "" || r.Amount <= 0 {
			continue
		}
		n.TransactionID, n.Amount, n.CumulativeRefund = r.ID, r.Amount, false
		if r.Created > 0 {
			n.OccurredAt = time.Unix(r.Created, 0).UTC()
		}
		return n, nil
	}
	var prev struct {
		AmountRefunded *int64 `json:"amount_refunded"`
	}
	if json.Unmarshal(ev.Data.PreviousAttributes, &prev) == nil && prev.AmountRefunded != nil &&
		*prev.AmountRefunded >= 0 && *prev.AmountRefunded < *c.AmountRefunded {
		n.Amount, n.CumulativeRefund = *c.AmountRefunded-*prev.AmountRefunded, false
	}
	return n, nil
}

type stripeDisputeData struct {
	ID            string   `json:"id"`
	Amount        *int64   `json:"amount"`
	Currency      string   `json:"currency"`
	Charge        stripeID `json:"charge"`
	PaymentIntent stripeID `json:"payment_intent"`
}

// stripeDispute reads charge.dispute.funds_withdrawn and
// charge.dispute.funds_reinstated (https://docs.stripe.com/api/events/types,
// https://docs.stripe.com/api/disputes/object). Withdrawn: the disputed
// amount is taken from the merchant, a refund of the disputed payment
// keyed by the dispute's id, linked as charge.refunded is (its payment
// intent, else its charge). Reinstated: the dispute was won and the amount
// comes back, a payment of the same payment (ReinstateOf) keyed by
// "<dispute id>:reinstated", so that the refund and it net out. Dispute
// fees are Stripe's, not the customer's money, and are not counted; a
// dispute opened as an inquiry or a warning withdraws nothing and sends
// neither event.
func stripeDispute(ev stripeEvent) (Notification, error) {
	var d stripeDisputeData
	if err := decode(stripeName, ev.Data.Object, &d); err != nil {
		return Notification{}, err
	}
	if d.ID == "" || d.Amount == nil {
		return Notification{}, payloadErr(stripeName, "%s: no dispute id or amount", ev.Type)
	}
	ref := string(d.PaymentIntent)
	if ref == "" {
		ref = string(d.Charge) // a charge made without a PaymentIntent
	}
	if ref == "" {
		return Notification{}, payloadErr(stripeName, "%s: no disputed charge or payment intent", ev.Type)
	}
	n := Notification{Kind: ev.Type, Type: Refund, TransactionID: d.ID, RefundOf: ref, OccurredAt: time.Unix(ev.Created, 0).UTC()}
	if ev.Type == "charge.dispute.funds_reinstated" {
		n.Type, n.TransactionID, n.RefundOf = Payment, d.ID+":reinstated", ""
		n.PaymentRef, n.ReinstateOf = ref, ref
	}
	if *d.Amount <= 0 {
		return ignore(n, "dispute amount is zero"), nil
	}
	cur, err := currency(stripeName, d.Currency)
	if err != nil {
		return Notification{}, err
	}
	n.Amount, n.Currency = *d.Amount, cur
	return n, nil
}

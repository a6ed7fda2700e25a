package providers

import (
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// provider_b is Lemon Squeezy.
//
// Signature (https://docs.lemonsqueezy.com/help/webhooks/signing-requests):
// "X-Signature: <hex>", the hex HMAC-SHA256 of the raw body keyed with the
// signing secret chosen when the webhook was created. The scheme has no
// timestamp, so a captured delivery can be replayed; deduplication by
// transaction id is what keeps a replay from counting twice.
//
// Money: order_created with status paid is a payment (a subscription's first
// payment included), and so is subscription_payment_success of a renewal
// or a mid-cycle charge (a subscription's first invoice is its order, not
// counted again); order_refunded, sent for every full or partial refund
// (https://docs.lemonsqueezy.com/help/webhooks/event-types), and
// subscription_payment_refunded are refunds carrying the running
// refunded_amount of their order or invoice. A refund of a subscription's
// first invoice is a refund of its order, counted from order_refunded as
// its payment is from order_created.
//
// Test mode: a store's test mode sends webhooks as live mode does, with
// test_mode true in the body's meta and in the order or invoice itself
// (https://docs.lemonsqueezy.com/help/webhooks, https://docs.lemonsqueezy.com/api/orders).
// Either one makes the event acknowledged and ignored, whatever its kind.
const lemonSqueezyName = "provider_b"

type lemonSqueezy struct{}

func (lemonSqueezy) Name() string { return lemonSqueezyName }

func (lemonSqueezy) Verify(h http.Header, body []byte, secret string, _ time.Time) error {
	if err := requireSecret(lemonSqueezyName, secret); err != nil {
		return err
	}
	header := strings.TrimSpace(h.Get("X-Signature"))
	if header == "" {
		return signatureErr(lemonSqueezyName, "missing X-Signature header")
	}
	sig, err := hex.DecodeString(header)
	if err != nil {
		return signatureErr(lemonSqueezyName, "malformed X-Signature header: not hex")
	}
	if !anyEqual(hmacSHA256([]byte(secret), body), [][]byte{sig}) {
		return mismatch(lemonSqueezyName)
	}
	return nil
}

type lemonSqueezyEvent struct {
	Meta struct {
		EventName  string          `json:"event_name"`
		CustomData json.RawMessage `json:"custom_data"`
		TestMode   bool            `json:"test_mode"`
	} `json:"meta"`
	Data struct {
		Type       string `json:"type"`
		ID         string `json:"id"`
		Attributes struct {
			Status         string `json:"status"`
			Currency       string `json:"currency"`
			Total          *int64 `json:"total"`
			Tax            int64  `json:"tax"`
			RefundedAmount *int64 `json:"refunded_amount"`
			Refunded       bool   `json:"refunded"`
			RefundedAt     string `json:"refunded_at"`
			CreatedAt      string `json:"created_at"`
			UpdatedAt      string `json:"updated_at"`
			// subscription invoices
			SubscriptionID json.Number `json:"subscription_id"`
			BillingReason  string      `json:"billing_reason"`
			TestMode       bool        `json:"test_mode"`
		} `json:"attributes"`
	} `json:"data"`
}

func (lemonSqueezy) Parse(body []byte) (Notification, error) {
	var ev lemonSqueezyEvent
	if err := decode(lemonSqueezyName, body, &ev); err != nil {
		return Notification{}, err
	}
	kind := ev.Meta.EventName
	if kind == "" {
		return Notification{}, payloadErr(lemonSqueezyName, "no meta.event_name")
	}
	if ev.Meta.TestMode || ev.Data.Attributes.TestMode {
		return testMode(kind, ""), nil
	}
	switch kind {
	case "order_created", "order_refunded", "subscription_payment_success", "subscription_payment_refunded":
	default:
		return unsubscribed(kind), nil
	}
	if ev.Data.ID == "" {
		return Notification{}, payloadErr(lemonSqueezyName, "%s: no data.id", kind)
	}
	n := Notification{Kind: kind, VisitorID: visitorFrom(object(ev.Meta.CustomData))}
	var err error
	switch kind {
	case "order_created":
		n, err = lemonSqueezyOrder(ev, n)
	case "order_refunded":
		n = lemonSqueezyRefund(ev, n, ev.Data.ID)
	case "subscription_payment_success":
		n, err = lemonSqueezyInvoice(ev, n)
	case "subscription_payment_refunded":
		n.SubscriptionID = ev.Data.Attributes.SubscriptionID.String()
		if ev.Data.Attributes.BillingReason == "initial" {
			// The first invoice's money is its order's: no payment holds
			// the invoice's ref, so counted here too the refund would be
			// counted twice, once of the order and once unattributed.
			n.Type, n.RefundOf = Refund, invoiceRef(ev.Data.ID)
			return ignore(n, "a refund of the subscription's first payment, counted from order_refunded"), nil
		}
		n = lemonSqueezyRefund(ev, n, invoiceRef(ev.Data.ID))
	}
	if err != nil || n.Ignored {
		return n, err
	}
	cur, err := currency(lemonSqueezyName, ev.Data.Attributes.Currency)
	if err != nil {
		return Notification{}, err
	}
	n.Currency = cur
	return n, nil
}

// lemonSqueezyOrder reads order_created: a paid order is money.
func lemonSqueezyOrder(ev lemonSqueezyEvent, n Notification) (Notification, error) {
	a := ev.Data.Attributes
	n.Type, n.TransactionID, n.PaymentRef = Payment, ev.Data.ID, ev.Data.ID
	if a.Status != "paid" {
		return ignore(n, "order status is "+strconv.Quote(a.Status)+", not paid"), nil
	}
	if a.Total == nil {
		return Notification{}, payloadErr(lemonSqueezyName, "%s: no total", n.Kind)
	}
	if *a.Total <= 0 {
		return ignore(n, "order total is zero"), nil
	}
	// total is what the customer paid, tax included (subtotal 999 + tax 200
	// = total 1199 in the API reference's example); Lemon Squeezy, as
	// merchant of record, keeps the tax back from payouts.
	n.Amount, n.Tax = *a.Total, a.Tax
	n.OccurredAt = firstTime(a.CreatedAt, a.UpdatedAt)
	return n, nil
}

// lemonSqueezyRefund reads order_refunded and subscription_payment_refunded,
// refunds of the payment keyed ref. refunded_amount is the running total
// over partial refunds; without it (payloads older than the field), a
// refunded order or invoice is refunded in full.
func lemonSqueezyRefund(ev lemonSqueezyEvent, n Notification, ref string) Notification {
	a := ev.Data.Attributes
	n.Type, n.RefundOf = Refund, ref
	switch {
	case a.RefundedAmount != nil && *a.RefundedAmount > 0:
		n.Amount = *a.RefundedAmount
	case a.Total != nil && (a.Refunded || a.Status == "refunded"):
		n.Amount = *a.Total
	}
	if n.Amount <= 0 {
		return ignore(n, "nothing refunded")
	}
	n.CumulativeRefund = true
	// Each partial refund sends the event again for the same payment, so the
	// running total makes each one's id distinct.
	n.TransactionID = ref + ":" + strconv.FormatInt(n.Amount, 10)
	n.OccurredAt = firstTime(a.RefundedAt, a.UpdatedAt, a.CreatedAt)
	return n
}

// invoiceRef keys a subscription invoice: its ids are not order ids.
func invoiceRef(id string) string { return "subscription-invoice:" + id }

// lemonSqueezyInvoice reads subscription_payment_success, a paid
// subscription invoice (https://docs.lemonsqueezy.com/api/subscription-invoices).
// The first one (billing_reason "initial") is the order that created the
// subscription, already counted from order_created; renewals and mid-cycle
// charges ("renewal", "updated") are new money. (subscription_payment_recovered,
// a renewal paid after failing, always comes with this kind, so it is not
// read.)
func lemonSqueezyInvoice(ev lemonSqueezyEvent, n Notification) (Notification, error) {
	a := ev.Data.Attributes
	n.Type, n.TransactionID, n.PaymentRef = Payment, invoiceRef(ev.Data.ID), invoiceRef(ev.Data.ID)
	n.SubscriptionID = a.SubscriptionID.String()
	switch {
	case a.BillingReason == "initial":
		return ignore(n, "the subscription's first payment, counted from order_created"), nil
	case a.Status != "paid":
		return ignore(n, "invoice status is "+strconv.Quote(a.Status)+", not paid"), nil
	case a.Total == nil:
		return Notification{}, payloadErr(lemonSqueezyName, "%s: no total", n.Kind)
	case *a.Total <= 0:
		return ignore(n, "invoice total is zero"), nil
	}
	n.Amount, n.Tax = *a.Total, a.Tax
	n.OccurredAt = firstTime(a.CreatedAt, a.UpdatedAt)
	return n, nil
}

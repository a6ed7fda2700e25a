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
// payment included; renewals come as subscription_payment_success, which
// tally does not subscribe to); order_refunded, sent for every full or
// partial refund (https://docs.lemonsqueezy.com/help/webhooks/event-types),
// is a refund carrying the order's running refunded_amount.
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
		return signatureErr(lemonSqueezyName, "signature does not match")
	}
	return nil
}

type lemonSqueezyEvent struct {
	Meta struct {
		EventName  string          `json:"event_name"`
		CustomData json.RawMessage `json:"custom_data"`
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
	if kind == "subscription_payment_success" {
		return lemonSqueezyInvoice(ev)
	}
	if kind != "order_created" && kind != "order_refunded" {
		return unsubscribed(kind), nil
	}
	a := ev.Data.Attributes
	if ev.Data.ID == "" {
		return Notification{}, payloadErr(lemonSqueezyName, "%s: no order id", kind)
	}
	n := Notification{Kind: kind, VisitorID: visitorFrom(object(ev.Meta.CustomData))}
	if kind == "order_created" {
		n.Type, n.TransactionID, n.PaymentRef = Payment, ev.Data.ID, ev.Data.ID
		if a.Status != "paid" {
			return ignore(n, "order status is "+strconv.Quote(a.Status)+", not paid"), nil
		}
		if a.Total == nil {
			return Notification{}, payloadErr(lemonSqueezyName, "%s: no total", kind)
		}
		if *a.Total <= 0 {
			return ignore(n, "order total is zero"), nil
		}
		// total is what the customer paid, tax included (subtotal 999 +
		// tax 200 = total 1199 in the API reference's example); Lemon
		// Squeezy, as merchant of record, keeps the tax back from payouts.
		n.Amount, n.Tax = *a.Total, a.Tax
		n.OccurredAt = firstTime(a.CreatedAt, a.UpdatedAt)
	} else {
		n.Type, n.RefundOf = Refund, ev.Data.ID
		// refunded_amount is the running total over partial refunds; without
		// it (payloads older than the field), a refunded order is refunded in full.
		switch {
		case a.RefundedAmount != nil && *a.RefundedAmount > 0:
			n.Amount = *a.RefundedAmount
		case a.Total != nil && (a.Refunded || a.Status == "refunded"):
			n.Amount = *a.Total
		}
		if n.Amount <= 0 {
			return ignore(n, "nothing refunded on the order"), nil
		}
		n.CumulativeRefund = true
		// Each partial refund sends order_refunded for the same order, so
		// the running total makes each one's id distinct.
		n.TransactionID = ev.Data.ID + ":" + strconv.FormatInt(n.Amount, 10)
		n.OccurredAt = firstTime(a.RefundedAt, a.UpdatedAt, a.CreatedAt)
	}
	cur, err := currency(lemonSqueezyName, a.Currency)
	if err != nil {
		return Notification{}, err
	}
	n.Currency = cur
	return n, nil
}

// lemonSqueezyInvoice reads subscription_payment_success, a paid
// subscription invoice (https://docs.lemonsqueezy.com/api/subscription-invoices).
// The first one (billing_reason "initial") is the order that created the
// subscription, already counted from order_created; renewals and mid-cycle
// charges ("renewal", "updated") are new money. Invoice ids are not order ids,
// so they are keyed apart.
func lemonSqueezyInvoice(ev lemonSqueezyEvent) (Notification, error) {
	const kind = "subscription_payment_success"
	a := ev.Data.Attributes
	if ev.Data.ID == "" {
		return Notification{}, payloadErr(lemonSqueezyName, "%s: no invoice id", kind)
	}
	id := "subscription-invoice:" + ev.Data.ID
	n := Notification{Kind: kind, Type: Payment, TransactionID: id, PaymentRef: id,
		SubscriptionID: a.SubscriptionID.String(), VisitorID: visitorFrom(object(ev.Meta.CustomData))}
	switch {
	case a.BillingReason == "initial":
		return ignore(n, "the subscription's first payment, counted from order_created"), nil
	case a.Status != "paid":
		return ignore(n, "invoice status is "+strconv.Quote(a.Status)+", not paid"), nil
	case a.Total == nil:
		return Notification{}, payloadErr(lemonSqueezyName, "%s: no total", kind)
	case *a.Total <= 0:
		return ignore(n, "invoice total is zero"), nil
	}
	cur, err := currency(lemonSqueezyName, a.Currency)
	if err != nil {
		return Notification{}, err
	}
	n.Amount, n.Tax, n.Currency = *a.Total, a.Tax, cur
	n.OccurredAt = firstTime(a.CreatedAt, a.UpdatedAt)
	return n, nil
}

package providers

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// provider_d is Polar, which signs with Standard Webhooks
// (https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md):
// headers webhook-id, webhook-timestamp (unix seconds) and webhook-signature,
// a space-separated list of "v1,<base64>" where each signature is
// base64 HMAC-SHA256(key, "<id>.<timestamp>.<raw body>").
//
// Money: order.created of a paid order is a payment (one-time purchases,
// subscription starts and renewals), refund.created a refund.
//
// Sandbox: Polar's sandbox (sandbox.polar.sh) is an environment apart, with
// its own users, organizations, tokens and webhook endpoints
// (https://docs.polar.sh/api-reference/introduction), and its payloads
// (type, timestamp, data) carry nothing that tells them from live ones. So
// tally cannot ignore them: a sandbox's endpoint must not point at a site
// taking real money.
const polarName = "provider_d"

type polar struct{}

func (polar) Name() string { return polarName }

// polarKeys returns the HMAC keys a Polar secret may have been used as.
// Polar's secrets all start with "whsec_", yet two schemes are in use:
//
//   - Secrets generated from 2026-09-08 on are Standard Webhooks secrets: the
//     key is the base64-decoding of what follows whsec_ (polarsource/polar,
//     server/polar/webhook/constants.py: WEBHOOK_STANDARD_SIGNATURE_CUTOFF and
//     uses_standard_webhook_signature; the endpoint's API object reports it
//     as uses_standard_webhook_signature).
//   - Older secrets keep Polar's original scheme, "HMAC over the UTF-8 bytes
//     of the full secret": server/polar/webhook/tasks.py sign_webhook
//     base64-encodes the whole secret before handing it to the Standard
//     Webhooks library, and so do Polar's SDKs (polarsource/polar-js
//     src/webhooks.ts validateEvent: Buffer.from(secret, "utf-8").toString("base64")),
//     which makes the key the secret's raw bytes, whsec_ prefix included.
//
// Nothing in a delivery says which scheme signed it, and a secret does not
// say when it was generated, so Verify accepts a signature made with either
// key; both derive from the secret, so neither weakens the check. A secret
// without the prefix (Polar's oldest) is used as raw bytes.
func polarKeys(secret string) [][]byte {
	keys := [][]byte{[]byte(secret)}
	if rest, ok := strings.CutPrefix(secret, "whsec_"); ok {
		if k, err := base64.StdEncoding.DecodeString(rest); err == nil && len(k) > 0 {
			keys = append([][]byte{k}, keys...)
		}
	}
	return keys
}

func (polar) Verify(h http.Header, body []byte, secret string, now time.Time) error {
	if err := requireSecret(polarName, secret); err != nil {
		return err
	}
	id := strings.TrimSpace(h.Get("webhook-id"))
	ts := strings.TrimSpace(h.Get("webhook-timestamp"))
	header := strings.TrimSpace(h.Get("webhook-signature"))
	if id == "" || ts == "" || header == "" {
		return signatureErr(polarName, "missing webhook-id, webhook-timestamp or webhook-signature header")
	}
	unix, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return signatureErr(polarName, "malformed webhook-timestamp header: not unix seconds")
	}
	var sigs [][]byte
	for _, item := range strings.Fields(header) {
		version, sig, ok := strings.Cut(item, ",")
		if !ok || version != "v1" {
			continue // another scheme (v1a is asymmetric) or noise
		}
		if b, err := base64.StdEncoding.DecodeString(sig); err == nil {
			sigs = append(sigs, b)
		}
	}
	if len(sigs) == 0 {
		return signatureErr(polarName, "malformed webhook-signature header: no v1 signature")
	}
	match := false
	for _, key := range polarKeys(secret) {
		if anyEqual(hmacSHA256(key, []byte(id), []byte("."), []byte(ts), []byte("."), body), sigs) {
			match = true
		}
	}
	if !match {
		return mismatch(polarName)
	}
	return checkTimestamp(polarName, unix, now)
}

type polarEvent struct {
	Type      string          `json:"type"`
	Timestamp string          `json:"timestamp"`
	Data      json.RawMessage `json:"data"`
}

func (polar) Parse(body []byte) (Notification, error) {
	var ev polarEvent
	if err := decode(polarName, body, &ev); err != nil {
		return Notification{}, err
	}
	switch ev.Type {
	case "":
		return Notification{}, payloadErr(polarName, "no event type")
	case "order.created", "order.paid":
		return polarOrder(ev)
	case "refund.created":
		return polarRefund(ev)
	default:
		return unsubscribed(ev.Type), nil
	}
}

type polarOrderData struct {
	ID             string          `json:"id"`
	CreatedAt      string          `json:"created_at"`
	Status         string          `json:"status"`
	Paid           *bool           `json:"paid"`
	TotalAmount    *int64          `json:"total_amount"`
	Amount         *int64          `json:"amount"` // before total_amount: net of tax
	TaxAmount      int64           `json:"tax_amount"`
	Currency       string          `json:"currency"`
	BillingReason  string          `json:"billing_reason"`
	SubscriptionID string          `json:"subscription_id"`
	CheckoutID     string          `json:"checkout_id"`
	Metadata       json.RawMessage `json:"metadata"`
	CustomFields   json.RawMessage `json:"custom_field_data"`
	Customer       struct {
		Metadata json.RawMessage `json:"metadata"`
	} `json:"customer"`
}

// polarOrder reads order.created and order.paid. Polar warns the order
// "might not be paid yet, so the status field might be pending"
// (https://polar.sh/docs/api-reference/webhooks/order.created): a pending
// order is ignored, and counted when order.paid announces its payment
// (subscription renewals are created pending, then paid). A one-time order
// created paid also sends order.paid; both key the money by the order id,
// so it counts once. The amount is total_amount, "after discounts and
// taxes" (net_amount is before taxes), as for the other providers.
func polarOrder(ev polarEvent) (Notification, error) {
	var o polarOrderData
	if err := decode(polarName, ev.Data, &o); err != nil {
		return Notification{}, err
	}
	if o.ID == "" {
		return Notification{}, payloadErr(polarName, "%s: no order id", ev.Type)
	}
	n := Notification{Kind: ev.Type, Type: Payment, TransactionID: o.ID, PaymentRef: o.ID,
		CheckoutSession: o.CheckoutID, SubscriptionID: o.SubscriptionID,
		VisitorID:  visitorFrom(object(o.Metadata), object(o.CustomFields), object(o.Customer.Metadata)),
		OccurredAt: firstTime(o.CreatedAt, ev.Timestamp)}
	if ev.Type == "order.paid" { // paid when announced, which may be long after the order was created
		n.OccurredAt = firstTime(ev.Timestamp, o.CreatedAt)
	}
	if o.BillingReason == "subscription_create" && o.CheckoutID != "" {
		n.CheckoutSubscriptionID = o.SubscriptionID
	}
	if o.Status == "pending" || (o.Paid != nil && !*o.Paid) {
		return ignore(n, "order is not paid yet (it counts when order.paid announces its payment)"), nil
	}
	var amount int64
	switch {
	case o.TotalAmount != nil:
		amount = *o.TotalAmount
	case o.Amount != nil:
		amount = *o.Amount + o.TaxAmount
	default:
		return Notification{}, payloadErr(polarName, "%s: no total_amount", ev.Type)
	}
	if amount <= 0 {
		return ignore(n, "order total is zero (a free product or a full discount)"), nil
	}
	cur, err := currency(polarName, o.Currency)
	if err != nil {
		return Notification{}, err
	}
	n.Amount, n.Tax, n.Currency = amount, o.TaxAmount, cur
	return n, nil
}

type polarRefundData struct {
	ID             string          `json:"id"`
	CreatedAt      string          `json:"created_at"`
	Status         string          `json:"status"`
	Amount         *int64          `json:"amount"`
	TaxAmount      int64           `json:"tax_amount"`
	Currency       string          `json:"currency"`
	OrderID        string          `json:"order_id"`
	SubscriptionID string          `json:"subscription_id"`
	Metadata       json.RawMessage `json:"metadata"`
}

// polarRefund reads refund.created. A refund's amount excludes its
// tax_amount (Polar's Refund model: total_amount = amount + tax_amount), so
// the refund is amount + tax_amount, like the order's total_amount. Pending
// and succeeded refunds count; failed and canceled ones returned nothing.
// A pending refund that fails later (refund.updated) is not seen.
func polarRefund(ev polarEvent) (Notification, error) {
	var r polarRefundData
	if err := decode(polarName, ev.Data, &r); err != nil {
		return Notification{}, err
	}
	if r.ID == "" || r.OrderID == "" {
		return Notification{}, payloadErr(polarName, "%s: no refund or order id", ev.Type)
	}
	n := Notification{Kind: ev.Type, Type: Refund, TransactionID: r.ID, RefundOf: r.OrderID,
		SubscriptionID: r.SubscriptionID, VisitorID: visitorFrom(object(r.Metadata)),
		OccurredAt: firstTime(r.CreatedAt, ev.Timestamp)}
	if r.Status != "pending" && r.Status != "succeeded" {
		return ignore(n, "refund status is "+strconv.Quote(r.Status)), nil
	}
	if r.Amount == nil {
		return Notification{}, payloadErr(polarName, "%s: no amount", ev.Type)
	}
	amount := *r.Amount + r.TaxAmount
	if amount <= 0 {
		return ignore(n, "refund amount is zero"), nil
	}
	cur, err := currency(polarName, r.Currency)
	if err != nil {
		return Notification{}, err
	}
	n.Amount, n.Tax, n.Currency = amount, r.TaxAmount, cur
	return n, nil
}

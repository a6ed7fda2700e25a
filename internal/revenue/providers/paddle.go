package providers

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"
)

// provider_c is Paddle Billing.
//
// Signature (https://developer.paddle.com/webhooks/about/signature-verification):
// "Paddle-Signature: ts=<unix>;h1=<hex>", h1 = hex HMAC-SHA256(secret key of
// the notification destination, "<ts>:<raw body>"); several h1 may appear
// while a secret key is rotated. Paddle's SDKs allow only five seconds of
// clock difference; tally allows Tolerance, as for the other providers.
//
// Money: transaction.completed is a payment (checkouts and renewals alike),
// transaction.payment_failed a failed attempt, adjustment.created with
// action refund or chargeback a refund, and one with action
// chargeback_reverse a payment again (see paddleAdjustment).
//
// Sandbox: Paddle's sandbox is an account apart from the live one, with its
// own notification destinations and secret keys
// (https://developer.paddle.com/sdks/sandbox), and its notifications carry
// nothing that tells them from live ones (event_id, event_type,
// occurred_at, notification_id, data). So tally cannot ignore them: a
// sandbox's destination must not point at a site taking real money.
const paddleName = "provider_c"

type paddle struct{}

func (paddle) Name() string { return paddleName }

var paddleSignature = signedHeader{provider: paddleName, header: "Paddle-Signature", sep: ";", tsKey: "ts", sigKey: "h1", joiner: ":"}

func (paddle) Verify(h http.Header, body []byte, secret string, now time.Time) error {
	return paddleSignature.verify(h, body, secret, now)
}

type paddleEvent struct {
	EventID    string          `json:"event_id"`
	EventType  string          `json:"event_type"`
	OccurredAt string          `json:"occurred_at"`
	Data       json.RawMessage `json:"data"`
}

func (paddle) Parse(body []byte) (Notification, error) {
	var ev paddleEvent
	if err := decode(paddleName, body, &ev); err != nil {
		return Notification{}, err
	}
	if ev.EventType == "" {
		return Notification{}, payloadErr(paddleName, "no event_type")
	}
	var (
		n   Notification
		err error
	)
	switch ev.EventType {
	case "transaction.completed":
		n, err = paddleTransaction(ev, Payment)
	case "transaction.payment_failed":
		n, err = paddleTransaction(ev, Failed)
	case "adjustment.created":
		n, err = paddleAdjustment(ev)
	default:
		n = unsubscribed(ev.EventType)
	}
	n.EventID = ev.EventID
	return n, err
}

type paddleTxn struct {
	ID             string          `json:"id"`
	Origin         string          `json:"origin"`
	CurrencyCode   string          `json:"currency_code"`
	CustomData     json.RawMessage `json:"custom_data"`
	SubscriptionID string          `json:"subscription_id"`
	BilledAt       string          `json:"billed_at"`
	UpdatedAt      string          `json:"updated_at"`
	Details        struct {
		Totals struct {
			GrandTotal    string `json:"grand_total"`
			GrandTotalTax string `json:"grand_total_tax"`
			Tax           string `json:"tax"`
		} `json:"totals"`
	} `json:"details"`
}

// paddleTransaction reads transaction.completed and .payment_failed. The
// amount is details.totals.grand_total: the total after discount, tax and
// credits, before payments, i.e. what the customer pays
// (https://developer.paddle.com/changelog/2023/transaction-totals-grand-total);
// total would include credits the customer did not pay. Its tax is
// grand_total_tax (added 2026; "tax" before credits on older payloads).
func paddleTransaction(ev paddleEvent, typ Type) (Notification, error) {
	var t paddleTxn
	if err := decode(paddleName, ev.Data, &t); err != nil {
		return Notification{}, err
	}
	if t.ID == "" {
		return Notification{}, payloadErr(paddleName, "%s: no transaction id", ev.EventType)
	}
	n := Notification{Kind: ev.EventType, Type: typ, TransactionID: t.ID, PaymentRef: t.ID,
		VisitorID: visitorFrom(object(t.CustomData)), SubscriptionID: t.SubscriptionID,
		OccurredAt: firstTime(ev.OccurredAt, t.BilledAt, t.UpdatedAt)}
	// A checkout ("web" origin) transaction is Paddle's checkout: Paddle.js
	// opens it as ?_ptxn=<id>, and its subscription starts from it.
	if t.Origin == "web" {
		n.CheckoutSession = t.ID
		n.CheckoutSubscriptionID = t.SubscriptionID
	}
	amount, err := paddleAmount(ev.EventType, "grand_total", t.Details.Totals.GrandTotal)
	if err != nil {
		return Notification{}, err
	}
	if amount <= 0 {
		return ignore(n, "transaction grand total is not positive (a free or credited transaction)"), nil
	}
	cur, err := currency(paddleName, t.CurrencyCode)
	if err != nil {
		return Notification{}, err
	}
	n.Amount, n.Currency = amount, cur
	tax := t.Details.Totals.GrandTotalTax
	if tax == "" {
		tax = t.Details.Totals.Tax
	}
	if tax != "" {
		if n.Tax, err = paddleAmount(ev.EventType, "tax", tax); err != nil {
			return Notification{}, err
		}
	}
	return n, nil
}

type paddleAdj struct {
	ID             string `json:"id"`
	Action         string `json:"action"`
	Status         string `json:"status"`
	TransactionID  string `json:"transaction_id"`
	SubscriptionID string `json:"subscription_id"`
	CurrencyCode   string `json:"currency_code"`
	CreatedAt      string `json:"created_at"`
	Totals         struct {
		Total        string `json:"total"`
		Tax          string `json:"tax"`
		CurrencyCode string `json:"currency_code"`
	} `json:"totals"`
}

// paddleAdjustment reads adjustment.created
// (https://developer.paddle.com/api-reference/adjustments/overview,
// https://developer.paddle.com/webhooks/adjustments/adjustment-created). Actions:
//   - refund: money back to the customer. Most live refunds are created
//     pending_approval and approved or rejected by Paddle later
//     (adjustment.updated, not subscribed), so pending refunds count now and
//     a later rejection is not seen;
//   - chargeback: money taken back by the customer's bank, counted as a refund;
//   - chargeback_reverse: a won dispute returns the money, a payment of the
//     transaction again (ReinstateOf) keyed by the adjustment's id, so that
//     the chargeback and it net out, as Stripe's funds_reinstated;
//   - chargeback_warning: no money moved yet;
//   - credit, credit_reverse: credit to the customer's balance, not money back.
//
// A rejected or reversed adjustment is ignored.
func paddleAdjustment(ev paddleEvent) (Notification, error) {
	var a paddleAdj
	if err := decode(paddleName, ev.Data, &a); err != nil {
		return Notification{}, err
	}
	if a.ID == "" || a.TransactionID == "" {
		return Notification{}, payloadErr(paddleName, "%s: no adjustment or transaction id", ev.EventType)
	}
	n := Notification{Kind: ev.EventType, Type: Refund, TransactionID: a.ID, RefundOf: a.TransactionID,
		SubscriptionID: a.SubscriptionID, OccurredAt: firstTime(ev.OccurredAt, a.CreatedAt)}
	switch a.Action {
	case "refund", "chargeback":
	case "chargeback_reverse":
		n.Type, n.RefundOf, n.PaymentRef, n.ReinstateOf = Payment, "", a.TransactionID, a.TransactionID
	case "chargeback_warning":
		return ignore(n, "chargeback warning: no money has moved yet"), nil
	case "credit", "credit_reverse":
		return ignore(n, "a credit to the customer's balance is not money back"), nil
	default:
		return ignore(n, "adjustment action "+strconv.Quote(a.Action)+" is not a refund"), nil
	}
	if a.Status == "rejected" || a.Status == "reversed" {
		return ignore(n, "adjustment is "+a.Status), nil
	}
	amount, err := paddleAmount(ev.EventType, "totals.total", a.Totals.Total)
	if err != nil {
		return Notification{}, err
	}
	if amount < 0 {
		amount = -amount // Paddle sends positive totals; be safe either way
	}
	if amount <= 0 {
		return ignore(n, "adjustment total is zero"), nil
	}
	code := a.CurrencyCode
	if code == "" {
		code = a.Totals.CurrencyCode
	}
	cur, err := currency(paddleName, code)
	if err != nil {
		return Notification{}, err
	}
	n.Amount, n.Currency = amount, cur
	if a.Totals.Tax != "" {
		if n.Tax, err = paddleAmount(ev.EventType, "totals.tax", a.Totals.Tax); err != nil {
			return Notification{}, err
		}
		if n.Tax < 0 {
			n.Tax = -n.Tax
		}
	}
	return n, nil
}

// paddleAmount reads one of Paddle's amounts: a string of minor units.
func paddleAmount(kind, field, s string) (int64, error) {
	if s == "" {
		return 0, payloadErr(paddleName, "%s: no %s", kind, field)
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, payloadErr(paddleName, "%s: %s %q is not an integer amount", kind, field, s)
	}
	return v, nil
}

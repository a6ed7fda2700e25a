package providers

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

const paddleSecret = "pdl_ntfset_01hv8gm3h5a4k2q0ybq4e9m6xw_3nTrVxKq8sYz2aBcD4eFgH6jKmN0pQ"

// signPaddle signs as Paddle does: hex HMAC-SHA256(secret, "<ts>:<body>").
func signPaddle(secret string, ts int64, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	fmt.Fprintf(m, "%d:%s", ts, body)
	return hex.EncodeToString(m.Sum(nil))
}

func paddleHeader(v string) http.Header {
	h := http.Header{}
	h.Set("Paddle-Signature", v)
	return h
}

func TestPaddleVerify(t *testing.T) {
	body := fixture(t, paddleName, "transaction.completed.json")
	now := time.Date(2024, 4, 12, 10, 18, 51, 0, time.UTC)
	ts := now.Add(-2 * time.Second).Unix()
	good := signPaddle(paddleSecret, ts, body)
	signed := paddleHeader(fmt.Sprintf("ts=%d;h1=%s", ts, good))
	old, future := now.Add(-6*time.Minute).Unix(), now.Add(6*time.Minute).Unix()

	// The test vector of Paddle's Go SDK (PaddleHQ/paddle-go-sdk,
	// webhook_verifier_test.go): a price.created delivery and its signature.
	const (
		vectorSecret  = `pdl_ntfset_01hsdn8d43dt7mezr1ef2jtbaw_hKkRiCGyyRhbFwIUuqiTBgI7gnWoV0Gr`
		vectorHeader  = `ts=1710929255;h1=6c05ef8fa83c44d751be6d259ec955ce5638e2c54095bf128e408e2fce1589c8`
		vectorPayload = `{"data":{"id":"pri_01hsdn96k2hxjzsq5yerecdj9j","name":null,"status":"active","quantity":{"maximum":999999,"minimum":1},"tax_mode":"account_setting","product_id":"pro_01hsdn8qp7yydry3x1yeg6a9rv","unit_price":{"amount":"1000","currency_code":"USD"},"custom_data":null,"description":"testing","import_meta":null,"trial_period":null,"billing_cycle":{"interval":"month","frequency":1},"unit_price_overrides":[]},"event_id":"evt_01hsdn97563968dy0szkmgjwh3","event_type":"price.created","occurred_at":"2024-03-20T10:07:35.590857Z","notification_id":"ntf_01hsdn977e920kbgzt6r6c9rqc"}`
	)
	vectorNow := time.Unix(1710929255, 0)

	testVerify(t, paddleName, []verifyCase{
		{name: "signed", header: signed, body: body, secret: paddleSecret, now: now},
		{name: "Paddle SDK vector", header: paddleHeader(vectorHeader), body: []byte(vectorPayload), secret: vectorSecret, now: vectorNow},
		{name: "Paddle SDK vector, wrong secret", header: paddleHeader(vectorHeader), body: []byte(vectorPayload), secret: "abc", now: vectorNow, wantErr: "does not match"},
		{name: "secret key being rotated: two h1",
			header: paddleHeader(fmt.Sprintf("ts=%d;h1=%s;h1=%s", ts, signPaddle("pdl_ntfset_old", ts, body), good)),
			body:   body, secret: paddleSecret, now: now},
		{name: "wrong secret", header: signed, body: body, secret: "pdl_ntfset_01hv8gm3h5a4k2q0ybq4e9m6xw_other", now: now, wantErr: "does not match"},
		{name: "tampered body", header: signed, body: []byte(strings.Replace(string(body), `"grand_total": "65215"`, `"grand_total": "95215"`, 1)), secret: paddleSecret, now: now, wantErr: "does not match"},
		{name: "signed for another ts", header: paddleHeader(fmt.Sprintf("ts=%d;h1=%s", ts+1, good)), body: body, secret: paddleSecret, now: now, wantErr: "does not match"},
		{name: "missing header", header: http.Header{}, body: body, secret: paddleSecret, now: now, wantErr: "missing Paddle-Signature"},
		{name: "comma-separated like Stripe", header: paddleHeader(fmt.Sprintf("ts=%d,h1=%s", ts, good)), body: body, secret: paddleSecret, now: now, wantErr: "malformed"},
		{name: "no ts", header: paddleHeader("h1=" + good), body: body, secret: paddleSecret, now: now, wantErr: "malformed"},
		{name: "no h1", header: paddleHeader(fmt.Sprintf("ts=%d", ts)), body: body, secret: paddleSecret, now: now, wantErr: "malformed"},
		{name: "h1 not hex", header: paddleHeader(fmt.Sprintf("ts=%d;h1=%s", ts, "x"+good[1:])), body: body, secret: paddleSecret, now: now, wantErr: "malformed"},
		{name: "ts not a number", header: paddleHeader("ts=x;h1=" + good), body: body, secret: paddleSecret, now: now, wantErr: "malformed"},
		{name: "stale", header: paddleHeader(fmt.Sprintf("ts=%d;h1=%s", old, signPaddle(paddleSecret, old, body))), body: body, secret: paddleSecret, now: now, wantErr: "stale timestamp"},
		{name: "from the future", header: paddleHeader(fmt.Sprintf("ts=%d;h1=%s", future, signPaddle(paddleSecret, future, body))), body: body, secret: paddleSecret, now: now, wantErr: "stale timestamp"},
		{name: "no secret configured", header: signed, body: body, secret: "", now: now, wantErr: "no signing secret"},
	})
}

func TestPaddleParse(t *testing.T) {
	const (
		txn = "txn_01hv8wptq8987qeep44cyrewp9"
		sub = "sub_01hv8x29kz0t586xy6zn1a62ny"
	)
	testParse(t, paddleName, []parseCase{
		{"transaction.completed.json", Notification{
			Kind: "transaction.completed", EventID: "evt_01hv8x2acma2gz3he5ccd8wrbt", Type: Payment,
			TransactionID: txn, PaymentRef: txn, Amount: 65215, Tax: 5315, Currency: "USD",
			OccurredAt: time.Date(2024, 4, 12, 10, 18, 49, 738971000, time.UTC),
			VisitorID:  "v_9c1d7e3f20", CheckoutSession: txn, SubscriptionID: sub, CheckoutSubscriptionID: sub,
		}},
		{"transaction.payment_failed.json", Notification{
			Kind: "transaction.payment_failed", EventID: "evt_01hv8wxg5qnhba6qzwz0yjq2ky", Type: Failed,
			TransactionID: txn, PaymentRef: txn, Amount: 65215, Tax: 5315, Currency: "USD",
			OccurredAt: time.Date(2024, 4, 12, 10, 15, 58, 325076000, time.UTC),
			VisitorID:  "v_9c1d7e3f20", CheckoutSession: txn,
		}},
		{"adjustment.created.json", Notification{
			Kind: "adjustment.created", EventID: "evt_01hvgf2sb9zfgqsrpjfd4a3p7v", Type: Refund,
			TransactionID: "adj_01hvgf2s84dr6reszzg29zbvcm", RefundOf: txn, Amount: 100, Tax: 8, Currency: "USD",
			OccurredAt: time.Date(2024, 4, 15, 8, 48, 20, 806045000, time.UTC), SubscriptionID: sub,
		}},
		{"adjustment.created.credit.json", Notification{
			Kind: "adjustment.created", EventID: "evt_01hvgh7k6d1gxk3b9m4qv7z2ta", Type: Refund,
			Ignored: true, IgnoreReason: "a credit to the customer's balance is not money back",
			RefundOf: txn, OccurredAt: time.Date(2024, 4, 15, 9, 25, 44, 530117000, time.UTC), SubscriptionID: sub,
		}},
		{"transaction.paid.json", Notification{
			Kind: "transaction.paid", EventID: "evt_01hv8x29v7f2k4c1mbv1d4q9ea",
			Ignored: true, IgnoreReason: `tally does not subscribe to "transaction.paid"`,
		}},
	})
}

func paddleData(m map[string]any) map[string]any { return m["data"].(map[string]any) }

func TestPaddleParseVariants(t *testing.T) {
	txn := fixture(t, paddleName, "transaction.completed.json")
	adj := fixture(t, paddleName, "adjustment.created.json")
	adjusted := func(reason string) func(n *Notification) {
		return func(n *Notification) { *n = ignore(*n, reason) }
	}
	testVariants(t, paddleName, []variantCase{
		{"renewal: not a checkout", txn,
			func(m map[string]any) { paddleData(m)["origin"] = "subscription_recurring" },
			func(n *Notification) { n.CheckoutSession, n.CheckoutSubscriptionID = "", "" }},
		{"grand_total_tax after credits", txn,
			func(m map[string]any) {
				tot := paddleData(m)["details"].(map[string]any)["totals"].(map[string]any)
				tot["credit"], tot["grand_total"], tot["grand_total_tax"] = "10000", "55215", "4500"
			},
			func(n *Notification) { n.Amount, n.Tax = 55215, 4500 }},
		{"fully credited transaction", txn,
			func(m map[string]any) {
				paddleData(m)["details"].(map[string]any)["totals"].(map[string]any)["grand_total"] = "0"
			},
			adjusted("transaction grand total is not positive (a free or credited transaction)")},
		{"visitor_id key in custom_data", txn,
			func(m map[string]any) { paddleData(m)["custom_data"] = map[string]any{"visitor_id": "v_b"} },
			func(n *Notification) { n.VisitorID = "v_b" }},
		{"approved refund", adj,
			func(m map[string]any) { paddleData(m)["status"] = "approved" },
			func(n *Notification) {}},
		{"chargeback", adj,
			func(m map[string]any) { paddleData(m)["action"], paddleData(m)["status"] = "chargeback", "approved" },
			func(n *Notification) {}},
		{"rejected refund", adj,
			func(m map[string]any) { paddleData(m)["status"] = "rejected" },
			adjusted("adjustment is rejected")},
		{"chargeback reversed: the transaction's money again", adj,
			func(m map[string]any) {
				paddleData(m)["action"], paddleData(m)["status"] = "chargeback_reverse", "approved"
			},
			func(n *Notification) {
				ref := n.RefundOf
				n.Type, n.RefundOf, n.PaymentRef, n.ReinstateOf = Payment, "", ref, ref
			}},
		{"chargeback warning", adj,
			func(m map[string]any) { paddleData(m)["action"] = "chargeback_warning" },
			adjusted("chargeback warning: no money has moved yet")},
	})
}

func TestPaddleParseErrors(t *testing.T) {
	txn := string(fixture(t, paddleName, "transaction.completed.json"))
	testPayloadErrors(t, paddleName, []payloadCase{
		{"not JSON", "{"},
		{"no event_type", `{"event_id":"evt_1","data":{}}`},
		{"transaction without id", `{"event_type":"transaction.completed","data":{"currency_code":"USD","details":{"totals":{"grand_total":"100"}}}}`},
		{"grand_total not minor units", strings.Replace(txn, `"grand_total": "65215"`, `"grand_total": "652.15"`, 1)},
		{"grand_total as a number", strings.Replace(txn, `"grand_total": "65215"`, `"grand_total": 65215`, 1)},
		{"no grand_total", `{"event_type":"transaction.completed","data":{"id":"txn_1","currency_code":"USD","details":{"totals":{}}}}`},
		{"adjustment without transaction", `{"event_type":"adjustment.created","data":{"id":"adj_1","action":"refund","totals":{"total":"100"},"currency_code":"USD"}}`},
		{"refund without a total", `{"event_type":"adjustment.created","data":{"id":"adj_1","transaction_id":"txn_1","action":"refund","totals":{},"currency_code":"USD"}}`},
	})
}

func FuzzParsePaddle(f *testing.F) { fuzzParse(f, paddleName) }

func FuzzVerifyPaddle(f *testing.F) {
	now := time.Date(2024, 4, 12, 10, 18, 51, 0, time.UTC)
	for _, file := range fixtures(f, paddleName) {
		body := fixture(f, paddleName, file)
		f.Add(body, fmt.Sprintf("ts=%d;h1=%s", now.Unix(), signPaddle(paddleSecret, now.Unix(), body)))
	}
	f.Add([]byte("{}"), ";;ts=;h1=;=")
	p, _ := Get(paddleName)
	f.Fuzz(func(t *testing.T, body []byte, header string) {
		checkVerifyError(t, p.Verify(paddleHeader(header), body, paddleSecret, now), paddleSecret)
	})
}

package providers

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A Standard Webhooks secret as Polar generates them since 2026-09-08:
// whsec_ and the base64 of 32 random bytes.
var polarKey = []byte("0123456789abcdef0123456789abcdef")
var polarSecret = "whsec_" + base64.StdEncoding.EncodeToString(polarKey)

// A secret from before that date: whsec_ and 43 characters, used as raw bytes.
const polarLegacySecret = "whsec_polarLegacyToken0123456789abcdefghijklmnopq"

// signPolar signs as Standard Webhooks does with the given HMAC key.
func signPolar(key []byte, id string, ts int64, body []byte) string {
	m := hmac.New(sha256.New, key)
	fmt.Fprintf(m, "%s.%d.%s", id, ts, body)
	return "v1," + base64.StdEncoding.EncodeToString(m.Sum(nil))
}

func polarHeader(id, ts, sig string) http.Header {
	h := http.Header{}
	if id != "" {
		h.Set("webhook-id", id)
	}
	if ts != "" {
		h.Set("webhook-timestamp", ts)
	}
	if sig != "" {
		h.Set("webhook-signature", sig)
	}
	return h
}

func TestPolarVerify(t *testing.T) {
	body := fixture(t, polarName, "order.created.json")
	now := time.Date(2026, 11, 20, 16, 2, 16, 0, time.UTC)
	const id = "msg_35fWq0Yk2dHp8ZbN1xR7tLcV4sE"
	ts := now.Add(-time.Second).Unix()
	tss := strconv.FormatInt(ts, 10)
	good := signPolar(polarKey, id, ts, body)
	old, future := now.Add(-6*time.Minute).Unix(), now.Add(6*time.Minute).Unix()

	testVerify(t, polarName, []verifyCase{
		{name: "Standard Webhooks secret", header: polarHeader(id, tss, good), body: body, secret: polarSecret, now: now},
		// The Standard Webhooks test vector (standard-webhooks/standard-webhooks,
		// libraries/go/webhook_test.go, TestWebhookSign).
		{name: "Standard Webhooks vector",
			header: polarHeader("msg_p5jXN8AQM9LWM0D4loKWxJek", "1614265330", "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="),
			body:   []byte(`{"test": 2432232314}`), secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", now: time.Unix(1614265330, 0)},
		// Polar's original scheme keys on the secret's UTF-8 bytes; computed with
		// printf '%s' 'msg_2KWPBgLlAfxdpx2AI54pPJ85f4W.1763716932.{"type":"order.created"}' | openssl dgst -sha256 -hmac "$secret" -binary | base64.
		{name: "legacy Polar secret, known answer",
			header: polarHeader("msg_2KWPBgLlAfxdpx2AI54pPJ85f4W", "1763716932", "v1,41e8lXk4WqIjADkJBJKUI5y643bVyF797OBL3/D0Ak8="),
			body:   []byte(`{"type":"order.created"}`), secret: polarLegacySecret, now: time.Unix(1763716932, 0)},
		{name: "legacy Polar secret", header: polarHeader(id, tss, signPolar([]byte(polarLegacySecret), id, ts, body)),
			body: body, secret: polarLegacySecret, now: now},
		{name: "decodable secret signed the legacy way", header: polarHeader(id, tss, signPolar([]byte(polarSecret), id, ts, body)),
			body: body, secret: polarSecret, now: now},
		{name: "secret without prefix", header: polarHeader(id, tss, signPolar([]byte("mysecret"), id, ts, body)),
			body: body, secret: "mysecret", now: now},
		{name: "several signatures, another version ignored",
			header: polarHeader(id, tss, "v1a,"+base64.StdEncoding.EncodeToString([]byte("asymmetric"))+" "+signPolar([]byte("old key"), id, ts, body)+" "+good),
			body:   body, secret: polarSecret, now: now},
		{name: "wrong secret", header: polarHeader(id, tss, good), body: body, secret: "whsec_" + base64.StdEncoding.EncodeToString([]byte("another key of thirty-two bytes!")), now: now, wantErr: "does not match"},
		{name: "legacy signature, wrong secret", header: polarHeader(id, tss, signPolar([]byte(polarLegacySecret), id, ts, body)), body: body, secret: polarSecret, now: now, wantErr: "does not match"},
		{name: "tampered body", header: polarHeader(id, tss, good), body: []byte(strings.Replace(string(body), `"total_amount": 2975`, `"total_amount": 297500`, 1)), secret: polarSecret, now: now, wantErr: "does not match"},
		{name: "another message id", header: polarHeader("msg_other", tss, good), body: body, secret: polarSecret, now: now, wantErr: "does not match"},
		{name: "missing webhook-signature", header: polarHeader(id, tss, ""), body: body, secret: polarSecret, now: now, wantErr: "missing"},
		{name: "missing webhook-id", header: polarHeader("", tss, good), body: body, secret: polarSecret, now: now, wantErr: "missing"},
		{name: "missing webhook-timestamp", header: polarHeader(id, "", good), body: body, secret: polarSecret, now: now, wantErr: "missing"},
		{name: "timestamp not unix seconds", header: polarHeader(id, "2026-11-20T16:02:15Z", good), body: body, secret: polarSecret, now: now, wantErr: "malformed"},
		{name: "no v1 signature", header: polarHeader(id, tss, strings.TrimPrefix(good, "v1,")), body: body, secret: polarSecret, now: now, wantErr: "malformed"},
		{name: "signature not base64", header: polarHeader(id, tss, "v1,%%%"), body: body, secret: polarSecret, now: now, wantErr: "malformed"},
		{name: "stale", header: polarHeader(id, strconv.FormatInt(old, 10), signPolar(polarKey, id, old, body)), body: body, secret: polarSecret, now: now, wantErr: "stale timestamp"},
		{name: "from the future", header: polarHeader(id, strconv.FormatInt(future, 10), signPolar(polarKey, id, future, body)), body: body, secret: polarSecret, now: now, wantErr: "stale timestamp"},
		{name: "no secret configured", header: polarHeader(id, tss, good), body: body, secret: "", now: now, wantErr: "no signing secret"},
	})
}

func TestPolarKeys(t *testing.T) {
	tests := []struct {
		secret string
		want   []string
	}{
		{polarSecret, []string{string(polarKey), polarSecret}},
		{polarLegacySecret, []string{polarLegacySecret}}, // 43 characters: not base64
		{"mysecret", []string{"mysecret"}},
		{"whsec_", []string{"whsec_"}},
	}
	for _, tt := range tests {
		var got []string
		for _, k := range polarKeys(tt.secret) {
			got = append(got, string(k))
		}
		if strings.Join(got, "|") != strings.Join(tt.want, "|") {
			t.Errorf("polarKeys(%q) = %q, want %q", tt.secret, got, tt.want)
		}
	}
}

func TestPolarParse(t *testing.T) {
	const (
		order = "5f2c0a7e-8d4b-4f1a-9c3e-2b6d8e0f1a3c"
		sub   = "4d5e6f7a-8b9c-4d0e-9f1a-2b3c4d5e6f7a"
	)
	testParse(t, polarName, []parseCase{
		{"order.created.json", Notification{
			Kind: "order.created", Type: Payment, TransactionID: order, PaymentRef: order,
			Amount: 2975, Tax: 475, Currency: "EUR", OccurredAt: time.Date(2026, 11, 20, 16, 2, 14, 910552000, time.UTC),
			VisitorID: "v_e4a90b7c35", CheckoutSession: "c1d2e3f4-a5b6-4c7d-8e9f-0a1b2c3d4e5f",
		}},
		{"order.created.subscription.json", Notification{
			Kind: "order.created", Type: Payment, TransactionID: "6a3d1b8f-9e5c-4a2b-8d4f-3c7e9a1b2d4f",
			PaymentRef: "6a3d1b8f-9e5c-4a2b-8d4f-3c7e9a1b2d4f", Amount: 900, Currency: "USD",
			OccurredAt: time.Date(2026, 11, 20, 17, 30, 41, 512009000, time.UTC), VisitorID: "v_61b3d8f2aa",
			CheckoutSession: "d2e3f4a5-b6c7-4d8e-9f0a-1b2c3d4e5f6a", SubscriptionID: sub, CheckoutSubscriptionID: sub,
		}},
		{"order.created.pending.json", Notification{
			Kind: "order.created", Type: Payment, PaymentRef: "9b8c7d6e-5f4a-4b3c-9d2e-1f0a9b8c7d6e",
			Ignored: true, IgnoreReason: "order is not paid yet (it counts when order.paid announces its payment)",
			OccurredAt: time.Date(2026, 12, 20, 17, 30, 44, 118230000, time.UTC), VisitorID: "v_61b3d8f2aa",
			SubscriptionID: sub,
		}},
		// the pending renewal above, paid five seconds later: counted at the
		// time of the event, with the subscription for attribution
		{"order.paid.json", Notification{
			Kind: "order.paid", Type: Payment, TransactionID: "9b8c7d6e-5f4a-4b3c-9d2e-1f0a9b8c7d6e",
			PaymentRef: "9b8c7d6e-5f4a-4b3c-9d2e-1f0a9b8c7d6e", Amount: 900, Currency: "USD",
			OccurredAt: time.Date(2026, 12, 20, 17, 30, 49, 781002000, time.UTC), VisitorID: "v_61b3d8f2aa",
			SubscriptionID: sub,
		}},
		{"refund.created.json", Notification{
			Kind: "refund.created", Type: Refund, TransactionID: "e7f8a9b0-c1d2-4e3f-a4b5-c6d7e8f9a0b1", RefundOf: order,
			Amount: 1488, Tax: 238, Currency: "EUR", OccurredAt: time.Date(2026, 11, 21, 9, 44, 3, 120934000, time.UTC),
		}},
	})
}

func polarData(m map[string]any) map[string]any { return m["data"].(map[string]any) }

func TestPolarParseVariants(t *testing.T) {
	order := fixture(t, polarName, "order.created.json")
	refund := fixture(t, polarName, "refund.created.json")
	ignored := func(reason string) func(n *Notification) {
		return func(n *Notification) { *n = ignore(*n, reason) }
	}
	testVariants(t, polarName, []variantCase{
		{"free order", order,
			func(m map[string]any) {
				d := polarData(m)
				d["subtotal_amount"], d["discount_amount"], d["net_amount"], d["tax_amount"], d["total_amount"] = 2500, 2500, 0, 0, 0
			},
			func(n *Notification) {
				*n = ignore(*n, "order total is zero (a free product or a full discount)")
				n.Tax = 0
			}},
		{"older payload: amount before tax, no total_amount", order,
			func(m map[string]any) {
				d := polarData(m)
				delete(d, "total_amount")
				delete(d, "paid")
				d["amount"] = 2500
			},
			func(n *Notification) {}},
		{"visitor from custom field data", order,
			func(m map[string]any) {
				polarData(m)["metadata"] = map[string]any{"source": "newsletter"}
				polarData(m)["custom_field_data"] = map[string]any{"analytics_vid": "v_field"}
			},
			func(n *Notification) { n.VisitorID = "v_field" }},
		{"pending refund counts", refund,
			func(m map[string]any) { polarData(m)["status"] = "pending" },
			func(n *Notification) {}},
		{"failed refund", refund,
			func(m map[string]any) { polarData(m)["status"] = "failed" },
			ignored(`refund status is "failed"`)},
		{"canceled refund", refund,
			func(m map[string]any) { polarData(m)["status"] = "canceled" },
			ignored(`refund status is "canceled"`)},
	})
}

func TestPolarParseErrors(t *testing.T) {
	testPayloadErrors(t, polarName, []payloadCase{
		{"not JSON", "order.created"},
		{"no type", `{"data":{"id":"1"}}`},
		{"order without id", `{"type":"order.created","data":{"status":"paid","total_amount":100,"currency":"usd"}}`},
		{"order without amount", `{"type":"order.created","data":{"id":"o1","status":"paid","currency":"usd"}}`},
		{"order with a bad currency", `{"type":"order.created","data":{"id":"o1","status":"paid","total_amount":100,"currency":"usdollar"}}`},
		{"refund without order", `{"type":"refund.created","data":{"id":"r1","status":"succeeded","amount":100,"currency":"usd"}}`},
		{"refund without amount", `{"type":"refund.created","data":{"id":"r1","order_id":"o1","status":"succeeded","currency":"usd"}}`},
		{"data not an object", `{"type":"refund.created","data":[]}`},
	})
}

func FuzzParsePolar(f *testing.F) { fuzzParse(f, polarName) }

func FuzzVerifyPolar(f *testing.F) {
	now := time.Date(2026, 11, 20, 16, 2, 16, 0, time.UTC)
	for _, file := range fixtures(f, polarName) {
		body := fixture(f, polarName, file)
		f.Add(body, "msg_"+file, strconv.FormatInt(now.Unix(), 10), signPolar(polarKey, "msg_"+file, now.Unix(), body))
	}
	f.Add([]byte("{}"), "msg", "-1", "v1, v1,=== v2,x")
	p, _ := Get(polarName)
	f.Fuzz(func(t *testing.T, body []byte, id, ts, sig string) {
		checkVerifyError(t, p.Verify(polarHeader(id, ts, sig), body, polarSecret, now), polarSecret)
	})
}

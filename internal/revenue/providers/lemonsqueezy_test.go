package providers

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const lemonSqueezySecret = "ls-signing-secret-42"

// signLemonSqueezy signs as Lemon Squeezy does: hex HMAC-SHA256(secret, body).
func signLemonSqueezy(secret string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

func lemonSqueezyHeader(v string) http.Header {
	h := http.Header{}
	h.Set("X-Signature", v)
	return h
}

func TestLemonSqueezyVerify(t *testing.T) {
	body := fixture(t, lemonSqueezyName, "order_created.json")
	now := time.Date(2026, 11, 20, 14, 3, 30, 0, time.UTC)
	good := signLemonSqueezy(lemonSqueezySecret, body)
	// An independent known answer, computed with
	// printf '%s' '{"meta":{"event_name":"order_created"}}' | openssl dgst -sha256 -hmac "$secret".
	kat := []byte(`{"meta":{"event_name":"order_created"}}`)
	katSig := "0079b7c248fb9169058cfd2edcad0a706e55580b0b102e98035c2ae5ea1a6897"

	testVerify(t, lemonSqueezyName, []verifyCase{
		{name: "signed", header: lemonSqueezyHeader(good), body: body, secret: lemonSqueezySecret, now: now},
		{name: "known answer", header: lemonSqueezyHeader(katSig), body: kat, secret: lemonSqueezySecret, now: now},
		{name: "upper-case hex", header: lemonSqueezyHeader(strings.ToUpper(good)), body: body, secret: lemonSqueezySecret, now: now},
		// The scheme has no timestamp: an old delivery still verifies, and
		// deduplication keeps a replay from counting twice.
		{name: "a year later", header: lemonSqueezyHeader(good), body: body, secret: lemonSqueezySecret, now: now.AddDate(1, 0, 0)},
		{name: "wrong secret", header: lemonSqueezyHeader(good), body: body, secret: "another-secret", now: now, wantErr: "does not match"},
		{name: "tampered body", header: lemonSqueezyHeader(good), body: []byte(strings.Replace(string(body), `"total": 1199`, `"total": 119900`, 1)), secret: lemonSqueezySecret, now: now, wantErr: "does not match"},
		{name: "truncated signature", header: lemonSqueezyHeader(good[:32]), body: body, secret: lemonSqueezySecret, now: now, wantErr: "does not match"},
		{name: "missing header", header: http.Header{}, body: body, secret: lemonSqueezySecret, now: now, wantErr: "missing X-Signature"},
		{name: "not hex", header: lemonSqueezyHeader("sha256=" + good), body: body, secret: lemonSqueezySecret, now: now, wantErr: "malformed"},
		{name: "no secret configured", header: lemonSqueezyHeader(good), body: body, secret: "", now: now, wantErr: "no signing secret"},
	})
}

func TestLemonSqueezyParse(t *testing.T) {
	testParse(t, lemonSqueezyName, []parseCase{
		{"order_created.json", Notification{
			Kind: "order_created", Type: Payment, TransactionID: "5034812", PaymentRef: "5034812",
			Amount: 1199, Tax: 200, Currency: "USD", OccurredAt: time.Date(2026, 11, 20, 14, 3, 27, 0, time.UTC),
			VisitorID: "v_2b8e4f61c0",
		}},
		{"order_created.pending.json", Notification{
			Kind: "order_created", Type: Payment, PaymentRef: "5034990",
			Ignored: true, IgnoreReason: `order status is "pending", not paid`, VisitorID: "v_2b8e4f61c0",
		}},
		{"order_refunded.json", Notification{
			Kind: "order_refunded", Type: Refund, TransactionID: "5034812:500", RefundOf: "5034812",
			Amount: 500, CumulativeRefund: true, Currency: "USD",
			OccurredAt: time.Date(2026, 11, 21, 9, 12, 40, 0, time.UTC), VisitorID: "v_2b8e4f61c0",
		}},
		// a renewal: 9.99 + 2.00 tax
		{"subscription_payment_success.json", Notification{
			Kind: "subscription_payment_success", Type: Payment, TransactionID: "subscription-invoice:2167840",
			PaymentRef: "subscription-invoice:2167840", Amount: 1199, Tax: 200, Currency: "USD",
			OccurredAt: time.Date(2026, 11, 20, 14, 3, 30, 0, time.UTC), VisitorID: "v_2b8e4f61c0", SubscriptionID: "1052306",
		}},
		// 6.00 of that renewal refunded (a running total, like orders')
		{"subscription_payment_refunded.json", Notification{
			Kind: "subscription_payment_refunded", Type: Refund, TransactionID: "subscription-invoice:2167840:600",
			RefundOf: "subscription-invoice:2167840", Amount: 600, CumulativeRefund: true, Currency: "USD",
			OccurredAt: time.Date(2026, 11, 22, 10, 20, 11, 0, time.UTC), VisitorID: "v_2b8e4f61c0", SubscriptionID: "1052306",
		}},
		// 5.00 of the first invoice refunded: a refund of the order that
		// created the subscription, whose order_refunded counts it
		{"subscription_payment_refunded.initial.json", Notification{
			Kind: "subscription_payment_refunded", Type: Refund, RefundOf: "subscription-invoice:2167612",
			Ignored: true, IgnoreReason: "a refund of the subscription's first payment, counted from order_refunded",
			VisitorID: "v_2b8e4f61c0", SubscriptionID: "1052306",
		}},
		// the first invoice is the order that created the subscription
		{"subscription_payment_success.initial.json", Notification{
			Kind: "subscription_payment_success", Type: Payment, PaymentRef: "subscription-invoice:2167612",
			Ignored: true, IgnoreReason: "the subscription's first payment, counted from order_created",
			VisitorID: "v_2b8e4f61c0", SubscriptionID: "1052306",
		}},
	})
}

func lemonSqueezyAttributes(m map[string]any) map[string]any {
	return m["data"].(map[string]any)["attributes"].(map[string]any)
}

func TestLemonSqueezyParseVariants(t *testing.T) {
	order := fixture(t, lemonSqueezyName, "order_created.json")
	refund := fixture(t, lemonSqueezyName, "order_refunded.json")
	testVariants(t, lemonSqueezyName, []variantCase{
		{"second partial refund: a new id, the running total", refund,
			func(m map[string]any) { lemonSqueezyAttributes(m)["refunded_amount"] = 1199 },
			func(n *Notification) { n.TransactionID, n.Amount = "5034812:1199", 1199 }},
		{"refund payload without refunded_amount: the whole total", refund,
			func(m map[string]any) {
				delete(lemonSqueezyAttributes(m), "refunded_amount")
				lemonSqueezyAttributes(m)["status"] = "refunded"
				lemonSqueezyAttributes(m)["refunded"] = true
			},
			func(n *Notification) { n.TransactionID, n.Amount = "5034812:1199", 1199 }},
		{"visitor_id key", order,
			func(m map[string]any) {
				m["meta"].(map[string]any)["custom_data"] = map[string]any{"visitor_id": "v_other"}
			},
			func(n *Notification) { n.VisitorID = "v_other" }},
		{"custom_data absent", order,
			func(m map[string]any) { delete(m["meta"].(map[string]any), "custom_data") },
			func(n *Notification) { n.VisitorID = "" }},
		{"lower-case currency", order,
			func(m map[string]any) { lemonSqueezyAttributes(m)["currency"] = "eur" },
			func(n *Notification) { n.Currency = "EUR" }},
	})
}

// A webhook of a Lemon Squeezy store's test mode says so in its meta and in
// the order or invoice it carries; either one makes it acknowledged and
// recorded as nothing, whatever its kind. The same webhook live counts.
func TestLemonSqueezyTestMode(t *testing.T) {
	meta := func(m map[string]any) { m["meta"].(map[string]any)["test_mode"] = true }
	object := func(m map[string]any) { lemonSqueezyAttributes(m)["test_mode"] = true }
	both := func(m map[string]any) { meta(m); object(m) }
	for _, c := range []struct {
		name, file, kind string
		patch            func(m map[string]any)
	}{
		{"order_created", "order_created.json", "order_created", both},
		{"order_refunded", "order_refunded.json", "order_refunded", both},
		{"subscription_payment_success", "subscription_payment_success.json", "subscription_payment_success", both},
		{"subscription_payment_refunded", "subscription_payment_refunded.json", "subscription_payment_refunded", both},
		{"order_created, test mode in meta only", "order_created.json", "order_created", meta},
		{"order_created, test mode in the order only", "order_created.json", "order_created", object},
	} {
		t.Run(c.name, func(t *testing.T) {
			live := fixture(t, lemonSqueezyName, c.file)
			if n, err := (lemonSqueezy{}).Parse(live); err != nil || n.Ignored || n.TestMode || n.Amount <= 0 {
				t.Fatalf("live: %+v, %v; want it counted", n, err)
			}
			got, err := lemonSqueezy{}.Parse(patchJSON(t, live, c.patch))
			if err != nil {
				t.Fatalf("test mode: %v", err)
			}
			want := Notification{Kind: c.kind, Ignored: true, IgnoreReason: "test mode: not counted as revenue", TestMode: true}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("test mode (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLemonSqueezyParseErrors(t *testing.T) {
	testPayloadErrors(t, lemonSqueezyName, []payloadCase{
		{"not JSON", "order_created"},
		{"no event name", `{"meta":{},"data":{"id":"1"}}`},
		{"order without id", `{"meta":{"event_name":"order_created"},"data":{"type":"orders","attributes":{"status":"paid","total":100,"currency":"USD"}}}`},
		{"paid order without total", `{"meta":{"event_name":"order_created"},"data":{"id":"1","attributes":{"status":"paid","currency":"USD"}}}`},
		{"total as a string", `{"meta":{"event_name":"order_created"},"data":{"id":"1","attributes":{"status":"paid","total":"11.99","currency":"USD"}}}`},
		{"no currency", `{"meta":{"event_name":"order_created"},"data":{"id":"1","attributes":{"status":"paid","total":100}}}`},
	})
}

func FuzzParseLemonSqueezy(f *testing.F) { fuzzParse(f, lemonSqueezyName) }

func FuzzVerifyLemonSqueezy(f *testing.F) {
	for _, file := range fixtures(f, lemonSqueezyName) {
		body := fixture(f, lemonSqueezyName, file)
		f.Add(body, signLemonSqueezy(lemonSqueezySecret, body))
	}
	f.Add([]byte(""), "zz")
	p, _ := Get(lemonSqueezyName)
	now := time.Date(2026, 11, 20, 14, 3, 30, 0, time.UTC)
	f.Fuzz(func(t *testing.T, body []byte, header string) {
		checkVerifyError(t, p.Verify(lemonSqueezyHeader(header), body, lemonSqueezySecret, now), lemonSqueezySecret)
	})
}

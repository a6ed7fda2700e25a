package app_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tally-analytics/tally/internal/accounts"
	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/pkg/api"
)

// webhookSigners sign a body the way each provider documents it, at time now.
var webhookSigners = map[string]func(secret string, body []byte, now time.Time) http.Header{
	"provider_a": func(secret string, body []byte, now time.Time) http.Header { // Stripe
		mac := hmac.New(sha256.New, []byte(secret))
		fmt.Fprintf(mac, "%d.%s", now.Unix(), body)
		return http.Header{"Stripe-Signature": {fmt.Sprintf("t=%d,v1=%x", now.Unix(), mac.Sum(nil))}}
	},
	"provider_b": func(secret string, body []byte, _ time.Time) http.Header { // Lemon Squeezy
		mac := hmac.New(sha256.New, []byte(secret))
		mac.Write(body)
		return http.Header{"X-Signature": {hex.EncodeToString(mac.Sum(nil))}}
	},
	"provider_c": func(secret string, body []byte, now time.Time) http.Header { // Paddle Billing
		mac := hmac.New(sha256.New, []byte(secret))
		fmt.Fprintf(mac, "%d:%s", now.Unix(), body)
		return http.Header{"Paddle-Signature": {fmt.Sprintf("ts=%d;h1=%x", now.Unix(), mac.Sum(nil))}}
	},
	"provider_d": func(secret string, body []byte, now time.Time) http.Header { // Polar: Standard Webhooks
		key, _ := base64.StdEncoding.DecodeString(secret[len("whsec_"):])
		mac := hmac.New(sha256.New, key)
		fmt.Fprintf(mac, "msg_2KWPBgLlAfxdpx2AI54pPJ85f4W.%d.%s", now.Unix(), body)
		return http.Header{"Webhook-Id": {"msg_2KWPBgLlAfxdpx2AI54pPJ85f4W"}, "Webhook-Timestamp": {fmt.Sprint(now.Unix())},
			"Webhook-Signature": {"v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))}}
	},
}

var webhookSecrets = map[string]string{
	"provider_a": "whsec_stripe_test_0123456789abcdef",
	"provider_b": "lemon-squeezy-signing-secret-1",
	"provider_c": "pdl_ntfset_01hv8x_testsecret",
	"provider_d": "whsec_" + base64.StdEncoding.EncodeToString([]byte("polar-standard-webhooks-key!!")),
}

// moneyFixture is a fixture of the providers package and what it must put in
// the ledger (amounts read off the fixture by hand).
type moneyFixture struct {
	file     string
	kind     model.PaymentKind
	amount   int64
	currency string
	linked   bool // a refund of an earlier fixture's payment
}

var webhookFixtures = map[string][]moneyFixture{
	"provider_a": {
		{"checkout.session.completed.json", model.KindPayment, 2198, "USD", false},
		{"checkout.session.async_payment_succeeded.json", model.KindPayment, 2198, "EUR", false},
		{"invoice.paid.json", model.KindPayment, 1500, "USD", false},
		{"charge.refunded.json", model.KindRefund, 1000, "USD", true},
	},
	"provider_b": {
		{"order_created.json", model.KindPayment, 1199, "USD", false},
		{"order_refunded.json", model.KindRefund, 500, "USD", true},
		{"subscription_payment_success.json", model.KindPayment, 1199, "USD", false},
		{"subscription_payment_refunded.json", model.KindRefund, 600, "USD", true},
	},
	"provider_c": {
		{"transaction.completed.json", model.KindPayment, 65215, "USD", false},
		{"transaction.payment_failed.json", model.KindFailed, 65215, "USD", false},
		{"adjustment.created.json", model.KindRefund, 100, "USD", true},
	},
	"provider_d": {
		{"order.created.json", model.KindPayment, 2975, "EUR", false},
		{"refund.created.json", model.KindRefund, 1488, "EUR", true},
		{"order.paid.json", model.KindPayment, 900, "USD", false},
	},
}

// acknowledged are fixtures tally answers 200 without recording money: a kind
// it does not subscribe to, or money it counts from another kind.
var acknowledged = map[string]string{
	"provider_a": "payment_intent.succeeded.json",
	"provider_b": "subscription_payment_success.initial.json", // counted from order_created
	"provider_c": "transaction.paid.json",
	"provider_d": "order.created.pending.json", // counted from order.paid
}

// announcedTwice are the providers whose paid one-time checkout is
// announced by two kinds: the second must be a duplicate of the first.
var announcedTwice = map[string][2]string{
	"provider_a": {`"type": "checkout.session.completed"`, `"type": "checkout.session.async_payment_succeeded"`},
	"provider_d": {`"type": "order.created"`, `"type": "order.paid"`},
}

func fixture(t *testing.T, provider, file string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "revenue", "providers", "testdata", provider, file))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func postWebhook(t *testing.T, h *harness, provider, site string, body []byte, header http.Header) (int, api.WebhookResponse) {
	t.Helper()
	resp := sendWebhook(t, h, provider, site, body, header)
	defer resp.Body.Close()
	var res api.WebhookResponse
	json.NewDecoder(resp.Body).Decode(&res)
	return resp.StatusCode, res
}

// sendWebhook posts body to the provider's webhook of site with header;
// the caller closes the answer's body.
func sendWebhook(t *testing.T, h *harness, provider, site string, body []byte, header http.Header) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, h.srv.URL+"/api/v1/webhooks/"+provider+"?site_id="+site, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header[http.CanonicalHeaderKey(k)] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func ledgerCount(t *testing.T, h *harness, site string, where string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := h.app.PG.QueryRow(context.Background(), "SELECT count(*) FROM payments WHERE site_id = $1 AND "+where,
		append([]any{site}, args...)...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestWebhooks(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	newSite := func(domain string) string {
		site, err := h.app.Accounts.CreateSite(ctx, accounts.NewSite{OwnerEmail: h.email, Domain: domain})
		if err != nil {
			t.Fatal(err)
		}
		for p, secret := range webhookSecrets {
			if err := h.app.Accounts.SetProviderSecret(ctx, site.ID, model.Provider(p), secret); err != nil {
				t.Fatal(err)
			}
		}
		return string(site.ID)
	}
	for _, provider := range []string{"provider_a", "provider_b", "provider_c", "provider_d"} {
		t.Run(provider, func(t *testing.T) {
			// after every fixture's time: Polar's renewal is paid on 2026-12-20
			h.clock.Set(time.Date(2026, 12, 21, 12, 0, 0, 0, time.UTC))
			sign := func(body []byte) http.Header {
				return webhookSigners[provider](webhookSecrets[provider], body, h.clock.Now())
			}
			site := newSite(provider + ".example.com")

			for _, f := range webhookFixtures[provider] {
				body := fixture(t, provider, f.file)
				status, res := postWebhook(t, h, provider, site, body, sign(body))
				if status != 200 || !res.Received || res.Ignored || res.PaymentID == "" || res.Duplicate {
					t.Fatalf("%s: %d %+v", f.file, status, res)
				}
				where := "id = $2 AND kind = $3 AND amount = $4 AND currency = $5"
				if f.linked {
					where += " AND refund_of IS NOT NULL"
				}
				if n := ledgerCount(t, h, site, where, res.PaymentID, string(f.kind), f.amount, f.currency); n != 1 {
					t.Errorf("%s: not recorded as %s of %d %s (linked %v)", f.file, f.kind, f.amount, f.currency, f.linked)
				}
				// the same delivery again is counted once
				status, again := postWebhook(t, h, provider, site, body, sign(body))
				if status != 200 || !again.Duplicate || again.PaymentID != res.PaymentID {
					t.Errorf("%s delivered twice: %d %+v", f.file, status, again)
				}
			}
			if n := ledgerCount(t, h, site, "true"); n != int64(len(webhookFixtures[provider])) {
				t.Errorf("the ledger holds %d rows, want %d", n, len(webhookFixtures[provider]))
			}
			body := fixture(t, provider, acknowledged[provider])
			status, res := postWebhook(t, h, provider, site, body, sign(body))
			if status != 200 || !res.Ignored {
				t.Errorf("%s: %d %+v, want 200 ignored", acknowledged[provider], status, res)
			}
			if kinds, ok := announcedTwice[provider]; ok {
				first := fixture(t, provider, webhookFixtures[provider][0].file)
				again := bytes.Replace(first, []byte(kinds[0]), []byte(kinds[1]), 1)
				if bytes.Equal(again, first) {
					t.Fatalf("%s holds no %s", webhookFixtures[provider][0].file, kinds[0])
				}
				status, res := postWebhook(t, h, provider, site, again, sign(again))
				if status != 200 || !res.Duplicate {
					t.Errorf("the first payment announced again as %s: %d %+v, want a duplicate", kinds[1], status, res)
				}
			}

			// rejected deliveries record nothing
			clean := newSite(provider + ".rejections.example.com")
			pay := fixture(t, provider, webhookFixtures[provider][0].file)
			rejections := map[string]struct {
				body   []byte
				header http.Header
			}{
				"wrong secret":   {pay, webhookSigners[provider]("not-the-secret-"+webhookSecrets[provider], pay, h.clock.Now())},
				"tampered body":  {bytes.Replace(pay, []byte(fmt.Sprint(webhookFixtures[provider][0].amount)), []byte("1"), 1), sign(pay)},
				"missing header": {pay, http.Header{}},
			}
			if provider != "provider_b" { // Lemon Squeezy signatures carry no timestamp
				rejections["stale timestamp"] = struct {
					body   []byte
					header http.Header
				}{pay, webhookSigners[provider](webhookSecrets[provider], pay, h.clock.Now().Add(-10*time.Minute))}
			}
			for name, r := range rejections {
				if status, _ := postWebhook(t, h, provider, clean, r.body, r.header); status != 401 {
					t.Errorf("%s: status %d, want 401", name, status)
				}
			}
			if n := ledgerCount(t, h, clean, "true"); n != 0 {
				t.Errorf("rejected deliveries recorded %d rows", n)
			}

			// 20 identical deliveries at once record one payment
			concurrent := newSite(provider + ".concurrent.example.com")
			var wg sync.WaitGroup
			for range 20 {
				wg.Go(func() {
					if status, _ := postWebhook(t, h, provider, concurrent, pay, sign(pay)); status != 200 {
						t.Errorf("concurrent delivery: %d", status)
					}
				})
			}
			wg.Wait()
			if n := ledgerCount(t, h, concurrent, "true"); n != 1 {
				t.Errorf("20 concurrent deliveries recorded %d rows, want 1", n)
			}
		})
	}

	t.Run("unknown provider and site", func(t *testing.T) {
		body := fixture(t, "provider_a", "checkout.session.completed.json")
		if status, _ := postWebhook(t, h, "provider_z", string(h.siteID), body, nil); status != 404 {
			t.Errorf("unknown provider: %d", status)
		}
		if status, _ := postWebhook(t, h, "provider_a", "nope", body, nil); status != 401 {
			t.Errorf("unknown site: %d, want 401 (like a bad signature: no existence leak)", status)
		}
		// a site without a provider_a secret cannot be written to
		if status, _ := postWebhook(t, h, "provider_a", string(h.siteID), body, webhookSigners["provider_a"]("x", body, h.clock.Now())); status != 401 {
			t.Errorf("site without a secret: %d", status)
		}
	})
}

// runningTotals is a site taking provider_a's (Stripe's) notifications, and
// a charge.refunded of it as a function of the charge's running total.
func runningTotals(t *testing.T, h *harness, domain string) (model.SiteID, func(total int) []byte) {
	t.Helper()
	site, err := h.app.Accounts.CreateSite(context.Background(), accounts.NewSite{OwnerEmail: h.email, Domain: domain})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.app.Accounts.SetProviderSecret(context.Background(), site.ID, "provider_a", webhookSecrets["provider_a"]); err != nil {
		t.Fatal(err)
	}
	h.clock.Set(time.Now().UTC().Truncate(time.Second))
	body := fixture(t, "provider_a", "charge.refunded.json")
	if !bytes.Contains(body, []byte(`"amount_refunded": 1000`)) {
		t.Fatal("the fixture holds no amount_refunded of 1000")
	}
	return site.ID, func(total int) []byte {
		return bytes.Replace(body, []byte(`"amount_refunded": 1000`), []byte(`"amount_refunded": `+strconv.Itoa(total)), 1)
	}
}

// refundedOf is the sum of the refunds a site's ledger holds.
func refundedOf(t *testing.T, h *harness, site model.SiteID) int64 {
	t.Helper()
	var refunded int64
	if err := h.app.PG.QueryRow(context.Background(), "SELECT coalesce(sum(amount), 0) FROM payments WHERE site_id = $1 AND kind = 'refund'",
		string(site)).Scan(&refunded); err != nil {
		t.Fatal(err)
	}
	return refunded
}

// A running total of refunds (a charge's amount_refunded, when the payload
// lists no refunds) is counted once even when tally never saw the payment:
// 3.00, then 8.00 in all, and 8.00 again, are refunds of 8.00.
func TestRunningRefundTotalOfAnUnseenPayment(t *testing.T) {
	h := newHarness(t)
	site, charge := runningTotals(t, h, "refunds.example.com")
	for _, total := range []int{300, 800, 800} {
		b := charge(total)
		status, res := postWebhook(t, h, "provider_a", string(site), b,
			webhookSigners["provider_a"](webhookSecrets["provider_a"], b, h.clock.Now()))
		if status != 200 || !res.Received {
			t.Fatalf("refunded %d in all: %d %+v", total, status, res)
		}
	}
	if refunded := refundedOf(t, h, site); refunded != 800 {
		t.Errorf("refunds recorded: %d, want 800", refunded)
	}
}

// Deliveries of one charge's running refund total may arrive at the same
// time: each records what its total adds to what the others recorded, so
// the refunds add up to the largest total, whatever the order.
func TestRunningRefundTotalsAtOnce(t *testing.T) {
	h := newHarness(t)
	site, charge := runningTotals(t, h, "refunds-at-once.example.com")
	var wg sync.WaitGroup
	for total := 100; total <= 1000; total += 100 {
		b := charge(total)
		header := webhookSigners["provider_a"](webhookSecrets["provider_a"], b, h.clock.Now())
		wg.Go(func() {
			if status, res := postWebhook(t, h, "provider_a", string(site), b, header); status != 200 || !res.Received {
				t.Errorf("refunded %d in all: %d %+v", total, status, res)
			}
		})
	}
	wg.Wait()
	if refunded := refundedOf(t, h, site); refunded != 1000 {
		t.Errorf("refunds recorded: %d, want 1000, the largest running total", refunded)
	}
}

// A secret pasted with the end of its line is the secret without it (the
// provider signs with that), wherever it is set; control characters are no
// secret.
func TestWebhookSecretAsPasted(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	const secret = "whsec_pasted_with_a_newline"
	if err := h.app.Accounts.SetProviderSecret(ctx, h.siteID, "provider_a", "  "+secret+"\n"); err != nil {
		t.Fatal(err)
	}
	h.clock.Set(time.Now().UTC().Truncate(time.Second))
	body := fixture(t, "provider_a", "charge.refunded.json")
	if status, res := postWebhook(t, h, "provider_a", string(h.siteID), body,
		webhookSigners["provider_a"](secret, body, h.clock.Now())); status != 200 || !res.Received {
		t.Errorf("a notification signed with the secret: %d %+v, want 200", status, res)
	}
	err := h.app.Accounts.SetProviderSecret(ctx, h.siteID, "provider_a", strings.Repeat("\x00", 9))
	if e := (*errs.Error)(nil); !errors.As(err, &e) || e.Field != "secret" {
		t.Errorf("a secret of NULs: %v, want invalid secret", err)
	}
}

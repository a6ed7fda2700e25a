package app_test

import (
	"bytes"
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/tally-analytics/tally/internal/accounts"
	"github.com/tally-analytics/tally/internal/model"
)

// stripeSite is a site of base currency base taking provider_a's (Stripe's)
// notifications, with the ECB rates given on the day of the checkout
// fixture (2025-11-21), and the checkout fixture with its amount and
// currency replaced.
func stripeSite(t *testing.T, h *harness, domain, base string, rates map[string]string) (model.SiteID, func(amount, currency string) []byte) {
	t.Helper()
	ctx := context.Background()
	site, err := h.app.Accounts.CreateSite(ctx, accounts.NewSite{OwnerEmail: h.email, Domain: domain, BaseCurrency: base})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.app.Accounts.SetProviderSecret(ctx, site.ID, "provider_a", webhookSecrets["provider_a"]); err != nil {
		t.Fatal(err)
	}
	day := time.Date(2025, 11, 21, 0, 0, 0, 0, time.UTC)
	var rs []model.Rate
	for cur, rate := range rates {
		rs = append(rs, model.Rate{Currency: cur, Day: day, Rate: rate})
	}
	if err := h.app.PG.UpsertRates(ctx, rs); err != nil {
		t.Fatal(err)
	}
	h.clock.Set(time.Now().UTC().Truncate(time.Second))
	body := fixture(t, "provider_a", "checkout.session.completed.json")
	if !bytes.Contains(body, []byte(`"amount_total": 2198,`)) || !bytes.Contains(body, []byte(`"currency": "usd",`)) {
		t.Fatal("the fixture holds no amount_total of 2198 in usd")
	}
	return site.ID, func(amount, currency string) []byte {
		b := bytes.Replace(body, []byte(`"amount_total": 2198,`), []byte(`"amount_total": `+amount+`,`), 1)
		return bytes.Replace(b, []byte(`"currency": "usd",`), []byte(`"currency": "`+currency+`",`), 1)
	}
}

// Stripe writes Icelandic krónur with two decimals of zeros (500 is 5 kr),
// though the króna has none: a checkout of 500 kr is 500 kr in the ledger,
// and 3.33 EUR at 150 kr per euro.
func TestStripeKronurAreWholeKronur(t *testing.T) {
	h := newHarness(t)
	site, checkout := stripeSite(t, h, "krona.example.com", "EUR", map[string]string{"ISK": "150"})
	body := checkout("50000", "isk")
	status, res := postWebhook(t, h, "provider_a", string(site), body,
		webhookSigners["provider_a"](webhookSecrets["provider_a"], body, h.clock.Now()))
	if status != 200 || res.PaymentID == "" {
		t.Fatalf("a checkout of 500 kr: %d %+v", status, res)
	}
	var amount int64
	var base *int64
	if err := h.app.PG.QueryRow(context.Background(), "SELECT amount, base_amount FROM payments WHERE id = $1",
		res.PaymentID).Scan(&amount, &base); err != nil {
		t.Fatal(err)
	}
	if amount != 500 || base == nil || *base != 333 {
		t.Errorf("a checkout of 500 kr recorded as %d ISK, %s euro cents; want 500 ISK, 333", amount, show(base))
	}
}

func show(v *int64) string {
	if v == nil {
		return "no"
	}
	return strconv.FormatInt(*v, 10)
}

// A notification of more money than a payment may be (the payments API's
// 10^12 minor units) is refused as a client's error, records nothing, and
// is no server error even where its conversion would overflow.
func TestWebhookAmountTooLarge(t *testing.T) {
	h := newHarness(t)
	site, checkout := stripeSite(t, h, "huge.example.com", "JPY", map[string]string{"USD": "1.10", "JPY": "160"})
	for _, amount := range []string{"9000000000000000000", "1000000000001"} {
		body := checkout(amount, "usd")
		status, res := postWebhook(t, h, "provider_a", string(site), body,
			webhookSigners["provider_a"](webhookSecrets["provider_a"], body, h.clock.Now()))
		if status != 400 {
			t.Errorf("a checkout of %s cents: %d %+v, want 400", amount, status, res)
		}
	}
	if n := ledgerCount(t, h, string(site), "true"); n != 0 {
		t.Errorf("the ledger holds %d rows, want none", n)
	}
}

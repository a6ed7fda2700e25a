package app_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/tally-analytics/tally/internal/model"
)

// A webhook's body names when its money moved. One that names no time it
// can read is recorded at the time it arrived, and exported to ClickHouse
// like any other; one that names a time before 2000 or ahead of the clock
// is refused, with nothing recorded.
func TestWebhookTimes(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	site := string(h.siteID)
	const provider = "provider_b"
	if err := h.app.Accounts.SetProviderSecret(ctx, h.siteID, model.Provider(provider), webhookSecrets[provider]); err != nil {
		t.Fatal(err)
	}
	arrived := time.Date(2026, 11, 21, 9, 30, 0, 0, time.UTC)
	h.clock.Set(arrived)
	post := func(created, updated string) int {
		t.Helper()
		body := fixture(t, provider, "order_created.json")
		body = bytes.ReplaceAll(body, []byte(`"created_at": "2026-11-20T14:03:27.000000Z"`), []byte(`"created_at": "`+created+`"`))
		body = bytes.ReplaceAll(body, []byte(`"updated_at": "2026-11-20T14:03:29.000000Z"`), []byte(`"updated_at": "`+updated+`"`))
		status, _ := postWebhook(t, h, provider, site, body, webhookSigners[provider](webhookSecrets[provider], body, h.clock.Now()))
		return status
	}
	for _, c := range []struct{ created, updated string }{
		{"1999-12-31T23:59:59Z", ""},
		{"2026-11-21T10:30:01Z", ""}, // more than an hour ahead
		{"", "1970-01-01T00:00:00Z"},
	} {
		if status := post(c.created, c.updated); status != 400 {
			t.Errorf("created_at %q, updated_at %q: %d, want 400", c.created, c.updated, status)
		}
	}
	if n := ledgerCount(t, h, site, "true"); n != 0 {
		t.Fatalf("refused deliveries recorded %d payments", n)
	}
	if status := post("", "not a time"); status != 200 {
		t.Fatalf("an order without a time: %d, want 200", status)
	}
	if n := ledgerCount(t, h, site, "occurred_at = $2", arrived); n != 1 {
		t.Errorf("%d payments recorded at the time the webhook arrived, want 1", n)
	}
	// exported by the exporter the payment woke, or by this call
	if _, err := h.app.Revenue.Export(ctx); err != nil {
		t.Fatalf("export: %v", err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for h.count("SELECT count() FROM payments WHERE site_id = ?", site) == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := h.count("SELECT count() FROM payments WHERE site_id = ? AND ts = ?", site, arrived); n != 1 {
		t.Errorf("%d payments in ClickHouse at the time the webhook arrived, want 1", n)
	}
}

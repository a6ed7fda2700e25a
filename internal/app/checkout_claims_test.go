package app_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/pkg/api"
	"github.com/tally-analytics/tally/pkg/client"
)

// trackerPageview posts a pageview to /e as the tracking script does, with
// a checkout session id when checkout is not empty, and returns the status.
func trackerPageview(t *testing.T, h *harness, visitor, url, checkout string) int {
	t.Helper()
	body := `{"site_id":"` + string(h.siteID) + `","event_name":"pageview","url":"` + url + `","visitor_id":"` + visitor + `"`
	if checkout != "" {
		body += `,"checkout_session_id":"` + checkout + `"`
	}
	req, _ := http.NewRequest(http.MethodPost, h.srv.URL+"/e", strings.NewReader(body+"}"))
	req.Header.Set("Content-Type", "text/plain;charset=UTF-8")
	req.Header.Set("User-Agent", chromeUA)
	req.Header.Set("Accept-Language", "en-GB,en;q=0.9")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// A subscription's renewals keep the visitor of the checkout that created
// it, a link kept under the key "subscription:<id>" beside the checkout
// sessions' claims. Before, anyone could claim that key through the
// tracking script (any printable checkout_session_id was taken): the first
// claim of a key wins, so a claim sent before the checkout took every
// renewal's revenue for the claimant's source (five claims filled the key,
// and the buyer's link was never kept), and claims of that form were never
// forgotten. Now no event claims a key of that form: the event counts, the
// claim is dropped.
func TestTrackerCannotClaimASubscription(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	site := string(h.siteID)
	const secret = "whsec_test_subscription_claims"
	if err := h.app.Accounts.SetProviderSecret(ctx, h.siteID, model.ProviderA, secret); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 7, 1, 9, 0, 0, 0, time.UTC)

	// the attacker views a page (from a source of their choosing), then
	// claims the subscription's key before its checkout, by the field and
	// by the page's URL
	h.clock.Set(t0)
	for i, claim := range []struct{ url, field string }{
		{"https://example.com/?utm_source=evil", ""},
		{"https://example.com/a", "subscription:sub_renew"},
		{"https://example.com/b?checkout_session_id=subscription:sub_renew", ""},
		{"https://example.com/c?session_id=subscription:sub_renew", ""},
	} {
		h.clock.Set(t0.Add(time.Duration(i) * time.Second))
		if status := trackerPageview(t, h, "attacker", claim.url, claim.field); status != http.StatusAccepted {
			t.Fatalf("%s: %d, want 202 (the pageview counts)", claim.url, status)
		}
	}
	var claims int64
	if err := h.app.PG.QueryRow(ctx, "SELECT count(*) FROM checkout_sessions WHERE site_id = $1 AND checkout_session_id LIKE 'subscription:%'",
		site).Scan(&claims); err != nil {
		t.Fatal(err)
	}
	if claims != 0 {
		t.Errorf("the tracking script claimed a subscription's key %d times, want 0", claims)
	}

	// the buyer comes from Google and reaches the success page of a
	// subscription checkout (the Events API, as a server-side sender)
	c := h.client(h.key)
	for i, pv := range []struct{ url, referrer string }{
		{"https://example.com/?utm_source=google", "https://www.google.com/"},
		{"https://example.com/thanks?session_id=cs_sub_buyer", "https://checkout.stripe.com/"},
	} {
		h.clock.Set(t0.Add(time.Duration(i+1) * time.Minute))
		if _, err := c.Pageview(ctx, api.PageviewRequest{SiteID: site, URL: pv.url, Referrer: pv.referrer,
			UserAgent: "Mozilla/5.0 (X11; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0", IPAddress: "81.2.69.142"}); err != nil {
			t.Fatalf("%s: %v", pv.url, err)
		}
	}
	h.waitCount(6, "SELECT count() FROM events WHERE site_id = ?", site) // 4 of the attacker's, 2 of the buyer's

	// the checkout links the subscription to the buyer; its first invoice
	// and a renewal are 15.00 USD each
	h.clock.Set(t0.Add(5 * time.Minute))
	status, res := stripeWebhook(t, h, site, secret, map[string]any{
		"id": "evt_sub_checkout", "object": "event", "type": "checkout.session.completed", "created": h.clock.Now().Unix(), "livemode": true,
		"data": map[string]any{"object": map[string]any{
			"id": "cs_sub_buyer", "object": "checkout.session", "mode": "subscription", "payment_status": "paid",
			"status": "complete", "amount_total": 1500, "currency": "usd", "subscription": "sub_renew", "metadata": map[string]any{},
		}},
	})
	if status != 200 || !res.Ignored {
		t.Fatalf("the subscription checkout: %d %+v, want 200 ignored (its money is the invoice's)", status, res)
	}
	for i, invoice := range []string{"in_first", "in_renewal"} {
		h.clock.Set(t0.Add(time.Duration(10+i) * time.Minute))
		status, res = stripeWebhook(t, h, site, secret, map[string]any{
			"id": "evt_" + invoice, "object": "event", "type": "invoice.paid", "created": h.clock.Now().Unix(), "livemode": true,
			"data": map[string]any{"object": map[string]any{
				"id": invoice, "object": "invoice", "status": "paid", "amount_paid": 1500, "currency": "usd",
				"subscription": "sub_renew", "payment_intent": "pi_" + invoice, "metadata": map[string]any{},
			}},
		})
		if status != 200 || res.PaymentID == "" {
			t.Fatalf("%s: %d %+v", invoice, status, res)
		}
	}

	// 2 invoices × 15.00 USD = 30.00, all of it the buyer's: Google's
	p := client.StatsParams{SiteID: site, DateFrom: "2026-07-01", DateTo: "2026-07-02", Timezone: "UTC"}
	waitRevenue(t, h, p, 3000)
	got, err := c.RevenueBy(ctx, p, "source", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Data.Breakdown) != 1 || got.Data.Breakdown[0].Value != "Google" || got.Data.Breakdown[0].Revenue != 3000 {
		t.Errorf("revenue by source: %+v, want the 30.00 USD under Google", got.Data.Breakdown)
	}
}

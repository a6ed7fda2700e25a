package app_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tally-analytics/tally/internal/accounts"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/pkg/api"
)

// freeKey makes a user on the free plan with a site and a fresh key.
func freeKey(t *testing.T, h *harness, email string) (site, key string) {
	t.Helper()
	ctx := context.Background()
	if _, err := h.app.Accounts.CreateUser(ctx, accounts.NewUser{Email: email, Password: password, Name: "Free", Plan: model.PlanFree}); err != nil {
		t.Fatal(err)
	}
	s, err := h.app.Accounts.CreateSite(ctx, accounts.NewSite{OwnerEmail: email, Domain: "free.example.com"})
	if err != nil {
		t.Fatal(err)
	}
	k, err := h.app.Accounts.CreateKey(ctx, accounts.NewKey{OwnerEmail: email, Name: "free"})
	if err != nil {
		t.Fatal(err)
	}
	return string(s.ID), k.Secret
}

// sendPageview posts one pageview and returns the response.
func sendPageview(t *testing.T, base, key, site string, i int) *http.Response {
	body := fmt.Sprintf(`{"site_id":%q,"url":"https://free.example.com/p/%d","visitor_id":"v%d"}`, site, i, i%50)
	req, _ := http.NewRequest(http.MethodPost, base+"/api/v1/events/pageview", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Error(err)
		return nil
	}
	resp.Body.Close()
	return resp
}

// limitRun sends 1,000 pageviews from 16 concurrent clients spread over the
// given servers, then one more; all 1,000 must pass and the 1,001st must be 429.
func limitRun(t *testing.T, servers []string, site, key string) {
	const limit = 1000
	var sent, created atomic.Int64
	start := time.Now()
	var wg sync.WaitGroup
	for w := range 16 {
		wg.Go(func() {
			for {
				i := sent.Add(1)
				if i > limit {
					return
				}
				resp := sendPageview(t, servers[w%len(servers)], key, site, int(i))
				if resp == nil {
					return
				}
				if resp.StatusCode != http.StatusCreated {
					t.Errorf("request %d: %d", i, resp.StatusCode)
					continue
				}
				created.Add(1)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	if created.Load() != limit {
		t.Fatalf("%d of %d requests passed", created.Load(), limit)
	}
	resp := sendPageview(t, servers[0], key, site, limit+1)
	t.Logf("1,000 events in %v; the 1,001st: %d, Retry-After %s, limit %s, remaining %s, reset %s", elapsed.Round(time.Millisecond),
		resp.StatusCode, resp.Header.Get("Retry-After"), resp.Header.Get("X-RateLimit-Limit"),
		resp.Header.Get("X-RateLimit-Remaining"), resp.Header.Get("X-RateLimit-Reset"))
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("the 1,001st event: %d, want 429 (the run took %v; GCRA frees one request every 3.6 s)", resp.StatusCode, elapsed)
	}
	// GCRA at 1,000/hour frees one request every 3.6 s after the burst: the
	// true wait is what is left of those 3.6 s, in whole seconds rounded up.
	// The limiter's clock starts at the first request's arrival, a moment
	// after start: 200 ms of slack keep the bound from flaking on a rounding edge.
	retry, err := strconv.Atoi(resp.Header.Get("Retry-After"))
	wantMax := int((3600*time.Millisecond - elapsed + 200*time.Millisecond + time.Second - 1) / time.Second)
	if err != nil || retry < 1 || retry > max(wantMax, 1) {
		t.Errorf("Retry-After %q, want 1..%d whole seconds", resp.Header.Get("Retry-After"), max(wantMax, 1))
	}
	if resp.Header.Get("X-RateLimit-Limit") != "1000" || resp.Header.Get("X-RateLimit-Remaining") != "0" {
		t.Errorf("headers: limit %q remaining %q", resp.Header.Get("X-RateLimit-Limit"), resp.Header.Get("X-RateLimit-Remaining"))
	}
	if reset, err := strconv.Atoi(resp.Header.Get("X-RateLimit-Reset")); err != nil || reset < 3590 || reset > 3600 {
		t.Errorf("X-RateLimit-Reset %q, want about 3600 s (the full hour back)", resp.Header.Get("X-RateLimit-Reset"))
	}
	// once the wait is over, one request passes again
	time.Sleep(time.Duration(retry) * time.Second)
	if resp := sendPageview(t, servers[0], key, site, limit+2); resp.StatusCode != http.StatusCreated {
		t.Errorf("after Retry-After: %d, want 201", resp.StatusCode)
	}
}

func TestEventsRateLimitFreePlan(t *testing.T) {
	h := newHarness(t)
	site, key := freeKey(t, h, "free@example.com")
	limitRun(t, []string{h.srv.URL}, site, key)
}

func TestEventsRateLimitAcrossInstances(t *testing.T) {
	h := newHarness(t)
	other := h.secondInstance()
	site, key := freeKey(t, h, "free2@example.com")
	limitRun(t, []string{h.srv.URL, other.srv.URL}, site, key)
}

func TestLoginAndStatsLimits(t *testing.T) {
	cfg := testenvConfigWith(t, func(c *configT) { c.LoginAttempts = 3; c.StatsPerHour = 5 })
	h := newHarnessWith(t, cfg)
	ctx := context.Background()
	for i := range 3 {
		if _, err := h.client("").Login(ctx, h.email, "wrong password"); err == nil {
			t.Fatal("a wrong password logged in")
		} else if e := apiError(t, err); e.Status != 401 {
			t.Fatalf("attempt %d: %d", i+1, e.Status)
		}
	}
	_, err := h.client("").Login(ctx, h.email, password) // even the right password waits now
	if e := apiError(t, err); e.Status != 429 || e.Code != "rate_limit_exceeded" || e.RetryAfter <= 0 {
		t.Errorf("4th attempt: %d %s retry %v, want 429 with Retry-After", e.Status, e.Code, e.RetryAfter)
	}
	if _, err := h.client("").Login(ctx, "someone-else@example.com", "x"); apiError(t, err).Status != 401 {
		t.Error("another email from the same address is limited too")
	}
	p := statsParams(h)
	for i := range 5 {
		if _, err := h.client(h.key).Devices(ctx, p); err != nil {
			t.Fatalf("stats request %d: %v", i+1, err)
		}
	}
	_, err = h.client(h.key).Countries(ctx, p)
	if e := apiError(t, err); e.Status != 429 {
		t.Errorf("6th stats request: %d, want 429", e.Status)
	}
}

// An account's keys and login tokens share one Events API allowance, and
// payments count against it.
func TestEventsAllowanceIsTheAccounts(t *testing.T) {
	h := newHarnessWith(t, testenvConfigWith(t, func(c *configT) { c.FreeEventsPerHour = 20 }))
	ctx := context.Background()
	site, key1 := freeKey(t, h, "shared@example.com")
	k2, err := h.app.Accounts.CreateKey(ctx, accounts.NewKey{OwnerEmail: "shared@example.com", Name: "second"})
	if err != nil {
		t.Fatal(err)
	}
	login, err := h.client("").Login(ctx, "shared@example.com", password)
	if err != nil {
		t.Fatal(err)
	}
	// 10 events with the first key, 8 with the second, 1 with the token and
	// 1 payment: 20, the whole allowance
	for i := range 10 {
		if resp := sendPageview(t, h.srv.URL, key1, site, i); resp == nil || resp.StatusCode != http.StatusCreated {
			t.Fatalf("first key, event %d: %v", i+1, resp)
		}
	}
	for i := range 8 {
		resp := sendPageview(t, h.srv.URL, k2.Secret, site, i)
		if resp == nil || resp.StatusCode != http.StatusCreated {
			t.Fatalf("second key, event %d: %v", i+1, resp)
		}
		if got, want := resp.Header.Get("X-RateLimit-Remaining"), strconv.Itoa(20-10-i-1); got != want {
			t.Errorf("second key, event %d: X-RateLimit-Remaining %s, want %s", i+1, got, want)
		}
	}
	if resp := sendPageview(t, h.srv.URL, login.Token, site, 0); resp == nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("login token: %v", resp)
	}
	pay := api.PaymentRequest{SiteID: site, Amount: "500", Currency: "EUR"}
	if _, err := h.client(key1).Payment(ctx, pay); err != nil {
		t.Fatalf("the 20th, a payment: %v", err)
	}
	for name, cred := range map[string]string{"first key": key1, "second key": k2.Secret, "login token": login.Token} {
		resp := sendPageview(t, h.srv.URL, cred, site, 0)
		if resp == nil || resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("X-RateLimit-Limit") != "20" ||
			resp.Header.Get("X-RateLimit-Remaining") != "0" {
			t.Errorf("%s, the 21st event: %v, want 429 with limit 20, remaining 0", name, resp)
		}
	}
	if _, err := h.client(k2.Secret).Payment(ctx, pay); err == nil || apiError(t, err).Status != http.StatusTooManyRequests {
		t.Errorf("a payment past the allowance: %v, want 429", err)
	}
}

// A key that may not send events is refused (403) without spending the
// account's Events allowance: a leaked read-only key cannot use it up.
func TestReadOnlyKeySpendsNoEventsAllowance(t *testing.T) {
	h := newHarnessWith(t, testenvConfigWith(t, func(c *configT) { c.FreeEventsPerHour = 5 }))
	ctx := context.Background()
	site, key := freeKey(t, h, "ro@example.com")
	ro, err := h.app.Accounts.CreateKey(ctx, accounts.NewKey{OwnerEmail: "ro@example.com", Name: "read only",
		Scopes: []model.Scope{model.ScopeStatsRead}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if resp := sendPageview(t, h.srv.URL, ro.Secret, site, i); resp == nil || resp.StatusCode != http.StatusForbidden {
			t.Fatalf("read-only key, event %d: %v, want 403", i+1, resp)
		}
	}
	_, err = h.client(ro.Secret).Payment(ctx, api.PaymentRequest{SiteID: site, Amount: "500", Currency: "EUR"})
	wantError(t, err, http.StatusForbidden, "forbidden", "")
	_, err = h.client(ro.Secret).Batch(ctx, []api.CustomEventRequest{{PageviewRequest: api.PageviewRequest{SiteID: site,
		URL: "https://example.com/"}}})
	wantError(t, err, http.StatusForbidden, "forbidden", "")
	for i := range 5 {
		if resp := sendPageview(t, h.srv.URL, key, site, i); resp == nil || resp.StatusCode != http.StatusCreated {
			t.Fatalf("the account's event %d of 5 after the read-only key's refusals: %v, want 201", i+1, resp)
		}
	}
}

// Spraying one password over many emails from one address is slowed too:
// ten times the per-email attempts per address, whatever the emails.
func TestLoginSprayLimited(t *testing.T) {
	h := newHarnessWith(t, testenvConfigWith(t, func(c *configT) { c.LoginAttempts = 2 }))
	ctx := context.Background()
	for i := range 20 {
		if _, err := h.client("").Login(ctx, fmt.Sprintf("user%d@example.com", i), "Winter2026!"); apiError(t, err).Status != 401 {
			t.Fatalf("attempt %d: %v, want 401", i+1, err)
		}
	}
	_, err := h.client("").Login(ctx, "user-new@example.com", "Winter2026!")
	if e := apiError(t, err); e.Status != 429 || e.Code != "rate_limit_exceeded" {
		t.Errorf("21st email from the address: %d %s, want 429", e.Status, e.Code)
	}
}

// Management calls (sites, goals, credential checks) have an allowance per
// credential; the conversions report counts against stats, not it.
func TestManageLimit(t *testing.T) {
	h := newHarnessWith(t, testenvConfigWith(t, func(c *configT) { c.ManagePerHour = 4; c.StatsPerHour = 100 }))
	ctx := context.Background()
	c := h.client(h.key)
	for i := range 4 {
		if _, err := c.Goals(ctx, string(h.siteID)); err != nil {
			t.Fatalf("call %d: %v", i+1, err)
		}
		if _, err := c.Conversions(ctx, statsParams(h)); err != nil {
			t.Fatalf("conversions %d: %v", i+1, err)
		}
	}
	for _, call := range []func() error{
		func() error { _, err := c.Goals(ctx, string(h.siteID)); return err },
		func() error { _, err := c.Sites(ctx); return err },
		func() error { _, err := c.Verify(ctx); return err },
	} {
		if e := apiError(t, call()); e.Status != 429 || e.Code != "rate_limit_exceeded" || e.RetryAfter <= 0 {
			t.Errorf("past the allowance: %d %s retry %v, want 429 with Retry-After", e.Status, e.Code, e.RetryAfter)
		}
	}
	if _, err := c.Conversions(ctx, statsParams(h)); err != nil {
		t.Errorf("the conversions report after the management allowance: %v", err)
	}
}

// The dashboard's forms count against their user's management allowance,
// shared with the user's login-token calls.
func TestDashboardFormsLimited(t *testing.T) {
	h := newHarnessWith(t, testenvConfigWith(t, func(c *configT) { c.ManagePerHour = 3 }))
	w := newWebUser(t, h)
	w.login(h.email)
	for i := range 3 {
		w.do(http.MethodGet, "/sites/new", nil)
		form := url.Values{"domain": {fmt.Sprintf("form%d.example.org", i)}, "timezone": {"UTC"}, "currency": {"USD"}, "csrf": {w.csrf}}
		if status, _, body := w.do(http.MethodPost, "/sites", form); status != http.StatusSeeOther {
			t.Fatalf("form %d: %d %.200s", i+1, status, body)
		}
	}
	w.do(http.MethodGet, "/sites/new", nil)
	form := url.Values{"domain": {"form3.example.org"}, "timezone": {"UTC"}, "currency": {"USD"}, "csrf": {w.csrf}}
	if status, _, _ := w.do(http.MethodPost, "/sites", form); status != http.StatusTooManyRequests {
		t.Errorf("4th form: %d, want 429", status)
	}
	// the user's login token shares the allowance
	res, err := h.client("").Login(context.Background(), h.email, password)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.client(res.Token).Sites(context.Background()); apiError(t, err).Status != 429 {
		t.Errorf("the user's token after the forms: %v, want 429", err)
	}
}

// Every limited answer carries X-RateLimit-Limit, -Remaining and -Reset,
// and a 429 Retry-After: the failed-authentication limit's (as it refuses,
// and while it keeps refusing), the dashboard's forms, cards and login.
func TestLimitedAnswersCarryTheirHeaders(t *testing.T) {
	h := newHarnessWith(t, testenvConfigWith(t, func(c *configT) {
		c.AuthFailuresPerMinute, c.ManagePerHour, c.StatsPerHour, c.LoginAttempts = 2, 1, 1, 1
	}))
	want := func(what string, status int, header http.Header, limit string) {
		t.Helper()
		if status != http.StatusTooManyRequests {
			t.Errorf("%s: %d, want 429", what, status)
			return
		}
		for _, name := range []string{"Retry-After", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"} {
			if header.Get(name) == "" {
				t.Errorf("%s: 429 without %s", what, name)
			}
		}
		if header.Get("X-RateLimit-Limit") != limit || header.Get("X-RateLimit-Remaining") != "0" {
			t.Errorf("%s: limit %q, remaining %q; want %s and 0", what, header.Get("X-RateLimit-Limit"),
				header.Get("X-RateLimit-Remaining"), limit)
		}
	}
	verify := func(key string) (int, http.Header) {
		req, _ := http.NewRequest(http.MethodGet, h.srv.URL+"/api/v1/auth/verify", nil)
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode, resp.Header
	}
	for i := range 2 {
		verify(fmt.Sprintf("sk_test_%048d", i))
	}
	status, header := verify("sk_test_" + strings.Repeat("7", 48))
	want("the wrong key that passes the failures' limit", status, header, "2")
	status, header = verify("sk_test_" + strings.Repeat("8", 48))
	want("a wrong key while the address is refused", status, header, "2")

	w := newWebUser(t, h)
	w.login(h.email)
	site := "/sites/" + string(h.siteID)
	for i := range 2 {
		w.do(http.MethodGet, "/sites/new", nil)
		status, _, _ := w.do(http.MethodPost, "/sites", url.Values{"domain": {fmt.Sprintf("h%d.example.org", i)},
			"timezone": {"UTC"}, "currency": {"USD"}, "csrf": {w.csrf}})
		if i == 1 {
			want("the form past the management allowance", status, w.header, "1")
		}
	}
	for i := range 2 {
		status, _, _ := w.do(http.MethodGet, site+"/cards/devices", nil)
		if i == 1 {
			want("the card past the stats allowance", status, w.header, "1")
		}
	}
	other := newWebUser(t, h)
	for i := range 2 {
		other.do(http.MethodGet, "/login", nil)
		status, _, _ := other.do(http.MethodPost, "/login", url.Values{"email": {h.email}, "password": {"wrong"}, "csrf": {other.csrf}})
		if i == 1 {
			want("the login form past its attempts", status, other.header, "1")
		}
	}
}

// An address that keeps failing to authenticate — wrong keys, bad webhook
// signatures — is answered 429 once past its failures per minute, before
// any store is asked; each kind of failure has its own count.
func TestAuthFailuresSlowed(t *testing.T) {
	h := newHarnessWith(t, testenvConfigWith(t, func(c *configT) { c.AuthFailuresPerMinute = 3 }))
	ctx := context.Background()
	for i := range 3 {
		bad := fmt.Sprintf("sk_test_%048d", i)
		if _, err := h.client(bad).Verify(ctx); apiError(t, err).Status != 401 {
			t.Fatalf("wrong key %d: %v, want 401", i+1, err)
		}
	}
	_, err := h.client("sk_test_" + strings.Repeat("9", 48)).Verify(ctx)
	if e := apiError(t, err); e.Status != 429 || e.Code != "rate_limit_exceeded" || e.RetryAfter <= 0 {
		t.Errorf("4th wrong key: %d %s retry %v, want 429 with Retry-After", e.Status, e.Code, e.RetryAfter)
	}
	// refused before it is checked: a right key from the address waits too
	if _, err := h.client(h.key).Verify(ctx); apiError(t, err).Status != 429 {
		t.Errorf("a right key from the refused address: %v, want 429 until the refusal ends", err)
	}

	const secret = "whsec_test_failures_secret"
	if err := h.app.Accounts.SetProviderSecret(ctx, h.siteID, model.ProviderA, secret); err != nil {
		t.Fatal(err)
	}
	body := []byte(`{"id":"evt_x","object":"event","type":"checkout.session.completed"}`)
	forged := webhookSigners["provider_a"]("whsec_not_the_secret", body, h.clock.Now())
	for i := range 3 {
		if status, _ := postWebhook(t, h, "provider_a", string(h.siteID), body, forged); status != 401 {
			t.Fatalf("forged webhook %d: %d, want 401 (signatures count apart from credentials)", i+1, status)
		}
	}
	if status, _ := postWebhook(t, h, "provider_a", string(h.siteID), body, forged); status != 429 {
		t.Errorf("4th forged webhook: %d, want 429", status)
	}
}

// A payment provider delivers every site's webhooks from the same few
// addresses, so bad signatures count per address and site: deliveries to
// one site that keep failing (its secret is stale, or its owner points a
// provider account of their own at it, or at a site id that does not
// exist, to fail on purpose) are answered 429, and the provider's
// deliveries to every other site still pass. Before, the failures counted
// per address alone, and one site's held back every site's revenue.
func TestWebhookFailuresOfOneSiteSpareTheOthers(t *testing.T) {
	h := newHarnessWith(t, testenvConfigWith(t, func(c *configT) { c.AuthFailuresPerMinute = 3 }))
	ctx := context.Background()
	other, err := h.app.Accounts.CreateSite(ctx, accounts.NewSite{OwnerEmail: h.email, Domain: "other.example"})
	if err != nil {
		t.Fatal(err)
	}
	const secret = "whsec_test_failures_secret"
	for _, site := range []model.SiteID{h.siteID, other.ID} {
		if err := h.app.Accounts.SetProviderSecret(ctx, site, model.ProviderA, secret); err != nil {
			t.Fatal(err)
		}
	}
	body := []byte(`{"id":"evt_x","object":"event","type":"customer.created","livemode":true,"data":{"object":{}}}`)
	stale := webhookSigners["provider_a"]("whsec_a_stale_secret", body, h.clock.Now())
	for _, site := range []string{string(h.siteID), "no-such-site"} {
		for i := range 3 {
			if status, _ := postWebhook(t, h, "provider_a", site, body, stale); status != 401 {
				t.Fatalf("%s: bad signature %d: %d, want 401", site, i+1, status)
			}
		}
		if status, _ := postWebhook(t, h, "provider_a", site, body, stale); status != 429 {
			t.Errorf("%s: 4th bad signature: %d, want 429", site, status)
		}
	}
	// 3 failures each on two other site ids: none of them is this site's
	status, res := postWebhook(t, h, "provider_a", string(other.ID), body, webhookSigners["provider_a"](secret, body, h.clock.Now()))
	if status != 200 || !res.Received {
		t.Errorf("another site's delivery from the same address: %d %+v, want 200", status, res)
	}
}

// A site takes a bounded number of signed webhook deliveries an hour. Its
// signing secret is its owner's to set, so before, a site's owner could
// sign deliveries of their own and record payments (each a payment and an
// event) without end, past any allowance of their plan. Deliveries past
// the bound are answered 429 with Retry-After, which providers retry, and
// record nothing; deliveries that fail their signature spend nothing, so
// no one without the secret can use a site's allowance up.
func TestWebhookAllowancePerSite(t *testing.T) {
	h := newHarnessWith(t, testenvConfigWith(t, func(c *configT) { c.WebhooksPerHour = 2 }))
	ctx := context.Background()
	const secret = "whsec_test_allowance_secret"
	if err := h.app.Accounts.SetProviderSecret(ctx, h.siteID, model.ProviderA, secret); err != nil {
		t.Fatal(err)
	}
	site := string(h.siteID)
	// 3 forged deliveries: 401, and the allowance is whole
	forgedBody := []byte(`{"id":"evt_forged","object":"event","type":"customer.created","livemode":true,"data":{"object":{}}}`)
	for i := range 3 {
		if status, _ := postWebhook(t, h, "provider_a", site, forgedBody, webhookSigners["provider_a"]("whsec_not_the_secret", forgedBody, h.clock.Now())); status != 401 {
			t.Fatalf("forged delivery %d: %d, want 401", i+1, status)
		}
	}
	// 2 signed payments of 10.00 USD pass; the third waits
	for i, want := range []int{200, 200, 429} {
		id := fmt.Sprintf("%d", i+1)
		status, res := stripeWebhook(t, h, site, secret, checkoutCompleted(h, "evt_allow_"+id, "cs_allow_"+id, "pi_allow_"+id, 1000))
		if status != want {
			t.Errorf("signed delivery %d: %d %+v, want %d", i+1, status, res, want)
		}
	}
	// 2 recorded, the third not: the ledger holds 2 × 10.00 USD
	if n := ledgerCount(t, h, site, "true"); n != 2 {
		t.Errorf("the ledger holds %d payments, want 2", n)
	}
}

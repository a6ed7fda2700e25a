package app_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/tally-analytics/tally/internal/accounts"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/pkg/api"
)

func pageview(h *harness, url string) api.PageviewRequest {
	return api.PageviewRequest{SiteID: string(h.siteID), URL: url}
}

// post sends a raw body and returns the status and decoded error envelope.
func post(t *testing.T, h *harness, path, token, body string) (int, api.Error) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, h.srv.URL+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var e api.Error
	if resp.StatusCode >= 400 {
		if err := json.Unmarshal(data, &e); err != nil || e.Error.Code == "" || e.Error.Message == "" {
			t.Errorf("%s: status %d body %q is not the error envelope", path, resp.StatusCode, data)
		}
	}
	return resp.StatusCode, e
}

func TestEventValidation(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	site := string(h.siteID)

	// another account with a site of its own, and a viewer of ours
	_, err := h.app.Accounts.CreateUser(ctx, accounts.NewUser{Email: "other@example.com", Password: password, Name: "Other"})
	if err != nil {
		t.Fatal(err)
	}
	otherSite, err := h.app.Accounts.CreateSite(ctx, accounts.NewSite{OwnerEmail: "other@example.com", Domain: "other.com"})
	if err != nil {
		t.Fatal(err)
	}
	viewerKey, err := h.app.Accounts.CreateKey(ctx, accounts.NewKey{OwnerEmail: "other@example.com", Name: "v"})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.app.Accounts.AddMember(ctx, h.siteID, "other@example.com", model.RoleViewer); err != nil {
		t.Fatal(err)
	}

	big := `{"site_id":"` + site + `","url":"https://example.com/","user_agent":"` + strings.Repeat("a", 70_000) + `"}`
	tests := []struct {
		name, path, token, body string
		status                  int
		code, field             string
	}{
		{"no credential", "/api/v1/events/pageview", "", `{}`, 401, "unauthorized", ""},
		{"empty body", "/api/v1/events/pageview", h.key, ``, 400, "invalid_request", ""},
		{"malformed JSON", "/api/v1/events/pageview", h.key, `{"site_id":`, 400, "invalid_request", ""},
		{"not an object", "/api/v1/events/pageview", h.key, `[1,2]`, 400, "invalid_request", ""},
		{"two objects", "/api/v1/events/pageview", h.key, `{} {}`, 400, "invalid_request", ""},
		{"missing site_id", "/api/v1/events/pageview", h.key, `{"url":"https://example.com/"}`, 400, "invalid_request", "site_id"},
		{"site_id not a string", "/api/v1/events/pageview", h.key, `{"site_id":5,"url":"https://example.com/"}`, 400, "invalid_request", "site_id"},
		{"unknown site", "/api/v1/events/pageview", h.key, `{"site_id":"nope","url":"https://example.com/"}`, 400, "invalid_site_id", "site_id"},
		{"another account's site", "/api/v1/events/pageview", h.key, `{"site_id":"` + string(otherSite.ID) + `","url":"https://other.com/"}`, 400, "invalid_site_id", "site_id"},
		{"viewer may not send", "/api/v1/events/pageview", viewerKey.Secret, `{"site_id":"` + site + `","url":"https://example.com/"}`, 403, "forbidden", ""},
		{"missing url", "/api/v1/events/pageview", h.key, `{"site_id":"` + site + `"}`, 400, "invalid_request", "url"},
		{"relative url", "/api/v1/events/pageview", h.key, `{"site_id":"` + site + `","url":"/x"}`, 400, "invalid_request", "url"},
		{"bad referrer", "/api/v1/events/pageview", h.key, `{"site_id":"` + site + `","url":"https://example.com/","referrer":"nope"}`, 400, "invalid_request", "referrer"},
		{"bad ip", "/api/v1/events/pageview", h.key, `{"site_id":"` + site + `","url":"https://example.com/","ip_address":"1.2.3"}`, 400, "invalid_request", "ip_address"},
		{"user_agent not a string", "/api/v1/events/pageview", h.key, `{"site_id":"` + site + `","url":"https://example.com/","user_agent":{}}`, 400, "invalid_request", "user_agent"},
		{"body over 64 KiB", "/api/v1/events/pageview", h.key, big, 413, "payload_too_large", ""},
		{"custom: site_id not a string", "/api/v1/events/custom", h.key, `{"site_id":5,"url":"https://example.com/","event_name":"e"}`, 400, "invalid_request", "site_id"},
		{"missing event_name", "/api/v1/events/custom", h.key, `{"site_id":"` + site + `","url":"https://example.com/"}`, 400, "invalid_request", "event_name"},
		{"reserved event_name", "/api/v1/events/custom", h.key, `{"site_id":"` + site + `","url":"https://example.com/","event_name":"pageview"}`, 400, "invalid_request", "event_name"},
		{"props not an object", "/api/v1/events/custom", h.key, `{"site_id":"` + site + `","url":"https://example.com/","event_name":"e","props":[1]}`, 400, "invalid_props", "props"},
		{"11 props", "/api/v1/events/custom", h.key, `{"site_id":"` + site + `","url":"https://example.com/","event_name":"e","props":{"a":1,"b":1,"c":1,"d":1,"e":1,"f":1,"g":1,"h":1,"i":1,"j":1,"k":1}}`, 400, "invalid_props", "props"},
		{"prop key of 51", "/api/v1/events/custom", h.key, `{"site_id":"` + site + `","url":"https://example.com/","event_name":"e","props":{"` + strings.Repeat("k", 51) + `":1}}`, 400, "invalid_props", "props." + strings.Repeat("k", 51)},
		{"nested prop", "/api/v1/events/custom", h.key, `{"site_id":"` + site + `","url":"https://example.com/","event_name":"e","props":{"a":{"b":1}}}`, 400, "invalid_props", "props.a"},
		{"null prop", "/api/v1/events/custom", h.key, `{"site_id":"` + site + `","url":"https://example.com/","event_name":"e","props":{"a":null}}`, 400, "invalid_props", "props.a"},
		// an amount is a JSON number, not a string that holds one
		{"revenue amount a string", "/api/v1/events/custom", h.key, `{"site_id":"` + site + `","url":"https://example.com/","event_name":"e","revenue":{"amount":"49.99","currency":"USD"}}`, 400, "invalid_request", "revenue.amount"},
		{"revenue amount an object", "/api/v1/events/custom", h.key, `{"site_id":"` + site + `","url":"https://example.com/","event_name":"e","revenue":{"amount":{},"currency":"USD"}}`, 400, "invalid_request", "revenue.amount"},
		{"payment amount a string", "/api/v1/stats/payments", h.key, `{"site_id":"` + site + `","amount":"1000","currency":"USD"}`, 400, "invalid_request", "amount"},
		{"payment amount a bool", "/api/v1/stats/payments", h.key, `{"site_id":"` + site + `","amount":true,"currency":"USD"}`, 400, "invalid_request", "amount"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, e := post(t, h, tt.path, tt.token, tt.body)
			if status != tt.status || e.Error.Code != tt.code || e.Error.Field != tt.field {
				t.Errorf("got %d %q field %q (%s), want %d %q field %q", status, e.Error.Code, e.Error.Field,
					e.Error.Message, tt.status, tt.code, tt.field)
			}
		})
	}
	// Nothing of the above was stored; a valid custom event with the maximum
	// props is.
	res, err := h.client(h.key).CustomEvent(ctx, api.CustomEventRequest{PageviewRequest: pageview(h, "https://example.com/"),
		EventName: "signup", Props: map[string]any{"a": 1, "b": true, "c": "x", "d": 2.5, "e": "", "f": 1, "g": 1, "h": 1, "i": 1, strings.Repeat("k", 50): 1}})
	if err != nil || !res.Success || res.EventID == "" {
		t.Fatalf("valid custom event: %+v, %v", res, err)
	}
	h.waitCount(1, "SELECT count() FROM events")
	if n := h.count("SELECT count() FROM events WHERE event_id = ? AND name = 'signup' AND length(props_keys) = 10", res.EventID); n != 1 {
		t.Errorf("the custom event is not stored with its 10 props")
	}
}

func TestErrorEnvelopeForRoutingErrors(t *testing.T) {
	h := newHarness(t)
	for _, tc := range []struct {
		method, path string
		status       int
		code         string
	}{
		{http.MethodGet, "/api/nope", 404, "not_found"},
		{http.MethodGet, "/api/v1/nope", 404, "not_found"},
		{http.MethodGet, "/api/v1/events/pageview", 405, "method_not_allowed"},
		{http.MethodDelete, "/health", 405, "method_not_allowed"},
	} {
		req, _ := http.NewRequest(tc.method, h.srv.URL+tc.path, nil)
		req.Header.Set("Authorization", "Bearer "+h.key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var e api.Error
		json.NewDecoder(resp.Body).Decode(&e)
		resp.Body.Close()
		if resp.StatusCode != tc.status || e.Error.Code != tc.code || e.Error.Message == "" {
			t.Errorf("%s %s: %d %+v, want %d %s", tc.method, tc.path, resp.StatusCode, e, tc.status, tc.code)
		}
	}
	// outside /api a program that asks for JSON gets the envelope too; a
	// browser gets the dashboard's page
	for accept, want := range map[string]string{"application/json": "application/json",
		"application/problem+json, */*;q=0.1": "application/json", "text/html,application/xhtml+xml,*/*;q=0.8": "text/html"} {
		req, _ := http.NewRequest(http.MethodGet, h.srv.URL+"/no/such/page", nil)
		req.Header.Set("Accept", accept)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var e api.Error
		ct := resp.Header.Get("Content-Type")
		if strings.HasPrefix(ct, "application/json") {
			json.NewDecoder(resp.Body).Decode(&e)
		}
		resp.Body.Close()
		if resp.StatusCode != 404 || !strings.HasPrefix(ct, want) || (want == "application/json" && e.Error.Code != "not_found") {
			t.Errorf("GET /no/such/page, Accept %q: %d %s %+v, want 404 %s", accept, resp.StatusCode, ct, e, want)
		}
	}
	for _, path := range []string{"/health", "/api/health"} {
		if err := h.client("").Health(context.Background()); err != nil {
			t.Errorf("%s: %v", path, err)
		}
	}
}

func TestSecurityHeadersAndHTTPS(t *testing.T) {
	cfg := testenvConfigWith(t, func(c *configT) { c.RedirectHTTPS = "true"; c.TrustedProxies = []string{"127.0.0.1/32"} })
	h := newHarnessWith(t, cfg)
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, _ := http.NewRequest(http.MethodGet, h.srv.URL+"/api/v1/auth/verify?x=1", nil)
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusPermanentRedirect || resp.Header.Get("Location") != "https://"+req.URL.Host+"/api/v1/auth/verify?x=1" {
		t.Errorf("plain HTTP: %d to %q, want 308 to the HTTPS URL", resp.StatusCode, resp.Header.Get("Location"))
	}
	req.Header.Set("X-Forwarded-Proto", "https") // from a trusted proxy (the test client is on 127.0.0.1)
	req.Header.Set("Authorization", "Bearer "+h.key)
	resp, err = noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("HTTPS behind a trusted proxy: %d, want 200", resp.StatusCode)
	}
	for k, want := range map[string]string{"X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY",
		"Strict-Transport-Security": "max-age=31536000; includeSubDomains", "Referrer-Policy": "no-referrer"} {
		if got := resp.Header.Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if resp, err := noRedirect.Get(h.srv.URL + "/health"); err != nil || resp.StatusCode != 200 {
		t.Errorf("/health over plain HTTP must stay reachable: %v %v", resp.StatusCode, err)
	}

	// X-Forwarded-Proto from an untrusted peer does not count
	plain := testenvConfigWith(t, func(c *configT) { c.RedirectHTTPS = "true" })
	h2 := newHarnessWith(t, plain)
	req, _ = http.NewRequest(http.MethodGet, h2.srv.URL+"/api/v1/auth/verify", nil)
	req.Header.Set("X-Forwarded-Proto", "https")
	resp, err = noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusPermanentRedirect {
		t.Errorf("X-Forwarded-Proto from an untrusted peer: %d, want 308", resp.StatusCode)
	}
	// bodies have a size limit on every route, and answer 413 in the envelope
	h3 := newHarness(t)
	for _, path := range []string{"/api/v1/goals", "/api/v1/auth/login", "/e", "/api/v1/webhooks/provider_a?site_id=x"} {
		status, e := post(t, h3, path, h3.key, strings.Repeat("x", 2<<20))
		if status != 413 || e.Error.Code != "payload_too_large" {
			t.Errorf("%s with a 2 MiB body: %d %+v", path, status, e)
		}
	}
}

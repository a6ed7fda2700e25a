package app_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// Bytes that are not text — bad UTF-8, NUL characters — in paths, query
// strings and JSON bodies are the client's mistake: a 4xx in the error
// envelope (an id that is not text names nothing: 404), or, where ClickHouse
// stores any bytes, an accepted event; never a 500.
func TestBytesThatAreNotText(t *testing.T) {
	h := newHarness(t)
	site := string(h.siteID)
	for _, r := range []struct {
		method, path, body string
		want               int
	}{
		{"GET", "/api/v1/sites/%FF", "", 404},
		{"GET", "/api/v1/sites/a%00b", "", 404},
		{"PUT", "/api/v1/sites/" + site, `{"domain":"a\u0000b.com"}`, 400},
		{"POST", "/api/v1/sites", `{"domain":"\u0000.com"}`, 400},
		{"POST", "/api/v1/sites", "{\"domain\":\"\xff.com\"}", 400},
		{"GET", "/api/v1/goals/%FF", "", 404},
		{"GET", "/api/v1/goals?site_id=%FF", "", 404},
		{"POST", "/api/v1/goals", `{"site_id":"` + site + `","goal_name":"a\u0000","goal_type":"custom_event","event_name":"x"}`, 400},
		{"GET", "/api/v1/stats/overview?site_id=%FF&date_from=2026-01-01&date_to=2026-01-02", "", 404},
		{"GET", "/api/v1/stats/pages?site_id=" + site + "&date_from=2026-01-01&date_to=2026-01-02&source=%FF%00", "", 200},
		{"POST", "/api/v1/events/pageview", `{"site_id":"` + site + `","url":"https://example.com/a\u0000","user_agent":"x"}`, 400},
		{"POST", "/api/v1/events/custom", `{"site_id":"` + site + `","url":"https://example.com/a","event_name":"a\u0000","props":{"k":"v\u0000"}}`, 201},
		{"POST", "/api/v1/stats/payments", `{"site_id":"` + site + `","amount":100,"currency":"USD","transaction_id":"t\u0000"}`, 400},
		{"POST", "/api/v1/auth/login", `{"email":"a\u0000@x.com","password":"p"}`, 401},
		{"POST", "/e", `{"site_id":"` + site + `","event_name":"pageview","url":"https://example.com/\u0000"}`, 400},
		// as an unknown site: no secret to check the signature with
		{"POST", "/api/v1/webhooks/provider_a?site_id=%FF", `{}`, 401},
		{"POST", "/api/v1/webhooks/provider_a?site_id=no-such-site", `{}`, 401},
		// a site id that is not text names no site, wherever it comes in: the
		// ingest endpoints' answer for an unknown site (400 invalid_site_id;
		// the batch refuses that event)
		{"POST", "/e", `{"site_id":"a\u0000b","event_name":"pageview","url":"https://example.com/"}`, 400},
		{"POST", "/e", "{\"site_id\":\"\xff\",\"event_name\":\"pageview\",\"url\":\"https://example.com/\"}", 400},
		{"POST", "/api/v1/events/pageview", `{"site_id":"a\u0000b","url":"https://example.com/","user_agent":"x"}`, 400},
		{"POST", "/api/v1/events/custom", `{"site_id":"a\u0000b","url":"https://example.com/","event_name":"x"}`, 400},
		{"POST", "/api/v1/events/batch", `{"events":[{"type":"pageview","site_id":"a\u0000b","url":"https://example.com/"}]}`, 200},
		{"POST", "/api/v1/stats/payments", `{"site_id":"a\u0000b","amount":100,"currency":"USD","transaction_id":"t"}`, 400},
	} {
		req, err := http.NewRequest(r.method, h.srv.URL+r.path, strings.NewReader(r.body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+h.key)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != r.want {
			t.Errorf("%s %s: %d %s, want %d", r.method, r.path, res.StatusCode, body, r.want)
			continue
		}
		if r.want >= 400 && !strings.Contains(string(body), `"error"`) {
			t.Errorf("%s %s: %d without the error envelope: %s", r.method, r.path, res.StatusCode, body)
		}
	}
}

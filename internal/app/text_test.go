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
		status, body := sendRaw(t, h, r.method, r.path, "application/json", r.body)
		if status != r.want {
			t.Errorf("%s %s: %d %s, want %d", r.method, r.path, status, body, r.want)
			continue
		}
		if r.want >= 400 && !strings.Contains(body, `"error"`) {
			t.Errorf("%s %s: %d without the error envelope: %s", r.method, r.path, status, body)
		}
	}
}

// A JSON endpoint reads JSON: a body declared as CSV, XML or a form upload
// is refused with 415 in the error envelope, before anything is decoded;
// the tracker endpoint also reads text/plain (what the script sends);
// without a Content-Type, or with curl's default for -d, the body is read
// as JSON.
func TestBodyMediaTypes(t *testing.T) {
	h := newHarness(t)
	site := string(h.siteID)
	pageview := `{"site_id":"` + site + `","url":"https://example.com/m","user_agent":"Mozilla/5.0 (X11; Linux x86_64) Firefox/120.0"}`
	tracker := `{"site_id":"` + site + `","event_name":"pageview","url":"https://example.com/m"}`
	for _, r := range []struct {
		path, contentType, body string
		want                    int
	}{
		{"/api/v1/events/pageview", "text/csv", "site_id,url\n" + site + ",https://example.com/", 415},
		{"/api/v1/events/pageview", "application/xml", "<event/>", 415},
		{"/api/v1/events/pageview", "multipart/form-data; boundary=x", pageview, 415},
		{"/api/v1/events/pageview", "text/plain", pageview, 415},
		{"/api/v1/events/pageview", "no/such type", pageview, 415},
		{"/api/v1/events/batch", "text/csv", `{"events":[]}`, 415},
		{"/api/v1/stats/payments", "application/xml", `{"site_id":"` + site + `","amount":100,"currency":"USD"}`, 415},
		{"/api/v1/sites", "text/csv", `{"domain":"csv.example.com"}`, 415},
		{"/e", "text/csv", tracker, 415},
		{"/api/v1/events/pageview", "application/json; charset=utf-8", pageview, 201},
		{"/api/v1/events/pageview", "application/vnd.api+json", pageview, 201},
		{"/api/v1/events/pageview", "", pageview, 201},
		{"/api/v1/events/pageview", "application/x-www-form-urlencoded", pageview, 201},
		{"/e", "text/plain;charset=UTF-8", tracker, 202},
		{"/e", "application/json", tracker, 202},
	} {
		status, body := sendRaw(t, h, "POST", r.path, r.contentType, r.body)
		if status != r.want {
			t.Errorf("POST %s as %q: %d %s, want %d", r.path, r.contentType, status, body, r.want)
			continue
		}
		if r.want == 415 && !strings.Contains(body, `"code":"unsupported_media_type"`) {
			t.Errorf("POST %s as %q: 415 without the error envelope: %s", r.path, r.contentType, body)
		}
	}
	// the six accepted events (the tracker's two without a browser's user
	// agent are bot events), and none of the refused ones
	h.waitCount(6, "SELECT (SELECT count() FROM events WHERE site_id = ?) + (SELECT count() FROM bot_events WHERE site_id = ?)", site, site)
}

// sendRaw sends body as it is, with the harness's key and contentType (none
// when empty), and returns the status and the answer's body.
func sendRaw(t *testing.T, h *harness, method, path, contentType, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, h.srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+h.key)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	answer, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(answer)
}

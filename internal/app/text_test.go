package app_test

import (
	"context"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tally-analytics/tally/pkg/api"
	"github.com/tally-analytics/tally/pkg/client"
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

// A sender cannot put lines of their own, or text read backwards, into an
// analyst's reports: a path's %0A (and a raw newline's escape), a right-to-
// left override in the path, the UTM campaign, an event's name and its
// props are stored as ingest's rule has them (percent-encoded in the path;
// elsewhere a line break is a space, any other U+FFFD), which the realtime and pages reports, the "Right now"
// card and the events report show; /café stays as the browser sent it.
func TestControlCharactersNeverReachTheReports(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	c, site := h.client(h.key), string(h.siteID)
	at := time.Date(2026, 6, 1, 11, 59, 0, 0, time.UTC)
	h.clock.Set(at)
	for i, u := range []string{
		"https://example.com/pay%0A%0A%E2%80%AEFake%20line?utm_campaign=spring%0Asale",
		"https://example.com/admin\u202Etxt.exe",
		"https://example.com/caf%C3%A9",
	} {
		referrer := ""
		if i == 1 {
			referrer = "https://moc.\u202Eevil.example/"
		}
		if _, err := c.Pageview(ctx, api.PageviewRequest{SiteID: site, URL: u, UserAgent: chromeUA, Referrer: referrer,
			VisitorID: "v" + strconv.Itoa(i)}); err != nil {
			t.Fatalf("%s: %v", u, err)
		}
	}
	if _, err := c.CustomEvent(ctx, api.CustomEventRequest{PageviewRequest: api.PageviewRequest{SiteID: site,
		URL: "https://example.com/caf%C3%A9", UserAgent: chromeUA, VisitorID: "v2"}, EventName: "Sign\nup\u2067",
		Props: map[string]any{"plan\u202E": "pro\r\nmax"}}); err != nil {
		t.Fatal(err)
	}
	h.waitCount(4, "SELECT count() FROM events WHERE site_id = ?", site)
	h.clock.Set(at.Add(time.Minute))

	wantPages := []string{"/admin%E2%80%AEtxt.exe", "/café", "/pay%0A%0A%E2%80%AEFake line"}
	rt, err := c.Realtime(ctx, site)
	if err != nil {
		t.Fatal(err)
	}
	var shown []string
	for _, p := range rt.Data.CurrentPages {
		shown = append(shown, p.Pathname)
	}
	sort.Strings(shown)
	if diff := cmp.Diff(wantPages, shown); diff != "" {
		t.Errorf("realtime pages (-want +got):\n%s", diff)
	}
	shown = shown[:0]
	for _, s := range rt.Data.CurrentSources {
		shown = append(shown, s.Source)
	}
	sort.Strings(shown)
	if diff := cmp.Diff([]string{"Direct / None", "moc.%e2%80%aeevil.example"}, shown); diff != "" {
		t.Errorf("realtime sources (-want +got):\n%s", diff)
	}
	p := client.StatsParams{SiteID: site, DateFrom: "2026-05-31", DateTo: "2026-06-01"}
	pages, err := c.Pages(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	shown = shown[:0]
	for _, p := range pages.Data.Pages {
		shown = append(shown, p.Pathname)
	}
	sort.Strings(shown)
	if diff := cmp.Diff(wantPages, shown); diff != "" {
		t.Errorf("pages report (-want +got):\n%s", diff)
	}
	events, err := c.Events(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if len(events.Data.Events) != 1 || events.Data.Events[0].EventName != "Sign up\uFFFD" {
		t.Errorf("events report: %+v, want one \"Sign up\uFFFD\"", events.Data.Events)
	}
	var campaign, key, value string
	if err := h.ch.QueryRow(ctx, "SELECT utm_campaign FROM events WHERE site_id = ? AND utm_campaign != ''", site).Scan(&campaign); err != nil {
		t.Fatal(err)
	}
	if err := h.ch.QueryRow(ctx, "SELECT props_keys[1], props_values[1] FROM events WHERE site_id = ? AND name != 'pageview'",
		site).Scan(&key, &value); err != nil {
		t.Fatal(err)
	}
	if campaign != "spring sale" || key != "plan\uFFFD" || value != "pro  max" {
		t.Errorf("stored campaign %q, prop %q = %q", campaign, key, value)
	}

	w := newWebUser(t, h)
	w.login(h.email)
	card := w.expect(http.MethodGet, "/sites/"+site+"/cards/realtime", nil, http.StatusOK)
	for _, bad := range []string{"\n\n", "\u202E", "&#x202e;", "&#8238;"} {
		if strings.Contains(card, "pay"+bad) || strings.Contains(card, "admin"+bad) {
			t.Errorf("the Right now card shows %q:\n%s", bad, card)
		}
	}
	for _, want := range []string{`data-row="/pay%0A%0A%E2%80%AEFake line"`, `data-row="/admin%E2%80%AEtxt.exe"`, `data-row="/café"`} {
		if !strings.Contains(card, want) {
			t.Errorf("the Right now card has no %s:\n%s", want, card)
		}
	}
}

// A payment's event name follows the same rule as a tracked event's,
// whichever way it comes in: a payment sent to the payments API named
// "Pro\nplan" with a right-to-left override is stored, in the ledger, the
// payments table and the events table, and so shown in the events report,
// as "Pro plan" and U+FFFD.
func TestPaymentNamesFollowTheTextRule(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	c, site := h.client(h.key), string(h.siteID)
	h.clock.Set(time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC))
	pay := payment(site, "1000", "USD")
	pay.EventName, pay.TransactionID = "Pro\nplan\u202E", "text-1"
	if _, err := c.Payment(ctx, pay); err != nil {
		t.Fatal(err)
	}
	p := client.StatsParams{SiteID: site, DateFrom: "2026-05-31", DateTo: "2026-06-01", Timezone: "UTC"}
	waitRevenue(t, h, p, 1000)
	h.waitCount(1, "SELECT count() FROM events WHERE site_id = ?", site)

	const want = "Pro plan\uFFFD"
	var ledger, payments, event string
	if err := h.app.PG.QueryRow(ctx, "SELECT event_name FROM payments WHERE site_id = $1", site).Scan(&ledger); err != nil {
		t.Fatal(err)
	}
	if err := h.ch.QueryRow(ctx, "SELECT event_name FROM payments WHERE site_id = ?", site).Scan(&payments); err != nil {
		t.Fatal(err)
	}
	if err := h.ch.QueryRow(ctx, "SELECT name FROM events WHERE site_id = ?", site).Scan(&event); err != nil {
		t.Fatal(err)
	}
	if ledger != want || payments != want || event != want {
		t.Errorf("stored names: ledger %q, payments %q, events %q; want %q", ledger, payments, event, want)
	}
	events, err := c.Events(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if len(events.Data.Events) != 1 || events.Data.Events[0].EventName != want {
		t.Errorf("events report: %+v, want one %q", events.Data.Events, want)
	}
}

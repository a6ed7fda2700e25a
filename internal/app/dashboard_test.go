package app_test

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tally-analytics/tally/internal/accounts"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/pkg/api"
)

// webUser is a dashboard visitor without a browser: it keeps the cookies it
// is given (Secure ones too, which a cookie jar would not send over the test
// server's plain HTTP) and does not follow redirects.
type webUser struct {
	t       *testing.T
	base    string
	cookies map[string]*http.Cookie
	csrf    string      // the last form token seen
	header  http.Header // the last answer's headers
}

func newWebUser(t *testing.T, h *harness) *webUser {
	return &webUser{t: t, base: h.srv.URL, cookies: map[string]*http.Cookie{}}
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// do sends a request and returns the status, the Location and the body.
func (w *webUser) do(method, path string, form url.Values) (int, string, string) {
	w.t.Helper()
	return w.doWith(method, path, form, nil)
}

// doWith is do with extra request headers.
func (w *webUser) doWith(method, path string, form url.Values, header http.Header) (int, string, string) {
	w.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, w.base+path, body)
	if err != nil {
		w.t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for _, ck := range w.cookies {
		req.AddCookie(&http.Cookie{Name: ck.Name, Value: ck.Value})
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Do(req)
	if err != nil {
		w.t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		w.t.Fatal(err)
	}
	w.header = res.Header
	for _, ck := range res.Cookies() {
		if ck.MaxAge < 0 {
			delete(w.cookies, ck.Name)
		} else {
			w.cookies[ck.Name] = ck
		}
	}
	if m := csrfField.FindSubmatch(b); m != nil {
		w.csrf = string(m[1])
	}
	return res.StatusCode, res.Header.Get("Location"), string(b)
}

// login logs in through the form and checks that it worked.
func (w *webUser) login(email string) {
	w.t.Helper()
	w.do(http.MethodGet, "/login", nil)
	status, loc, _ := w.do(http.MethodPost, "/login", url.Values{"email": {email}, "password": {password}, "csrf": {w.csrf}})
	if status != http.StatusSeeOther || loc != "/sites" {
		w.t.Fatalf("logging in as %s: %d to %q, want 303 to /sites", email, status, loc)
	}
}

func (w *webUser) expect(method, path string, form url.Values, want int) string {
	w.t.Helper()
	status, loc, body := w.do(method, path, form)
	if status != want {
		w.t.Fatalf("%s %s: %d (to %q), want %d", method, path, status, loc, want)
	}
	return body
}

// Sessions, cookies and CSRF: every form without its token is refused and
// changes nothing; a logout ends the session on the server.
func TestDashboardSessionsAndCSRF(t *testing.T) {
	h := newHarness(t)
	w := newWebUser(t, h)
	ctx := context.Background()
	sites := func() int {
		t.Helper()
		list, err := h.client(h.key).Sites(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return len(list)
	}

	// the login form sets its double-submit cookie; without the token, no login
	status, _, _ := w.do(http.MethodGet, "/login", nil)
	loginCSRF := w.cookies["tally_login_csrf"]
	if status != http.StatusOK || loginCSRF == nil || !loginCSRF.HttpOnly || !loginCSRF.Secure || loginCSRF.SameSite != http.SameSiteLaxMode {
		t.Fatalf("GET /login: %d, login cookie %+v; want 200 and an HttpOnly, Secure, SameSite=Lax cookie", status, loginCSRF)
	}
	w.expect(http.MethodPost, "/login", url.Values{"email": {h.email}, "password": {password}}, http.StatusForbidden)
	w.expect(http.MethodPost, "/login", url.Values{"email": {h.email}, "password": {password}, "csrf": {"forged"}}, http.StatusForbidden)
	if w.cookies["tally_session"] != nil {
		t.Fatal("a login without its CSRF token started a session")
	}
	w.expect(http.MethodPost, "/login", url.Values{"email": {h.email}, "password": {"wrong"}, "csrf": {w.csrf}}, http.StatusUnauthorized)

	// a next that leaves the site is ignored (a browser drops the tab of
	// "/\t/evil.example", which would make it "//evil.example")
	for _, next := range []string{"//evil.example/steal", "/\t/evil.example", "/\\evil.example", "https://evil.example/"} {
		other := newWebUser(t, h)
		other.do(http.MethodGet, "/login", nil)
		status, loc, _ := other.do(http.MethodPost, "/login", url.Values{"email": {h.email}, "password": {password}, "csrf": {other.csrf},
			"next": {next}})
		if loc != "/sites" {
			t.Fatalf("login with next=%q: %d to %q, want 303 to /sites", next, status, loc)
		}
	}
	_, loc, _ := w.do(http.MethodPost, "/login", url.Values{"email": {h.email}, "password": {password}, "csrf": {w.csrf},
		"next": {"/sites/new"}})
	if loc != "/sites/new" {
		t.Fatalf("login with next=/sites/new went to %q", loc)
	}
	sess := w.cookies["tally_session"]
	if sess == nil || !sess.HttpOnly || !sess.Secure || sess.SameSite != http.SameSiteLaxMode {
		t.Fatalf("session cookie %+v: want HttpOnly, Secure (outside development), SameSite=Lax", sess)
	}
	if body := w.expect(http.MethodGet, "/sites", nil, http.StatusOK); !strings.Contains(body, "example.com") {
		t.Fatal("the site list does not show the account's site")
	}

	// every form needs the session's token
	before := sites()
	site := url.Values{"domain": {"csrf.example.org"}, "timezone": {"UTC"}, "currency": {"USD"}}
	w.expect(http.MethodPost, "/sites", site, http.StatusForbidden)
	site.Set("csrf", "forged")
	w.expect(http.MethodPost, "/sites", site, http.StatusForbidden)
	w.expect(http.MethodPost, "/account/keys", url.Values{"name": {"x"}, "scopes": {"admin:full"}}, http.StatusForbidden)
	w.expect(http.MethodPost, "/sites/"+string(h.siteID)+"/delete", url.Values{"confirm": {"example.com"}}, http.StatusForbidden)
	if got := sites(); got != before {
		t.Fatalf("forms without their CSRF token changed the sites: %d, want %d", got, before)
	}
	w.expect(http.MethodGet, "/sites/new", nil, http.StatusOK)
	site.Set("csrf", w.csrf)
	w.expect(http.MethodPost, "/sites", site, http.StatusSeeOther)
	if got := sites(); got != before+1 {
		t.Fatalf("after creating a site: %d sites, want %d", got, before+1)
	}

	// dashboard pages carry the security headers
	req, _ := http.NewRequest(http.MethodGet, h.srv.URL+"/login", nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") || res.Header.Get("X-Frame-Options") == "" {
		t.Fatalf("dashboard headers: CSP %q, X-Frame-Options %q", csp, res.Header.Get("X-Frame-Options"))
	}

	// logging out ends the session on the server: the old cookie is dead
	old := *w.cookies["tally_session"]
	w.expect(http.MethodPost, "/logout", url.Values{"csrf": {w.csrf}}, http.StatusSeeOther)
	w.cookies["tally_session"] = &old
	if _, loc, _ := w.do(http.MethodGet, "/sites", nil); !strings.HasPrefix(loc, "/login") {
		t.Fatalf("the logged-out session still opens /sites (to %q)", loc)
	}
	w.expect(http.MethodPost, "/sites", site, http.StatusUnauthorized)
}

// Roles on the dashboard: a viewer reads the statistics but manages
// nothing; someone who is not a member does not learn the site exists.
func TestDashboardRoles(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	for _, email := range []string{"viewer@example.com", "stranger@example.com"} {
		if _, err := h.app.Accounts.CreateUser(ctx, accounts.NewUser{Email: email, Password: password, Name: "X", Plan: model.PlanFree}); err != nil {
			t.Fatal(err)
		}
	}
	site := "/sites/" + string(h.siteID)

	owner := newWebUser(t, h)
	owner.login(h.email)
	owner.expect(http.MethodGet, site+"/settings", nil, http.StatusOK)
	owner.expect(http.MethodPost, site+"/members", url.Values{"email": {"viewer@example.com"}, "role": {"viewer"}, "csrf": {owner.csrf}},
		http.StatusSeeOther)
	// the owner's own role is not for changing
	owner.expect(http.MethodGet, site+"/settings", nil, http.StatusOK)
	owner.expect(http.MethodPost, site+"/members", url.Values{"email": {h.email}, "role": {"viewer"}, "csrf": {owner.csrf}},
		http.StatusForbidden)

	viewer := newWebUser(t, h)
	viewer.login("viewer@example.com")
	if body := viewer.expect(http.MethodGet, "/sites", nil, http.StatusOK); !strings.Contains(body, "example.com") {
		t.Fatal("the viewer's site list does not show the shared site")
	}
	viewer.expect(http.MethodGet, site, nil, http.StatusOK)
	viewer.expect(http.MethodGet, site+"/cards/overview?range=7d", nil, http.StatusOK)
	body := viewer.expect(http.MethodGet, site+"/settings", nil, http.StatusOK)
	if strings.Contains(body, "/api/v1/webhooks/") || strings.Contains(body, `action="`+site+`/members"`) {
		t.Fatal("a viewer's settings page shows webhook URLs or the members form")
	}
	forms := map[string]url.Values{
		site + "/settings": {"domain": {"taken.example.com"}, "timezone": {"UTC"}, "currency": {"USD"}},
		site + "/goals":    {"name": {"G"}, "type": {"custom_event"}, "event_name": {"Signup"}},
		site + "/secrets":  {"provider": {"stripe"}, "secret": {"whsec_x"}},
		site + "/members":  {"email": {"stranger@example.com"}, "role": {"admin"}},
		site + "/delete":   {"confirm": {"example.com"}},
	}
	for path, form := range forms {
		form.Set("csrf", viewer.csrf)
		viewer.expect(http.MethodPost, path, form, http.StatusForbidden)
	}

	stranger := newWebUser(t, h)
	stranger.login("stranger@example.com")
	if body := stranger.expect(http.MethodGet, "/sites", nil, http.StatusOK); strings.Contains(body, string(h.siteID)) {
		t.Fatal("a stranger's site list shows someone else's site")
	}
	for _, path := range []string{site, site + "/settings", site + "/cards/overview", site + "/cards/revenue"} {
		stranger.expect(http.MethodGet, path, nil, http.StatusNotFound)
	}
	for path, form := range forms {
		form.Set("csrf", stranger.csrf)
		stranger.expect(http.MethodPost, path, form, http.StatusNotFound)
	}

	// nothing the viewer or the stranger sent took effect
	m, err := h.client(h.key).Site(ctx, string(h.siteID))
	if err != nil {
		t.Fatal(err)
	}
	if m.Domain != "example.com" {
		t.Fatalf("the site's domain is %q after refused forms", m.Domain)
	}
	goals, err := h.client(h.key).Goals(ctx, string(h.siteID))
	if err != nil {
		t.Fatal(err)
	}
	if len(goals) != 0 {
		t.Fatalf("refused forms created %d goals", len(goals))
	}
}

// Nothing a visitor sends to the dashboard is a server error: hostile
// query strings, path ids and form fields all get a 4xx (or the form again).
func TestDashboardRefusesBadInput(t *testing.T) {
	h := newHarness(t)
	w := newWebUser(t, h)
	w.login(h.email)
	site := "/sites/" + string(h.siteID)
	long := strings.Repeat("x", 5000)
	gets := []string{
		site + "?range=forever", site + "?range=custom", site + "?range=custom&from=2026-13-01&to=2026-01-01",
		site + "?range=custom&from=2026-05-02&to=2026-05-01", site + "?range=custom&from=1900-01-01&to=2026-01-01",
		site + "?range=custom&from=2026-01-01&to=9999-12-31", site + "?country=usa", site + "?region=california",
		site + "?pathname=no-slash", site + "?source=" + long, site + "?device=" + long, site + "?compare=maybe&range=today",
		site + "/cards/nope", site + "/cards/overview?range=custom&from=x", site + "/cards/pages?tab=" + long,
		site + "/cards/locations?country=ZZ&region=ZZ-1", site + "/cards/locations?region=US-CA", site + "/cards/revenue?tab=nope&os=Linux",
		site + "/cards/revenue?pathname=/a&utm_term=x", site + "/cards/sources?tab=utm_nope", site + "/cards/devices?tab=%00",
		"/sites/" + long, "/sites/%2e%2e/settings", site + "/goals/not-a-uuid", site + "/goals/00000000-0000-0000-0000-000000000000",
		"/login?next=https://evil.example/", "/assets/../web.go", "/account/keys?revoked=" + long,
	}
	for _, path := range gets {
		if status, _, _ := w.do(http.MethodGet, path, nil); status >= 500 {
			t.Errorf("GET %.80s: %d", path, status)
		}
	}
	w.do(http.MethodGet, site+"/settings", nil) // a fresh form token
	posts := map[string]url.Values{
		"/sites":                    {"domain": {long}, "timezone": {"Mars/Olympus"}, "currency": {"XXXX"}},
		site + "/settings":          {"domain": {"not a domain"}, "timezone": {long}, "currency": {"usd"}},
		site + "/goals":             {"name": {long}, "type": {"pageview"}, "page_path": {"no-slash"}},
		site + "/goals/x":           {"name": {"G"}, "type": {"custom_event"}, "event_name": {""}},
		site + "/goals/x/delete":    {},
		site + "/secrets":           {"provider": {"provider_z"}, "secret": {long}},
		site + "/members":           {"email": {"nobody@example.com"}, "role": {"owner"}},
		site + "/members/remove":    {"email": {"nobody@example.com"}},
		site + "/delete":            {"confirm": {"wrong.example"}},
		"/account/keys":             {"name": {long}, "scopes": {"root"}, "expires": {"tomorrow"}},
		"/account/keys/x/revoke":    {},
		"/sites/" + long + "/goals": {"name": {"G"}, "type": {"custom_event"}, "event_name": {"E"}},
	}
	for path, form := range posts {
		form.Set("csrf", w.csrf)
		status, _, _ := w.do(http.MethodPost, path, form)
		if status >= 500 || status < 400 {
			t.Errorf("POST %.80s: %d, want a 4xx", path, status)
		}
	}
	// bytes that are not text: an id that is not text names nothing (404), a
	// field that is not text is refused (400), a filter value just matches nothing
	for path, want := range map[string]int{"/sites/%FF": 404, site + "?source=%FF": 200, site + "/cards/pages?pathname=/%00": 200} {
		w.expect(http.MethodGet, path, nil, want)
	}
	for _, form := range []url.Values{{"domain": {"\xff.example"}}, {"domain": {"a\x00.example"}}, {"domain": {"ok.example"}, "timezone": {"\xff"}}} {
		form.Set("csrf", w.csrf)
		w.expect(http.MethodPost, "/sites", form, http.StatusBadRequest)
	}
	w.expect(http.MethodPost, "/account/keys/%FF/revoke", url.Values{"csrf": {w.csrf}}, http.StatusBadRequest)
	// a body over the limit
	big := url.Values{"csrf": {w.csrf}, "name": {strings.Repeat("y", 300<<10)}}
	if status, _, _ := w.do(http.MethodPost, "/account/keys", big); status != http.StatusRequestEntityTooLarge {
		t.Errorf("a 300 KiB form: %d, want 413", status)
	}
	// the site is still there, unchanged
	if s, err := h.client(h.key).Site(context.Background(), string(h.siteID)); err != nil || s.Domain != "example.com" {
		t.Fatalf("after the refused forms: %+v, %v", s, err)
	}
}

// The login limit counts per email and client address, and a client cannot
// pick its address with X-Forwarded-For (no trusted proxy here).
func TestDashboardLoginLimit(t *testing.T) {
	h := newHarnessWith(t, testenvConfigWith(t, func(c *configT) { c.LoginAttempts = 3 }))
	w := newWebUser(t, h)
	statuses := []int{}
	for i := range 5 {
		w.do(http.MethodGet, "/login", nil)
		req := url.Values{"email": {h.email}, "password": {"guess " + strconv.Itoa(i)}, "csrf": {w.csrf}}
		status, _, _ := w.doWith(http.MethodPost, "/login", req, http.Header{"X-Forwarded-For": {"203.0.113." + strconv.Itoa(i+1)}})
		statuses = append(statuses, status)
	}
	want := []int{401, 401, 401, 429, 429}
	if !slices.Equal(statuses, want) {
		t.Fatalf("five wrong passwords from 'different' forwarded addresses: %v, want %v", statuses, want)
	}
}

// Report cards count against the user's stats allowance, as the API's
// stats calls with a login token do.
func TestDashboardStatsLimit(t *testing.T) {
	h := newHarnessWith(t, testenvConfigWith(t, func(c *configT) { c.StatsPerHour = 3 }))
	w := newWebUser(t, h)
	w.login(h.email)
	card := "/sites/" + string(h.siteID) + "/cards/devices"
	for range 3 {
		w.expect(http.MethodGet, card, nil, http.StatusOK)
	}
	if body := w.expect(http.MethodGet, card, nil, http.StatusTooManyRequests); !strings.Contains(body, "Too many reports") {
		t.Fatalf("the refused card reads %q", body)
	}
}

// A goal is reached through its own site only.
func TestDashboardGoalOfAnotherSite(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	other, err := h.app.Accounts.CreateSite(ctx, accounts.NewSite{OwnerEmail: h.email, Domain: "other.example.com"})
	if err != nil {
		t.Fatal(err)
	}
	g, err := h.client(h.key).CreateGoal(ctx, api.GoalRequest{SiteID: string(other.ID), GoalName: "B", GoalType: "custom_event", EventName: "b"})
	if err != nil {
		t.Fatal(err)
	}
	w := newWebUser(t, h)
	w.login(h.email)
	wrong := "/sites/" + string(h.siteID) + "/goals/" + g.GoalID
	w.expect(http.MethodGet, wrong, nil, http.StatusNotFound)
	w.expect(http.MethodPost, wrong, url.Values{"name": {"renamed"}, "type": {"custom_event"}, "event_name": {"b"}, "csrf": {w.csrf}}, http.StatusNotFound)
	w.expect(http.MethodPost, wrong+"/delete", url.Values{"csrf": {w.csrf}}, http.StatusNotFound)
	got, err := h.client(h.key).Goal(ctx, g.GoalID)
	if err != nil || got.GoalName != "B" {
		t.Fatalf("the other site's goal after requests through the wrong site: %+v, %v", got, err)
	}
	w.expect(http.MethodPost, "/sites/"+string(other.ID)+"/goals/"+g.GoalID+"/delete", url.Values{"csrf": {w.csrf}}, http.StatusSeeOther)
}

// The member form tells nobody which emails have accounts. Before, an email
// without one answered 404 user_not_found ("they need an account first") and
// one with an account was added with its name shown; now both answer the same
// redirect and are listed alike (email and role), and the email without an
// account gets its role when its account is created.
func TestMemberFormRevealsNoAccounts(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	if _, err := h.app.Accounts.CreateUser(ctx, accounts.NewUser{Email: "known@example.com", Password: password, Name: "Known Person"}); err != nil {
		t.Fatal(err)
	}
	site := "/sites/" + string(h.siteID)
	owner := newWebUser(t, h)
	owner.login(h.email)
	answers := map[string][2]string{}
	for _, email := range []string{"known@example.com", "Unknown@Example.com"} {
		owner.expect(http.MethodGet, site+"/settings", nil, http.StatusOK)
		status, loc, body := owner.do(http.MethodPost, site+"/members", url.Values{"email": {email}, "role": {"viewer"}, "csrf": {owner.csrf}})
		answers[email] = [2]string{strconv.Itoa(status) + " " + loc, body}
	}
	if answers["known@example.com"] != answers["Unknown@Example.com"] {
		t.Errorf("the member form answers differently for an email with an account (%q) and without (%q)",
			answers["known@example.com"], answers["Unknown@Example.com"])
	}
	page := owner.expect(http.MethodGet, site+"/settings", nil, http.StatusOK)
	for _, row := range []string{`<tr data-member="known@example.com">`, `<tr data-member="unknown@example.com">`} {
		if !strings.Contains(page, row) {
			t.Errorf("the members list lacks %s", row)
		}
	}
	if strings.Contains(page, "Known Person") {
		t.Error("the members list shows a member's name, which an email without an account could not have")
	}
	// the account is created: the role is there at once
	u, err := h.app.Accounts.CreateUser(ctx, accounts.NewUser{Email: "unknown@example.com", Password: password, Name: "New"})
	if err != nil {
		t.Fatal(err)
	}
	if _, role, err := h.app.Accounts.Site(ctx, u.ID, h.siteID); err != nil || role != model.RoleViewer {
		t.Errorf("the invited email's new account: role %q, %v; want viewer", role, err)
	}
	// an invitation can be taken back before the account exists
	owner.expect(http.MethodPost, site+"/members", url.Values{"email": {"later@example.com"}, "role": {"admin"}, "csrf": {owner.csrf}}, http.StatusSeeOther)
	owner.expect(http.MethodGet, site+"/settings", nil, http.StatusOK)
	owner.expect(http.MethodPost, site+"/members/remove", url.Values{"email": {"later@example.com"}, "csrf": {owner.csrf}}, http.StatusSeeOther)
	later, err := h.app.Accounts.CreateUser(ctx, accounts.NewUser{Email: "later@example.com", Password: password, Name: "Later"})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := h.app.Accounts.Site(ctx, later.ID, h.siteID); err == nil {
		t.Error("a withdrawn invitation still gave a role")
	}
	// the owner stays
	owner.expect(http.MethodGet, site+"/settings", nil, http.StatusOK)
	owner.expect(http.MethodPost, site+"/members/remove", url.Values{"email": {h.email}, "csrf": {owner.csrf}}, http.StatusForbidden)
}

// A key given an expiry date in the dashboard works through the whole of
// that day (UTC) and stops when it ends; the list says so.
func TestDashboardKeyWorksThroughItsLastDay(t *testing.T) {
	h := newHarness(t)
	h.clock.Set(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	w := newWebUser(t, h)
	w.login(h.email)
	w.expect(http.MethodGet, "/account/keys", nil, http.StatusOK)
	body := w.expect(http.MethodPost, "/account/keys", url.Values{"name": {"until december"}, "scopes": {"stats:read"},
		"expires": {"2026-12-01"}, "csrf": {w.csrf}}, http.StatusCreated)
	m := regexp.MustCompile(`data-secret>([^<]+)<`).FindStringSubmatch(body)
	if m == nil {
		t.Fatal("the new key's secret is not on the page")
	}
	if !strings.Contains(body, "after 2026-12-01") {
		t.Error(`the key list does not say the key expires "after 2026-12-01"`)
	}
	c := h.client(m[1])
	for _, tc := range []struct {
		at    time.Time
		works bool
	}{
		{time.Date(2026, 12, 1, 23, 59, 59, 0, time.UTC), true},
		{time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC), false},
	} {
		h.clock.Set(tc.at)
		_, err := c.Verify(context.Background())
		if works := err == nil; works != tc.works {
			t.Errorf("at %s: the key works %v (%v), want %v", tc.at.Format(time.RFC3339), works, err, tc.works)
		}
	}
}

package app_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/tally-analytics/tally/internal/accounts"
	"github.com/tally-analytics/tally/internal/httpapi/openapi"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/pkg/api"
)

// route is one authenticated endpoint: how to call it for a site and goal,
// and the scope it needs ("" = any credential).
type route struct {
	method, path, body string
	scope              model.Scope
	// fresh: the call consumes its site or goal (DELETE), so each call gets new ones
	fresh bool
	// write: the call changes the site, which a viewer may not do
	write bool
	// ownerOnly: only the site's owner may (DELETE site)
	ownerOnly bool
	// batch: the answer is a batch of one event, judged by that event's result
	batch bool
	// link: the path names a shared link of the site ({link}), made anew
	// for each call by the site's owner
	link bool
	// segment: the path names a segment of the site ({segment}), made anew
	// for each call by the site's owner
	segment bool
	// loginOnly: a login token's only; every API key is 403 forbidden
	loginOnly bool
}

// outcome is a call's status and body; for a batch, those its one event
// would have got on its own (a batch answers 200 whatever its events' fate).
func (r route) outcome(status int, body []byte) (int, []byte) {
	if !r.batch || status != http.StatusOK {
		return status, body
	}
	var resp api.BatchResponse
	if json.Unmarshal(body, &resp) != nil || len(resp.Results) != 1 {
		return http.StatusInternalServerError, body
	}
	res := resp.Results[0]
	if res.Success {
		return http.StatusCreated, body
	}
	e, _ := json.Marshal(api.Error{Error: *res.Error})
	if res.Error.Code == "forbidden" {
		return http.StatusForbidden, e
	}
	return http.StatusBadRequest, e
}

const week = "date_from=2026-05-01&date_to=2026-05-07"

var authenticatedRoutes = []route{
	{method: "GET", path: "/api/v1/auth/verify"},
	{method: "POST", path: "/api/v1/auth/password", body: `{"current_password":"` + password + `","new_password":"another horse battery"}`, loginOnly: true},
	{method: "POST", path: "/api/v1/events/pageview", body: `{"site_id":"{site}","url":"https://matrix.example/"}`, scope: model.ScopeEventsWrite, write: true},
	{method: "POST", path: "/api/v1/events/custom", body: `{"site_id":"{site}","url":"https://matrix.example/","event_name":"e"}`, scope: model.ScopeEventsWrite, write: true},
	{method: "POST", path: "/api/v1/events/batch", body: `{"events":[{"site_id":"{site}","url":"https://matrix.example/"}]}`, scope: model.ScopeEventsWrite, write: true, batch: true},
	{method: "POST", path: "/api/v1/stats/payments", body: `{"site_id":"{site}","amount":100,"currency":"USD"}`, scope: model.ScopeEventsWrite, write: true},
	{method: "GET", path: "/api/v1/stats/overview?site_id={site}&" + week, scope: model.ScopeStatsRead},
	{method: "POST", path: "/api/v2/query", body: `{"site_id":"{site}","date_range":["2026-05-01","2026-05-07"],"metrics":["visitors"],"dimensions":["visit:source"]}`, scope: model.ScopeStatsRead},
	{method: "GET", path: "/api/v1/stats/pages?site_id={site}&" + week, scope: model.ScopeStatsRead},
	{method: "GET", path: "/api/v1/stats/hostnames?site_id={site}&" + week, scope: model.ScopeStatsRead},
	{method: "GET", path: "/api/v1/stats/sources?site_id={site}&" + week, scope: model.ScopeStatsRead},
	{method: "GET", path: "/api/v1/stats/campaigns?site_id={site}&" + week, scope: model.ScopeStatsRead},
	{method: "GET", path: "/api/v1/stats/channels?site_id={site}&" + week, scope: model.ScopeStatsRead},
	{method: "GET", path: "/api/v1/stats/entry-pages?site_id={site}&" + week, scope: model.ScopeStatsRead},
	{method: "GET", path: "/api/v1/stats/exit-pages?site_id={site}&" + week, scope: model.ScopeStatsRead},
	{method: "GET", path: "/api/v1/stats/journeys?site_id={site}&steps=4&start=/&" + week, scope: model.ScopeStatsRead},
	{method: "GET", path: "/api/v1/stats/devices?site_id={site}&" + week, scope: model.ScopeStatsRead},
	{method: "GET", path: "/api/v1/stats/browsers?site_id={site}&" + week, scope: model.ScopeStatsRead},
	{method: "GET", path: "/api/v1/stats/operating-systems?site_id={site}&" + week, scope: model.ScopeStatsRead},
	{method: "GET", path: "/api/v1/stats/browser-versions?site_id={site}&browser=Chrome&" + week, scope: model.ScopeStatsRead},
	{method: "GET", path: "/api/v1/stats/os-versions?site_id={site}&os=Windows&" + week, scope: model.ScopeStatsRead},
	{method: "GET", path: "/api/v1/stats/countries?site_id={site}&" + week, scope: model.ScopeStatsRead},
	{method: "GET", path: "/api/v1/stats/regions?site_id={site}&country=US&" + week, scope: model.ScopeStatsRead},
	{method: "GET", path: "/api/v1/stats/cities?site_id={site}&region=US-CA&" + week, scope: model.ScopeStatsRead},
	{method: "GET", path: "/api/v1/stats/events?site_id={site}&" + week, scope: model.ScopeStatsRead},
	{method: "GET", path: "/api/v1/stats/event-properties?site_id={site}&event_name=Signup&" + week, scope: model.ScopeStatsRead},
	{method: "GET", path: "/api/v1/stats/retention?site_id={site}&" + week, scope: model.ScopeStatsRead},
	{method: "GET", path: "/api/v1/stats/realtime?site_id={site}", scope: model.ScopeStatsRead},
	{method: "GET", path: "/api/v1/stats/ingestion?site_id={site}&" + week, scope: model.ScopeStatsRead},
	{method: "GET", path: "/api/v1/stats/revenue?site_id={site}&breakdown=source&" + week, scope: model.ScopeStatsRead},
	{method: "GET", path: "/api/v1/export/events?site_id={site}&" + week, scope: model.ScopeStatsRead},
	{method: "GET", path: "/api/v1/goals?site_id={site}", scope: model.ScopeStatsRead},
	{method: "GET", path: "/api/v1/goals/conversions?site_id={site}&" + week, scope: model.ScopeStatsRead},
	{method: "GET", path: "/api/v1/goals/{goal}", scope: model.ScopeStatsRead},
	{method: "POST", path: "/api/v1/goals", body: `{"site_id":"{site}","goal_name":"n","goal_type":"custom_event","event_name":"{unique}"}`, scope: model.ScopeGoalsManage, write: true},
	{method: "PUT", path: "/api/v1/goals/{goal}", body: `{"goal_name":"renamed","goal_type":"custom_event","event_name":"{unique}"}`, scope: model.ScopeGoalsManage, write: true},
	{method: "DELETE", path: "/api/v1/goals/{goal}", scope: model.ScopeGoalsManage, fresh: true, write: true},
	{method: "GET", path: "/api/v1/sites", scope: model.ScopeSitesManage},
	{method: "POST", path: "/api/v1/sites", body: `{"domain":"new.matrix.example"}`, scope: model.ScopeSitesManage},
	{method: "GET", path: "/api/v1/sites/{site}", scope: model.ScopeSitesManage},
	{method: "PUT", path: "/api/v1/sites/{site}", body: `{"timezone":"Europe/Paris"}`, scope: model.ScopeSitesManage, write: true},
	{method: "DELETE", path: "/api/v1/sites/{site}", scope: model.ScopeSitesManage, fresh: true, write: true, ownerOnly: true},
	{method: "DELETE", path: "/api/v1/sites/{site}/client-revenue", scope: model.ScopeSitesManage, write: true},
	// shared links are the owners' and admins' only, listing them included
	{method: "GET", path: "/api/v1/sites/{site}/shared-links", scope: model.ScopeSitesManage, write: true},
	{method: "POST", path: "/api/v1/sites/{site}/shared-links", body: `{"label":"m"}`, scope: model.ScopeSitesManage, write: true},
	{method: "DELETE", path: "/api/v1/sites/{site}/shared-links/{link}", scope: model.ScopeSitesManage, write: true, link: true},
	{method: "PUT", path: "/api/v1/sites/{site}/shared-links/{link}/password", body: `{"password":"matrix password"}`, scope: model.ScopeSitesManage, write: true, link: true},
	{method: "DELETE", path: "/api/v1/sites/{site}/shared-links/{link}/password", scope: model.ScopeSitesManage, write: true, link: true},
	// segments are read by whoever reads the statistics, and changed as
	// shared links are
	{method: "GET", path: "/api/v1/sites/{site}/segments", scope: model.ScopeStatsRead},
	{method: "POST", path: "/api/v1/sites/{site}/segments", body: `{"name":"{unique}","filters":{"device":"mobile"}}`, scope: model.ScopeSitesManage, write: true},
	{method: "PATCH", path: "/api/v1/sites/{site}/segments/{segment}", body: `{"name":"{unique}"}`, scope: model.ScopeSitesManage, write: true, segment: true},
	{method: "DELETE", path: "/api/v1/sites/{site}/segments/{segment}", scope: model.ScopeSitesManage, write: true, segment: true},
	{method: "GET", path: "/api/v1/stats/overview?site_id={site}&segment={segment}&" + week, scope: model.ScopeStatsRead, segment: true},
}

// matrixAccount is a user with a site, a goal on it, and one key per scope.
type matrixAccount struct {
	email string
	keys  map[model.Scope]string
	site  model.SiteID
	goal  string
}

func newMatrixAccount(t *testing.T, h *harness, email string) *matrixAccount {
	t.Helper()
	ctx := context.Background()
	if _, err := h.app.Accounts.CreateUser(ctx, accounts.NewUser{Email: email, Password: password, Name: "M", Plan: model.PlanPro}); err != nil {
		t.Fatal(err)
	}
	a := &matrixAccount{email: email, keys: map[model.Scope]string{}}
	for _, s := range model.AllScopes {
		k, err := h.app.Accounts.CreateKey(ctx, accounts.NewKey{OwnerEmail: email, Name: string(s), Scopes: []model.Scope{s}})
		if err != nil {
			t.Fatal(err)
		}
		a.keys[s] = k.Secret
	}
	a.site, a.goal = a.fresh(t, h)
	return a
}

// fresh makes a new site of the account with a goal on it.
func (a *matrixAccount) fresh(t *testing.T, h *harness) (model.SiteID, string) {
	t.Helper()
	ctx := context.Background()
	site, err := h.app.Accounts.CreateSite(ctx, accounts.NewSite{OwnerEmail: a.email, Domain: "matrix.example"})
	if err != nil {
		t.Fatal(err)
	}
	var g api.GoalResponse
	status, body := call(t, h, a.keys[model.ScopeAdminFull], "POST", "/api/v1/goals",
		`{"site_id":"`+string(site.ID)+`","goal_name":"g","goal_type":"pageview","page_path":"/g/`+uniqueSuffix()+`"}`)
	if status != 201 || json.Unmarshal(body, &g) != nil {
		t.Fatalf("creating a goal: %d %s", status, body)
	}
	return site.ID, g.Data.GoalID
}

var counter int

func uniqueSuffix() string {
	counter++
	return strings.Repeat("x", counter%7+1) + string(rune('a'+counter%26)) + itoa(counter)
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

func call(t *testing.T, h *harness, token, method, path, body string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest(method, h.srv.URL+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// fill puts the site, the goal and what made holds ({link}, {segment})
// into the route.
func (r route) fill(site model.SiteID, goal string, made []string) (string, string) {
	repl := strings.NewReplacer(append([]string{"{site}", string(site), "{goal}", goal, "{unique}", "u" + uniqueSuffix()}, made...)...)
	return repl.Replace(r.path), repl.Replace(r.body)
}

// made makes what r names of the account's site: a shared link ({link}),
// a segment ({segment}); placeholders and values, for fill.
func (a *matrixAccount) made(t *testing.T, h *harness, r route, site model.SiteID) []string {
	t.Helper()
	var out []string
	if r.link {
		var created api.CreatedSharedLinkResponse
		status, body := call(t, h, a.keys[model.ScopeAdminFull], "POST", "/api/v1/sites/"+string(site)+"/shared-links", `{"label":"l"}`)
		if status != 201 || json.Unmarshal(body, &created) != nil {
			t.Fatalf("creating a shared link: %d %s", status, body)
		}
		out = append(out, "{link}", created.Data.ID)
	}
	if r.segment {
		var created api.SegmentResponse
		status, body := call(t, h, a.keys[model.ScopeAdminFull], "POST", "/api/v1/sites/"+string(site)+"/segments",
			`{"name":"s`+uniqueSuffix()+`","filters":{"country":"de"}}`)
		if status != 201 || json.Unmarshal(body, &created) != nil {
			t.Fatalf("creating a segment: %d %s", status, body)
		}
		out = append(out, "{segment}", created.Data.ID)
	}
	return out
}

func errorCode(body []byte) string {
	var e api.Error
	json.Unmarshal(body, &e)
	return e.Error.Code
}

// Every authenticated endpoint with a key of every single scope: the right
// scope (or admin:full) passes, any other is 403 forbidden; what takes a
// login token refuses every key, admin:full too.
func TestScopeMatrix(t *testing.T) {
	h := newHarness(t)
	a := newMatrixAccount(t, h, "matrix@example.com")
	for _, r := range authenticatedRoutes {
		for _, scope := range model.AllScopes {
			t.Run(r.method+" "+r.path+" with "+string(scope), func(t *testing.T) {
				site, goal := a.site, a.goal
				if r.fresh {
					site, goal = a.fresh(t, h)
				}
				path, body := r.fill(site, goal, a.made(t, h, r, site))
				status, resp := r.outcome(call(t, h, a.keys[scope], r.method, path, body))
				allowed := !r.loginOnly && (r.scope == "" || scope == r.scope || scope == model.ScopeAdminFull)
				switch {
				case allowed && status >= 300:
					t.Errorf("allowed, but %d %s", status, resp)
				case !allowed && (status != 403 || errorCode(resp) != "forbidden"):
					t.Errorf("without %s: %d %s, want 403 forbidden", r.scope, status, resp)
				}
			})
		}
	}
}

// Every write of a site by each role: owners do all, admins all but
// deleting the site, viewers none (403); every read is open to all roles.
func TestRoleMatrix(t *testing.T) {
	h := newHarness(t)
	owner := newMatrixAccount(t, h, "owner@matrix.example")
	members := map[model.Role]*matrixAccount{
		model.RoleAdmin:  newMatrixAccount(t, h, "admin@matrix.example"),
		model.RoleViewer: newMatrixAccount(t, h, "viewer@matrix.example"),
	}
	ctx := context.Background()
	for _, r := range authenticatedRoutes {
		if !strings.Contains(r.path, "{site}") && !strings.Contains(r.path, "{goal}") && !strings.Contains(r.body, "{site}") {
			continue // not about one site
		}
		for role, m := range members {
			t.Run(r.method+" "+r.path+" as "+string(role), func(t *testing.T) {
				site, goal := owner.site, owner.goal
				if r.fresh {
					site, goal = owner.fresh(t, h)
				}
				if err := h.app.Accounts.AddMember(ctx, site, m.email, role); err != nil {
					t.Fatal(err)
				}
				path, body := r.fill(site, goal, owner.made(t, h, r, site))
				status, resp := r.outcome(call(t, h, m.keys[model.ScopeAdminFull], r.method, path, body))
				allowed := !r.write || (role == model.RoleAdmin && !r.ownerOnly)
				switch {
				case allowed && status >= 300:
					t.Errorf("a %s may, but %d %s", role, status, resp)
				case !allowed && (status != 403 || errorCode(resp) != "forbidden"):
					t.Errorf("a %s may not: %d %s, want 403 forbidden", role, status, resp)
				}
			})
		}
	}
}

// Another account reaches nothing of this one: every endpoint with its
// full-scope key against this account's site and goal answers as if they
// did not exist, and nothing changes.
func TestTenantIsolation(t *testing.T) {
	h := newHarness(t)
	victim := newMatrixAccount(t, h, "victim@matrix.example")
	intruder := newMatrixAccount(t, h, "intruder@matrix.example")
	for _, r := range authenticatedRoutes {
		if !strings.Contains(r.path, "{site}") && !strings.Contains(r.path, "{goal}") && !strings.Contains(r.body, "{site}") {
			continue
		}
		t.Run(r.method+" "+r.path, func(t *testing.T) {
			path, body := r.fill(victim.site, victim.goal, victim.made(t, h, r, victim.site))
			status, resp := r.outcome(call(t, h, intruder.keys[model.ScopeAdminFull], r.method, path, body))
			code := errorCode(resp)
			notFound := (status == 404 && (code == "site_not_found" || code == "goal_not_found")) ||
				(status == 400 && code == "invalid_site_id")
			if !notFound {
				t.Errorf("another account's resource: %d %s, want 404 site_not_found/goal_not_found or 400 invalid_site_id", status, resp)
			}
		})
	}
	// and nothing of the victim's changed or leaked
	status, body := call(t, h, victim.keys[model.ScopeAdminFull], "GET", "/api/v1/goals/"+victim.goal, "")
	if status != 200 || !strings.Contains(string(body), `"goal_name":"g"`) {
		t.Errorf("the victim's goal after the attempts: %d %s", status, body)
	}
	status, body = call(t, h, victim.keys[model.ScopeAdminFull], "GET", "/api/v1/sites/"+string(victim.site), "")
	if status != 200 || !strings.Contains(string(body), `"timezone":"UTC"`) {
		t.Errorf("the victim's site after the attempts: %d %s", status, body)
	}
	if n := ledgerCount(t, h, string(victim.site), "true"); n != 0 {
		t.Errorf("the intruder recorded %d payments on the victim's site", n)
	}
	if n := h.count("SELECT count() FROM events WHERE site_id = ?", string(victim.site)); n != 0 {
		t.Errorf("the intruder sent %d events to the victim's site", n)
	}
	status, body = call(t, h, intruder.keys[model.ScopeAdminFull], "GET", "/api/v1/sites", "")
	if status != 200 || strings.Contains(string(body), string(victim.site)) {
		t.Errorf("the intruder's site list shows the victim's site: %s", body)
	}
}

// The matrices cover every operation the OpenAPI document marks as needing
// a bearer credential.
func TestMatricesCoverEveryAuthenticatedRoute(t *testing.T) {
	doc, err := openapi.Load()
	if err != nil {
		t.Fatal(err)
	}
	covered := map[string]bool{}
	for _, r := range append(append([]route{}, authenticatedRoutes...), funnelRoutes...) {
		path, _, _ := strings.Cut(r.path, "?")
		path = strings.NewReplacer("{goal}", "{id}", "{site}", "{id}", "{funnel}", "{id}", "{link}", "{link_id}", "{segment}", "{segment_id}").Replace(path)
		covered[r.method+" "+path] = true
	}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			sec := doc.Security
			if op.Security != nil {
				sec = *op.Security
			}
			needsBearer := false
			for _, req := range sec {
				if _, ok := req["bearerAuth"]; ok {
					needsBearer = true
				}
			}
			if needsBearer && !covered[method+" "+path] {
				t.Errorf("%s %s needs a credential but is not in the scope and tenant matrices", method, path)
			}
		}
	}
}

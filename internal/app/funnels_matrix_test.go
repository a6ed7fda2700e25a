package app_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/pkg/api"
)

// funnelRoutes are the funnel endpoints for the scope, role and tenant
// matrices ({funnel}: a funnel of the site).
var funnelRoutes = []route{
	{method: "GET", path: "/api/v1/funnels?site_id={site}", scope: model.ScopeStatsRead},
	{method: "GET", path: "/api/v1/funnels/{funnel}", scope: model.ScopeStatsRead},
	{method: "GET", path: "/api/v1/stats/funnel?site_id={site}&funnel_id={funnel}&" + week, scope: model.ScopeStatsRead},
	{method: "POST", path: "/api/v1/funnels", body: `{"site_id":"{site}","name":"n","steps":[{"type":"pageview","page_path":"/a"},{"type":"custom_event","event_name":"b"}]}`,
		scope: model.ScopeGoalsManage, write: true},
	{method: "PUT", path: "/api/v1/funnels/{funnel}", body: `{"name":"renamed","steps":[{"type":"pageview","page_path":"/a"},{"type":"pageview","page_path":"/b/*"}]}`,
		scope: model.ScopeGoalsManage, write: true},
	{method: "DELETE", path: "/api/v1/funnels/{funnel}", scope: model.ScopeGoalsManage, fresh: true, write: true},
}

// newFunnel makes a funnel on the account's site and returns its id.
func (a *matrixAccount) newFunnel(t *testing.T, h *harness, site model.SiteID) string {
	t.Helper()
	var f api.FunnelResponse
	status, body := call(t, h, a.keys[model.ScopeAdminFull], "POST", "/api/v1/funnels",
		`{"site_id":"`+string(site)+`","name":"f","steps":[{"type":"pageview","page_path":"/f"},{"type":"custom_event","event_name":"g"}]}`)
	if status != 201 || json.Unmarshal(body, &f) != nil {
		t.Fatalf("creating a funnel: %d %s", status, body)
	}
	return f.Data.FunnelID
}

// fillFunnel puts the funnel into the route, then the site and goal.
func (r route) fillFunnel(site model.SiteID, funnel string) (string, string) {
	r.path, r.body = strings.ReplaceAll(r.path, "{funnel}", funnel), strings.ReplaceAll(r.body, "{funnel}", funnel)
	return r.fill(site, "", nil)
}

// Every funnel endpoint with a key of every single scope.
func TestFunnelScopeMatrix(t *testing.T) {
	h := newHarness(t)
	a := newMatrixAccount(t, h, "matrix@example.com")
	funnel := a.newFunnel(t, h, a.site)
	for _, r := range funnelRoutes {
		for _, scope := range model.AllScopes {
			t.Run(r.method+" "+r.path+" with "+string(scope), func(t *testing.T) {
				f := funnel
				if r.fresh {
					f = a.newFunnel(t, h, a.site)
				}
				path, body := r.fillFunnel(a.site, f)
				status, resp := call(t, h, a.keys[scope], r.method, path, body)
				allowed := scope == r.scope || scope == model.ScopeAdminFull
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

// Admins do every funnel write, viewers none; both read.
func TestFunnelRoleMatrix(t *testing.T) {
	h := newHarness(t)
	owner := newMatrixAccount(t, h, "owner@matrix.example")
	members := map[model.Role]*matrixAccount{
		model.RoleAdmin:  newMatrixAccount(t, h, "admin@matrix.example"),
		model.RoleViewer: newMatrixAccount(t, h, "viewer@matrix.example"),
	}
	for role, m := range members {
		if err := h.app.Accounts.AddMember(t.Context(), owner.site, m.email, role); err != nil {
			t.Fatal(err)
		}
	}
	funnel := owner.newFunnel(t, h, owner.site)
	for _, r := range funnelRoutes {
		for role, m := range members {
			t.Run(r.method+" "+r.path+" as "+string(role), func(t *testing.T) {
				f := funnel
				if r.fresh {
					f = owner.newFunnel(t, h, owner.site)
				}
				path, body := r.fillFunnel(owner.site, f)
				status, resp := call(t, h, m.keys[model.ScopeAdminFull], r.method, path, body)
				allowed := !r.write || role == model.RoleAdmin
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

// Another account's funnels and sites do not exist, and stay as they were.
func TestFunnelTenantIsolation(t *testing.T) {
	h := newHarness(t)
	victim := newMatrixAccount(t, h, "victim@matrix.example")
	intruder := newMatrixAccount(t, h, "intruder@matrix.example")
	funnel := victim.newFunnel(t, h, victim.site)
	for _, r := range funnelRoutes {
		t.Run(r.method+" "+r.path, func(t *testing.T) {
			path, body := r.fillFunnel(victim.site, funnel)
			status, resp := call(t, h, intruder.keys[model.ScopeAdminFull], r.method, path, body)
			code := errorCode(resp)
			if status != 404 || (code != "site_not_found" && code != "funnel_not_found") {
				t.Errorf("another account's funnel: %d %s, want 404 site_not_found or funnel_not_found", status, resp)
			}
		})
	}
	status, body := call(t, h, victim.keys[model.ScopeAdminFull], "GET", "/api/v1/funnels/"+funnel, "")
	if status != 200 || !strings.Contains(string(body), `"name":"f"`) {
		t.Errorf("the victim's funnel after the attempts: %d %s", status, body)
	}
}

package app_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/google/uuid"

	"github.com/tally-analytics/tally/internal/accounts"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/pkg/api"
	"github.com/tally-analytics/tally/pkg/client"
)

func TestGoalsCRUD(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	c := h.client(h.key)
	site := string(h.siteID)

	blog, err := c.CreateGoal(ctx, api.GoalRequest{SiteID: site, GoalName: "Read the blog", GoalType: "pageview", PagePath: "/blog/**"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := uuid.Parse(blog.GoalID); err != nil {
		t.Errorf("goal_id %q is not a UUID", blog.GoalID)
	}
	want := api.Goal{GoalID: blog.GoalID, SiteID: site, GoalName: "Read the blog", GoalType: "pageview", PagePath: "/blog/**"}
	if diff := cmp.Diff(want, blog, cmpopts.IgnoreFields(api.Goal{}, "CreatedAt")); diff != "" || blog.CreatedAt.IsZero() {
		t.Errorf("created goal (-want +got):\n%s", diff)
	}
	signup, err := c.CreateGoal(ctx, api.GoalRequest{SiteID: site, GoalName: "Signup", GoalType: "custom_event", EventName: "signup"})
	if err != nil {
		t.Fatal(err)
	}
	list, err := c.Goals(ctx, site)
	if err != nil || len(list) != 2 || list[0].GoalID != blog.GoalID || list[1].GoalID != signup.GoalID {
		t.Errorf("list = %+v, %v; want both goals, oldest first", list, err)
	}
	got, err := c.Goal(ctx, signup.GoalID)
	if err != nil || got.EventName != "signup" || got.GoalType != "custom_event" {
		t.Errorf("get = %+v, %v", got, err)
	}

	// duplicate target → 409, also when an update would create one
	_, err = c.CreateGoal(ctx, api.GoalRequest{SiteID: site, GoalName: "Other name", GoalType: "pageview", PagePath: "/blog/**"})
	wantError(t, err, http.StatusConflict, "goal_exists", "")
	_, err = c.UpdateGoal(ctx, signup.GoalID, api.GoalRequest{GoalName: "x", GoalType: "pageview", PagePath: "/blog/**"})
	wantError(t, err, http.StatusConflict, "goal_exists", "")

	updated, err := c.UpdateGoal(ctx, signup.GoalID, api.GoalRequest{SiteID: site, GoalName: "Pricing seen", GoalType: "pageview", PagePath: "/pricing"})
	if err != nil || updated.GoalName != "Pricing seen" || updated.PagePath != "/pricing" || updated.EventName != "" {
		t.Errorf("update = %+v, %v", updated, err)
	}
	if err := c.DeleteGoal(ctx, signup.GoalID); err != nil {
		t.Fatal(err)
	}
	_, err = c.Goal(ctx, signup.GoalID)
	wantError(t, err, http.StatusNotFound, "goal_not_found", "")
	err = c.DeleteGoal(ctx, signup.GoalID)
	wantError(t, err, http.StatusNotFound, "goal_not_found", "")
	_, err = c.Goal(ctx, "not-a-uuid")
	wantError(t, err, http.StatusNotFound, "goal_not_found", "")
	_, err = c.UpdateGoal(ctx, uuid.NewString(), api.GoalRequest{GoalName: "x", GoalType: "pageview", PagePath: "/x"})
	wantError(t, err, http.StatusNotFound, "goal_not_found", "")

	for name, tc := range map[string]struct {
		req   api.GoalRequest
		field string
	}{
		"no site":               {api.GoalRequest{GoalName: "x", GoalType: "pageview", PagePath: "/a"}, "site_id"},
		"no name":               {api.GoalRequest{SiteID: site, GoalType: "pageview", PagePath: "/a"}, "goal_name"},
		"bad type":              {api.GoalRequest{SiteID: site, GoalName: "x", GoalType: "click", PagePath: "/a"}, "goal_type"},
		"pageview without path": {api.GoalRequest{SiteID: site, GoalName: "x", GoalType: "pageview"}, "page_path"},
		"relative path":         {api.GoalRequest{SiteID: site, GoalName: "x", GoalType: "pageview", PagePath: "blog"}, "page_path"},
		"event without name":    {api.GoalRequest{SiteID: site, GoalName: "x", GoalType: "custom_event"}, "event_name"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := c.CreateGoal(ctx, tc.req)
			wantError(t, err, http.StatusBadRequest, "invalid_request", tc.field)
		})
	}
	status, e := post(t, h, "/api/v1/goals", h.key, `{"site_id": 7}`)
	if status != 400 || e.Error.Field != "site_id" {
		t.Errorf("site_id of the wrong type: %d %+v", status, e)
	}
	_, err = c.UpdateGoal(ctx, blog.GoalID, api.GoalRequest{SiteID: "another", GoalName: "x", GoalType: "pageview", PagePath: "/x"})
	wantError(t, err, http.StatusBadRequest, "invalid_request", "site_id")
	_, err = c.Goals(ctx, "")
	wantError(t, err, http.StatusBadRequest, "invalid_request", "site_id")
}

func TestGoalPermissions(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	site := string(h.siteID)
	blog, err := h.client(h.key).CreateGoal(ctx, api.GoalRequest{SiteID: site, GoalName: "Blog", GoalType: "pageview", PagePath: "/blog/*"})
	if err != nil {
		t.Fatal(err)
	}
	readOnly, _ := h.app.Accounts.CreateKey(ctx, accounts.NewKey{OwnerEmail: h.email, Name: "ro", Scopes: []model.Scope{model.ScopeStatsRead}})
	writeOnly, _ := h.app.Accounts.CreateKey(ctx, accounts.NewKey{OwnerEmail: h.email, Name: "wo", Scopes: []model.Scope{model.ScopeGoalsManage}})
	other, _ := h.app.Accounts.CreateUser(ctx, accounts.NewUser{Email: "viewer@example.com", Password: password, Name: "V"})
	otherSite, _ := h.app.Accounts.CreateSite(ctx, accounts.NewSite{OwnerEmail: other.Email, Domain: "other.com"})
	viewer, _ := h.app.Accounts.CreateKey(ctx, accounts.NewKey{OwnerEmail: other.Email, Name: "v"})
	theirGoal, err := h.client(viewer.Secret).CreateGoal(ctx, api.GoalRequest{SiteID: string(otherSite.ID), GoalName: "T",
		GoalType: "custom_event", EventName: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.app.Accounts.AddMember(ctx, h.siteID, other.Email, model.RoleViewer); err != nil {
		t.Fatal(err)
	}
	newGoal := api.GoalRequest{SiteID: site, GoalName: "Docs", GoalType: "pageview", PagePath: "/docs/**"}

	ro := h.client(readOnly.Secret)
	_, err = ro.CreateGoal(ctx, newGoal)
	wantError(t, err, http.StatusForbidden, "forbidden", "")
	// without the scope, what the body holds does not matter
	_, err = ro.CreateGoal(ctx, api.GoalRequest{SiteID: site, GoalType: "nonsense"})
	wantError(t, err, http.StatusForbidden, "forbidden", "")
	err = ro.DeleteGoal(ctx, blog.GoalID)
	wantError(t, err, http.StatusForbidden, "forbidden", "")
	if _, err := ro.Goals(ctx, site); err != nil {
		t.Errorf("stats:read key listing goals: %v", err)
	}
	wo := h.client(writeOnly.Secret)
	_, err = wo.Goals(ctx, site)
	wantError(t, err, http.StatusForbidden, "forbidden", "")
	if _, err := wo.CreateGoal(ctx, newGoal); err != nil {
		t.Errorf("goals:manage key creating a goal: %v", err)
	}
	// a site_id of spaces on update is no site_id: the goal stays where it is
	if g, err := wo.UpdateGoal(ctx, blog.GoalID, api.GoalRequest{SiteID: "  ", GoalName: "Blog", GoalType: "pageview",
		PagePath: "/blog/*"}); err != nil || g.SiteID != site {
		t.Errorf("update with a site_id of spaces: %+v, %v", g, err)
	}

	v := h.client(viewer.Secret) // a viewer of our site
	_, err = v.CreateGoal(ctx, api.GoalRequest{SiteID: site, GoalName: "V", GoalType: "pageview", PagePath: "/v"})
	wantError(t, err, http.StatusForbidden, "forbidden", "")
	_, err = v.UpdateGoal(ctx, blog.GoalID, api.GoalRequest{GoalName: "V", GoalType: "pageview", PagePath: "/v"})
	wantError(t, err, http.StatusForbidden, "forbidden", "")
	err = v.DeleteGoal(ctx, blog.GoalID)
	wantError(t, err, http.StatusForbidden, "forbidden", "")
	if _, err := v.Goal(ctx, blog.GoalID); err != nil {
		t.Errorf("viewer reading a goal: %v", err)
	}

	// another account's site and goal do not exist for us
	owner := h.client(h.key)
	_, err = owner.CreateGoal(ctx, api.GoalRequest{SiteID: string(otherSite.ID), GoalName: "X", GoalType: "pageview", PagePath: "/x"})
	wantError(t, err, http.StatusNotFound, "site_not_found", "site_id")
	_, err = owner.Goals(ctx, string(otherSite.ID))
	wantError(t, err, http.StatusNotFound, "site_not_found", "site_id")
	_, err = owner.Goal(ctx, theirGoal.GoalID)
	wantError(t, err, http.StatusNotFound, "goal_not_found", "")
	_, err = owner.UpdateGoal(ctx, theirGoal.GoalID, api.GoalRequest{GoalName: "X", GoalType: "custom_event", EventName: "x"})
	wantError(t, err, http.StatusNotFound, "goal_not_found", "")
	err = owner.DeleteGoal(ctx, theirGoal.GoalID)
	wantError(t, err, http.StatusNotFound, "goal_not_found", "")
	_, err = owner.Conversions(ctx, client.StatsParams{SiteID: string(otherSite.ID), DateFrom: "2026-01-01", DateTo: "2026-01-02"})
	wantError(t, err, http.StatusNotFound, "site_not_found", "site_id")
}

// Conversions on a hand-built dataset (UTC site), range Jun 8–14 and the
// previous period Jun 1–7:
//
//	current   v1 /blog/a, /blog/a/b, signup   v2 /blog/a twice   v3 /pricing, signup twice
//	          v4 /blog/x/y/z                  v5 /                        → 5 visitors
//	previous  p1 /blog/a, signup              p2, p3, p4 /                → 4 visitors
func TestConversions(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	c := h.client(h.key)
	site := string(h.siteID)
	type ev struct {
		day     int
		visitor string
		path    string
		event   string
	}
	data := []ev{
		{1, "p1", "/blog/a", ""}, {1, "p1", "/blog/a", "signup"}, {2, "p2", "/", ""}, {3, "p3", "/", ""}, {4, "p4", "/", ""},
		{8, "v1", "/blog/a", ""}, {8, "v1", "/blog/a/b", ""}, {8, "v1", "/blog/a/b", "signup"},
		{9, "v2", "/blog/a", ""}, {9, "v2", "/blog/a", ""},
		{10, "v3", "/pricing", ""}, {10, "v3", "/pricing", "signup"}, {10, "v3", "/pricing", "signup"},
		{11, "v4", "/blog/x/y/z", ""}, {12, "v5", "/", ""},
	}
	for i, e := range data {
		h.clock.Set(time.Date(2026, 6, e.day, 10, 0, i, 0, time.UTC))
		req := api.PageviewRequest{SiteID: site, URL: "https://example.com" + e.path, VisitorID: e.visitor}
		var err error
		if e.event != "" {
			_, err = c.CustomEvent(ctx, api.CustomEventRequest{PageviewRequest: req, EventName: e.event})
		} else {
			_, err = c.Pageview(ctx, req)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	h.waitCount(int64(len(data)), "SELECT count() FROM events")
	goals := map[string]api.Goal{}
	for _, g := range []api.GoalRequest{
		{SiteID: site, GoalName: "Blog post", GoalType: "pageview", PagePath: "/blog/*"},
		{SiteID: site, GoalName: "Any blog page", GoalType: "pageview", PagePath: "/blog/**"},
		{SiteID: site, GoalName: "Signup", GoalType: "custom_event", EventName: "signup"},
		{SiteID: site, GoalName: "Pricing", GoalType: "pageview", PagePath: "/pricing"},
	} {
		created, err := c.CreateGoal(ctx, g)
		if err != nil {
			t.Fatal(err)
		}
		goals[g.GoalName] = created
	}
	p := client.StatsParams{SiteID: site, DateFrom: "2026-06-08", DateTo: "2026-06-14"}
	res, err := c.Conversions(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	f := func(x float64) *float64 { return &x }
	record := func(name string, total, visitors int64, rate, visitorRate, prevRate float64, change *float64) api.Conversion {
		g := goals[name]
		return api.Conversion{GoalID: g.GoalID, GoalName: name, GoalType: g.GoalType, TotalConversions: total, UniqueVisitors: visitors,
			ConversionRate: rate, VisitorConversionRate: visitorRate, PreviousPeriodRate: prevRate, ChangePercent: change}
	}
	want := []api.Conversion{
		// /blog/* : v1 /blog/a, v2 /blog/a ×2 = 3 by 2 of 5; before: p1 = 1 of 4 (25 %) → +140 %
		record("Blog post", 3, 2, 60, 40, 25, f(140)),
		// /blog/** adds v1 /blog/a/b and v4 /blog/x/y/z: 5 by 3; before 25 % → +300 %
		record("Any blog page", 5, 3, 100, 60, 25, f(300)),
		// signup: v1 once, v3 twice = 3 by 2; before p1 once
		record("Signup", 3, 2, 60, 40, 25, f(140)),
		// /pricing: v3 once; nothing before → no change to report
		record("Pricing", 1, 1, 20, 20, 0, nil),
	}
	if diff := cmp.Diff(want, res.Data); diff != "" {
		t.Errorf("conversions (-want +got):\n%s", diff)
	}
	if res.Meta != (api.ConversionsMeta{SiteID: site, DateFrom: "2026-06-08", DateTo: "2026-06-14", TotalUniqueVisitors: 5}) {
		t.Errorf("meta %+v", res.Meta)
	}

	// The events report agrees with the custom-event goal.
	events, err := c.Events(ctx, client.StatsParams{SiteID: site, DateFrom: "2026-06-08", DateTo: "2026-06-14", EventName: "signup"})
	if err != nil {
		t.Fatal(err)
	}
	signup := res.Data[2]
	if len(events.Data.Events) != 1 || events.Data.Events[0].TotalCount != signup.TotalConversions ||
		events.Data.Events[0].UniqueVisitors != signup.UniqueVisitors || events.Data.Events[0].ConversionRate != signup.ConversionRate {
		t.Errorf("events report %+v disagrees with the goal %+v", events.Data.Events, signup)
	}

	// Parameter errors follow the stats rules.
	status, e := get(t, h, h.key, "/api/v1/goals/conversions", url.Values{"site_id": {site}, "date_from": {"2026-06-14"}, "date_to": {"2026-06-08"}})
	if status != 400 || e.Error.Code != "invalid_date_range" {
		t.Errorf("reversed range: %d %+v", status, e)
	}
	status, e = get(t, h, h.key, "/api/v1/goals/conversions", url.Values{"site_id": {site}, "date_from": {"2026-06-08"}})
	if status != 400 || e.Error.Field != "date_to" {
		t.Errorf("missing date_to: %d %+v", status, e)
	}
}

// A goal's change_percent compares its rates as they are, not as rounded
// for show. June 6–7: 6 visitors, 1 signup (16.67 %, shown 16.7); June 8–9:
// 3 visitors, 1 signup (33.33 %, shown 33.3). The rate doubled: +100 %, not
// the (33.3 - 16.7) / 16.7 = +99.4 % of the rounded rates.
func TestGoalChangeFromExactRates(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	c := h.client(h.key)
	site := string(h.siteID)
	sent := 0
	send := func(day, second int, visitor, event string) {
		t.Helper()
		h.clock.Set(time.Date(2026, 6, day, 10, 0, second, 0, time.UTC))
		req := api.PageviewRequest{SiteID: site, URL: "https://example.com/", UserAgent: chromeUA, VisitorID: visitor}
		var err error
		if event != "" {
			_, err = c.CustomEvent(ctx, api.CustomEventRequest{PageviewRequest: req, EventName: event})
		} else {
			_, err = c.Pageview(ctx, req)
		}
		if err != nil {
			t.Fatal(err)
		}
		sent++
	}
	for i, v := range []string{"p1", "p2", "p3", "p4", "p5", "p6"} {
		send(6, i, v, "")
	}
	send(6, 10, "p1", "signup")
	for i, v := range []string{"c1", "c2", "c3"} {
		send(8, i, v, "")
	}
	send(8, 10, "c1", "signup")
	h.waitCount(int64(sent), "SELECT count() FROM events WHERE site_id = ?", site)
	if _, err := c.CreateGoal(ctx, api.GoalRequest{SiteID: site, GoalName: "Signup", GoalType: "custom_event", EventName: "signup"}); err != nil {
		t.Fatal(err)
	}
	res, err := c.Conversions(ctx, client.StatsParams{SiteID: site, DateFrom: "2026-06-08", DateTo: "2026-06-09", Timezone: "UTC"})
	if err != nil {
		t.Fatal(err)
	}
	g := res.Data[0]
	if g.ConversionRate != 33.3 || g.PreviousPeriodRate != 16.7 || g.ChangePercent == nil || *g.ChangePercent != 100 {
		t.Errorf("rate %v, previous %v, change %v; want 33.3, 16.7 and +100", g.ConversionRate, g.PreviousPeriodRate, g.ChangePercent)
	}
}

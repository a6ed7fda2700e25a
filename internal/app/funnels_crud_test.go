package app_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/google/uuid"

	"github.com/tally-analytics/tally/internal/accounts"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/pkg/api"
	"github.com/tally-analytics/tally/pkg/client"
)

var twoSteps = []api.FunnelStep{{Type: "pageview", PagePath: "/pricing"}, {Type: "custom_event", EventName: "Signup"}}

func TestFunnelsCRUD(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	c := h.client(h.key)
	site := string(h.siteID)

	steps := []api.FunnelStep{{Type: "pageview", PagePath: "/blog/**"}, {Type: "pageview", PagePath: "/pricing"},
		{Type: "custom_event", EventName: "Signup", Props: map[string]string{"plan": "pro"}}}
	f, err := c.CreateFunnel(ctx, api.FunnelRequest{SiteID: site, Name: "  Blog to signup ", Steps: steps})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := uuid.Parse(f.FunnelID); err != nil {
		t.Errorf("funnel_id %q is not a UUID", f.FunnelID)
	}
	// the name trimmed, the window the default day
	want := api.Funnel{FunnelID: f.FunnelID, SiteID: site, Name: "Blog to signup", Steps: steps, WindowSeconds: 86400}
	if diff := cmp.Diff(want, f, cmpopts.IgnoreFields(api.Funnel{}, "CreatedAt")); diff != "" || f.CreatedAt.IsZero() {
		t.Errorf("created funnel (-want +got):\n%s", diff)
	}
	week := int64(7 * 86400)
	second, err := c.CreateFunnel(ctx, api.FunnelRequest{SiteID: site, Name: "Second", Steps: twoSteps, WindowSeconds: &week})
	if err != nil || second.WindowSeconds != week {
		t.Fatalf("second funnel: %+v, %v", second, err)
	}
	list, err := c.Funnels(ctx, site)
	if err != nil || len(list) != 2 || list[0].FunnelID != f.FunnelID || list[1].FunnelID != second.FunnelID {
		t.Errorf("list = %+v, %v; want both, oldest first", list, err)
	}
	got, err := c.Funnel(ctx, f.FunnelID)
	if diff := cmp.Diff(f, got); err != nil || diff != "" {
		t.Errorf("get (-created +got): %v\n%s", err, diff)
	}

	// PUT replaces everything: the window left out is the default again
	updated, err := c.UpdateFunnel(ctx, second.FunnelID, api.FunnelRequest{Name: "Renamed", Steps: steps[:2]})
	if err != nil || updated.Name != "Renamed" || len(updated.Steps) != 2 || updated.WindowSeconds != 86400 || updated.SiteID != site {
		t.Errorf("update = %+v, %v", updated, err)
	}
	_, err = c.UpdateFunnel(ctx, second.FunnelID, api.FunnelRequest{SiteID: "another", Name: "x", Steps: twoSteps})
	wantError(t, err, http.StatusBadRequest, "invalid_request", "site_id")

	if err := c.DeleteFunnel(ctx, second.FunnelID); err != nil {
		t.Fatal(err)
	}
	_, err = c.Funnel(ctx, second.FunnelID)
	wantError(t, err, http.StatusNotFound, "funnel_not_found", "")
	wantError(t, c.DeleteFunnel(ctx, second.FunnelID), http.StatusNotFound, "funnel_not_found", "")
	_, err = c.UpdateFunnel(ctx, second.FunnelID, api.FunnelRequest{Name: "x", Steps: twoSteps})
	wantError(t, err, http.StatusNotFound, "funnel_not_found", "")
	_, err = c.Funnel(ctx, "not-a-uuid")
	wantError(t, err, http.StatusNotFound, "funnel_not_found", "")
	_, err = c.Funnel(ctx, uuid.NewString())
	wantError(t, err, http.StatusNotFound, "funnel_not_found", "")
	_, err = c.Funnels(ctx, "")
	wantError(t, err, http.StatusBadRequest, "invalid_request", "site_id")

	// the report of a funnel of another of our sites is not this site's
	other, err := h.app.Accounts.CreateSite(ctx, accounts.NewSite{OwnerEmail: h.email, Domain: "other.example"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.FunnelReport(ctx, client.StatsParams{SiteID: string(other.ID), FunnelID: f.FunnelID, DateFrom: "2026-06-01", DateTo: "2026-06-02"})
	wantError(t, err, http.StatusNotFound, "funnel_not_found", "")

	// a site has at most 50 funnels
	for i := len(list) - 1; i < 50; i++ {
		if _, err := c.CreateFunnel(ctx, api.FunnelRequest{SiteID: site, Name: "n", Steps: twoSteps}); err != nil {
			t.Fatal(err)
		}
	}
	_, err = c.CreateFunnel(ctx, api.FunnelRequest{SiteID: site, Name: "51st", Steps: twoSteps})
	wantError(t, err, http.StatusConflict, "too_many_funnels", "site_id")

	// deleting the site deletes its funnels
	if _, err := c.DeleteSite(ctx, site); err != nil {
		t.Fatal(err)
	}
	var n int64
	if err := h.app.PG.QueryRow(ctx, "SELECT count(*) FROM funnels WHERE site_id = $1", site).Scan(&n); err != nil || n != 0 {
		t.Errorf("%d funnels left after the site's deletion (%v)", n, err)
	}
}

// Every rule of a funnel definition is a 400 invalid_request naming its field.
func TestFunnelValidation(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	c := h.client(h.key)
	site := string(h.siteID)
	pv := func(path string) api.FunnelStep { return api.FunnelStep{Type: "pageview", PagePath: path} }
	ev := func(name string, props map[string]string) api.FunnelStep {
		return api.FunnelStep{Type: "custom_event", EventName: name, Props: props}
	}
	window := func(w int64) *int64 { return &w }
	tooManyProps := map[string]string{}
	for i := range 11 {
		tooManyProps["k"+itoa(i)] = "v"
	}
	for name, tc := range map[string]struct {
		req   api.FunnelRequest
		field string
	}{
		"no site":                 {api.FunnelRequest{Name: "x", Steps: twoSteps}, "site_id"},
		"no name":                 {api.FunnelRequest{SiteID: site, Name: "  ", Steps: twoSteps}, "name"},
		"long name":               {api.FunnelRequest{SiteID: site, Name: strings.Repeat("n", 121), Steps: twoSteps}, "name"},
		"no steps":                {api.FunnelRequest{SiteID: site, Name: "x"}, "steps"},
		"one step":                {api.FunnelRequest{SiteID: site, Name: "x", Steps: twoSteps[:1]}, "steps"},
		"nine steps":              {api.FunnelRequest{SiteID: site, Name: "x", Steps: []api.FunnelStep{pv("/1"), pv("/2"), pv("/3"), pv("/4"), pv("/5"), pv("/6"), pv("/7"), pv("/8"), pv("/9")}}, "steps"},
		"bad type":                {api.FunnelRequest{SiteID: site, Name: "x", Steps: []api.FunnelStep{pv("/a"), {Type: "click"}}}, "steps.1.type"},
		"pageview without path":   {api.FunnelRequest{SiteID: site, Name: "x", Steps: []api.FunnelStep{pv("/a"), pv("")}}, "steps.1.page_path"},
		"relative path":           {api.FunnelRequest{SiteID: site, Name: "x", Steps: []api.FunnelStep{pv("pricing"), pv("/a")}}, "steps.0.page_path"},
		"path with query":         {api.FunnelRequest{SiteID: site, Name: "x", Steps: []api.FunnelStep{pv("/a"), pv("/b?x=1")}}, "steps.1.page_path"},
		"triple star":             {api.FunnelRequest{SiteID: site, Name: "x", Steps: []api.FunnelStep{pv("/a"), pv("/b/***")}}, "steps.1.page_path"},
		"pageview with event":     {api.FunnelRequest{SiteID: site, Name: "x", Steps: []api.FunnelStep{pv("/a"), {Type: "pageview", PagePath: "/b", EventName: "e"}}}, "steps.1.event_name"},
		"pageview with props":     {api.FunnelRequest{SiteID: site, Name: "x", Steps: []api.FunnelStep{pv("/a"), {Type: "pageview", PagePath: "/b", Props: map[string]string{"a": "b"}}}}, "steps.1.props"},
		"event without name":      {api.FunnelRequest{SiteID: site, Name: "x", Steps: []api.FunnelStep{pv("/a"), ev("", nil)}}, "steps.1.event_name"},
		"event named pageview":    {api.FunnelRequest{SiteID: site, Name: "x", Steps: []api.FunnelStep{pv("/a"), ev("pageview", nil)}}, "steps.1.event_name"},
		"long event name":         {api.FunnelRequest{SiteID: site, Name: "x", Steps: []api.FunnelStep{pv("/a"), ev(strings.Repeat("e", 121), nil)}}, "steps.1.event_name"},
		"event with path":         {api.FunnelRequest{SiteID: site, Name: "x", Steps: []api.FunnelStep{pv("/a"), {Type: "custom_event", EventName: "e", PagePath: "/b"}}}, "steps.1.page_path"},
		"eleven props":            {api.FunnelRequest{SiteID: site, Name: "x", Steps: []api.FunnelStep{pv("/a"), ev("e", tooManyProps)}}, "steps.1.props"},
		"empty prop key":          {api.FunnelRequest{SiteID: site, Name: "x", Steps: []api.FunnelStep{pv("/a"), ev("e", map[string]string{"": "v"})}}, "steps.1.props"},
		"long prop key":           {api.FunnelRequest{SiteID: site, Name: "x", Steps: []api.FunnelStep{pv("/a"), ev("e", map[string]string{strings.Repeat("k", 51): "v"})}}, "steps.1.props"},
		"long prop value":         {api.FunnelRequest{SiteID: site, Name: "x", Steps: []api.FunnelStep{pv("/a"), ev("e", map[string]string{"plan": strings.Repeat("v", 2001)})}}, "steps.1.props.plan"},
		"zero window":             {api.FunnelRequest{SiteID: site, Name: "x", Steps: twoSteps, WindowSeconds: window(0)}, "window_seconds"},
		"negative window":         {api.FunnelRequest{SiteID: site, Name: "x", Steps: twoSteps, WindowSeconds: window(-5)}, "window_seconds"},
		"window over thirty days": {api.FunnelRequest{SiteID: site, Name: "x", Steps: twoSteps, WindowSeconds: window(30*86400 + 1)}, "window_seconds"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := c.CreateFunnel(ctx, tc.req)
			wantError(t, err, http.StatusBadRequest, "invalid_request", tc.field)
		})
	}
	// the limits themselves pass
	edge := api.FunnelRequest{SiteID: site, Name: strings.Repeat("n", 120), WindowSeconds: window(30 * 86400),
		Steps: []api.FunnelStep{pv("/1"), pv("/2"), pv("/3"), pv("/4"), pv("/5"), pv("/6"), pv("/7"),
			ev(strings.Repeat("e", 120), map[string]string{strings.Repeat("k", 50): strings.Repeat("v", 2000)})}}
	f, err := c.CreateFunnel(ctx, edge)
	if err != nil {
		t.Fatalf("a funnel at every limit: %v", err)
	}
	// and an eight-step funnel's report runs
	if _, err := c.FunnelReport(ctx, client.StatsParams{SiteID: site, FunnelID: f.FunnelID, DateFrom: "2026-06-01", DateTo: "2026-06-30"}); err != nil {
		t.Errorf("report of eight steps: %v", err)
	}
	// the same rules on update
	_, err = c.UpdateFunnel(ctx, f.FunnelID, api.FunnelRequest{Name: "x", Steps: []api.FunnelStep{pv("/a"), pv("b")}})
	wantError(t, err, http.StatusBadRequest, "invalid_request", "steps.1.page_path")
	// fields of the wrong JSON type
	for body, field := range map[string]string{
		`{"site_id":"` + site + `","name":"x","steps":"no"}`:                                                       "steps",
		`{"site_id":"` + site + `","name":"x","steps":[],"window_seconds":"60"}`:                                   "window_seconds",
		`{"site_id":"` + site + `","name":"x","steps":[{"type":"custom_event","event_name":"e","props":{"n":3}}]}`: "steps.0.props.n",
		`{"site_id":"` + site + `","name":"x","steps":[{"type":"pageview","page_path":"/a"},` +
			`{"type":"custom_event","event_name":"e","props":{"plan":"pro","n":[3]}}]}`: "steps.1.props.n",
		`{"site_id":"` + site + `","name":"x","steps":[{"type":"pageview","page_path":"/a"},{"type":7}]}`: "steps.1.type",
	} {
		status, e := post(t, h, "/api/v1/funnels", h.key, body)
		if status != 400 || e.Error.Code != "invalid_request" || e.Error.Field != field {
			t.Errorf("%s: %d %+v, want 400 naming %s", body, status, e.Error, field)
		}
	}
}

// Reads need stats:read, writes goals:manage and the owner or admin role;
// another account's funnels and sites do not exist.
func TestFunnelPermissions(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	site := string(h.siteID)
	ours, err := h.client(h.key).CreateFunnel(ctx, api.FunnelRequest{SiteID: site, Name: "Ours", Steps: twoSteps})
	if err != nil {
		t.Fatal(err)
	}
	readOnly, _ := h.app.Accounts.CreateKey(ctx, accounts.NewKey{OwnerEmail: h.email, Name: "ro", Scopes: []model.Scope{model.ScopeStatsRead}})
	writeOnly, _ := h.app.Accounts.CreateKey(ctx, accounts.NewKey{OwnerEmail: h.email, Name: "wo", Scopes: []model.Scope{model.ScopeGoalsManage}})
	sitesOnly, _ := h.app.Accounts.CreateKey(ctx, accounts.NewKey{OwnerEmail: h.email, Name: "so", Scopes: []model.Scope{model.ScopeSitesManage}})
	other, _ := h.app.Accounts.CreateUser(ctx, accounts.NewUser{Email: "viewer@example.com", Password: password, Name: "V"})
	otherSite, _ := h.app.Accounts.CreateSite(ctx, accounts.NewSite{OwnerEmail: other.Email, Domain: "other.com"})
	viewerKey, _ := h.app.Accounts.CreateKey(ctx, accounts.NewKey{OwnerEmail: other.Email, Name: "v"})
	theirs, err := h.client(viewerKey.Secret).CreateFunnel(ctx, api.FunnelRequest{SiteID: string(otherSite.ID), Name: "Theirs", Steps: twoSteps})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.app.Accounts.AddMember(ctx, h.siteID, other.Email, model.RoleViewer); err != nil {
		t.Fatal(err)
	}
	newFunnel := api.FunnelRequest{SiteID: site, Name: "New", Steps: twoSteps}
	report := client.StatsParams{SiteID: site, FunnelID: ours.FunnelID, DateFrom: "2026-06-01", DateTo: "2026-06-02"}

	ro := h.client(readOnly.Secret) // stats:read: reads, no writes
	_, err = ro.CreateFunnel(ctx, newFunnel)
	wantError(t, err, http.StatusForbidden, "forbidden", "")
	_, err = ro.UpdateFunnel(ctx, ours.FunnelID, newFunnel)
	wantError(t, err, http.StatusForbidden, "forbidden", "")
	wantError(t, ro.DeleteFunnel(ctx, ours.FunnelID), http.StatusForbidden, "forbidden", "")
	if _, err := ro.Funnels(ctx, site); err != nil {
		t.Errorf("stats:read listing funnels: %v", err)
	}
	if _, err := ro.FunnelReport(ctx, report); err != nil {
		t.Errorf("stats:read reading the report: %v", err)
	}
	wo := h.client(writeOnly.Secret) // goals:manage: writes, no reads
	_, err = wo.Funnels(ctx, site)
	wantError(t, err, http.StatusForbidden, "forbidden", "")
	_, err = wo.Funnel(ctx, ours.FunnelID)
	wantError(t, err, http.StatusForbidden, "forbidden", "")
	_, err = wo.FunnelReport(ctx, report)
	wantError(t, err, http.StatusForbidden, "forbidden", "")
	if _, err := wo.CreateFunnel(ctx, newFunnel); err != nil {
		t.Errorf("goals:manage creating a funnel: %v", err)
	}
	so := h.client(sitesOnly.Secret) // sites:manage: neither
	_, err = so.CreateFunnel(ctx, newFunnel)
	wantError(t, err, http.StatusForbidden, "forbidden", "")
	_, err = so.Funnels(ctx, site)
	wantError(t, err, http.StatusForbidden, "forbidden", "")

	v := h.client(viewerKey.Secret) // a viewer of our site: reads only
	_, err = v.CreateFunnel(ctx, newFunnel)
	wantError(t, err, http.StatusForbidden, "forbidden", "")
	_, err = v.UpdateFunnel(ctx, ours.FunnelID, newFunnel)
	wantError(t, err, http.StatusForbidden, "forbidden", "")
	wantError(t, v.DeleteFunnel(ctx, ours.FunnelID), http.StatusForbidden, "forbidden", "")
	if _, err := v.Funnel(ctx, ours.FunnelID); err != nil {
		t.Errorf("viewer reading a funnel: %v", err)
	}
	if _, err := v.FunnelReport(ctx, report); err != nil {
		t.Errorf("viewer reading the report: %v", err)
	}

	// another account's site and funnel do not exist for us
	owner := h.client(h.key)
	_, err = owner.CreateFunnel(ctx, api.FunnelRequest{SiteID: string(otherSite.ID), Name: "X", Steps: twoSteps})
	wantError(t, err, http.StatusNotFound, "site_not_found", "site_id")
	_, err = owner.Funnels(ctx, string(otherSite.ID))
	wantError(t, err, http.StatusNotFound, "site_not_found", "site_id")
	_, err = owner.Funnel(ctx, theirs.FunnelID)
	wantError(t, err, http.StatusNotFound, "funnel_not_found", "")
	_, err = owner.UpdateFunnel(ctx, theirs.FunnelID, api.FunnelRequest{Name: "X", Steps: twoSteps})
	wantError(t, err, http.StatusNotFound, "funnel_not_found", "")
	wantError(t, owner.DeleteFunnel(ctx, theirs.FunnelID), http.StatusNotFound, "funnel_not_found", "")
	_, err = owner.FunnelReport(ctx, client.StatsParams{SiteID: string(otherSite.ID), FunnelID: theirs.FunnelID, DateFrom: "2026-06-01", DateTo: "2026-06-02"})
	wantError(t, err, http.StatusNotFound, "site_not_found", "site_id")
	_, err = owner.FunnelReport(ctx, client.StatsParams{SiteID: site, FunnelID: theirs.FunnelID, DateFrom: "2026-06-01", DateTo: "2026-06-02"})
	wantError(t, err, http.StatusNotFound, "funnel_not_found", "")
	// and theirs is untouched
	if got, err := h.client(viewerKey.Secret).Funnel(ctx, theirs.FunnelID); err != nil || got.Name != "Theirs" {
		t.Errorf("their funnel after the attempts: %+v, %v", got, err)
	}
}

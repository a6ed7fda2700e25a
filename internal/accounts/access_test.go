package accounts

import (
	"context"
	"errors"
	"net/netip"
	"testing"
	"time"

	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/model"
)

// roleStore answers a role, or down while Postgres is unreachable, and
// counts how often it was asked.
type roleStore struct {
	role  model.Role
	down  error
	calls int
}

func (s *roleStore) SiteByID(context.Context, model.SiteID) (model.Site, error) {
	return model.Site{}, s.down
}
func (s *roleStore) MemberRole(context.Context, model.SiteID, model.UserID) (model.Role, error) {
	s.calls++
	return s.role, s.down
}

// versions is the shared access version, or an error while Redis is down.
type versions struct {
	v   int64
	err error
}

func (v *versions) Version(context.Context) (int64, error) { return v.v, v.err }

// A cached role holds while the access version does; a bump or a version
// that cannot be read sends the next lookup to the store (fail closed).
func TestAccessFollowsTheVersion(t *testing.T) {
	now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	store, ver := &roleStore{role: model.RoleAdmin}, &versions{v: 7}
	a := NewAccess(store, ver, func() time.Time { return now }, nil)
	ctx := context.Background()
	role := func() model.Role {
		t.Helper()
		r, err := a.Role(ctx, "u1", "site1")
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	role()
	role()
	if store.calls != 1 {
		t.Fatalf("%d store calls for two lookups under one version, want 1", store.calls)
	}
	store.role, ver.v = model.RoleViewer, 8 // demoted, and bumped
	if r := role(); r != model.RoleViewer || store.calls != 2 {
		t.Errorf("after a bump: %q after %d calls, want viewer from the store", r, store.calls)
	}
	ver.err = errors.New("redis: connection refused")
	role()
	role()
	if store.calls != 4 {
		t.Errorf("%d store calls with the version unreadable, want every lookup to ask (4)", store.calls)
	}
}

// While Postgres is down, a role seen before still answers, unless an
// access change was announced since it was loaded: a member removed, then
// Postgres gone, must not keep the role.
func TestStaleRoleOnlyWhileNothingChanged(t *testing.T) {
	now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	store, ver := &roleStore{role: model.RoleAdmin}, &versions{v: 7}
	a := NewAccess(store, ver, func() time.Time { return now }, nil)
	ctx := context.Background()
	if _, err := a.Role(ctx, "u1", "site1"); err != nil {
		t.Fatal(err)
	}
	store.down = errors.New("dial tcp: connection refused")
	now = now.Add(time.Hour) // past the cache's own lifetime
	if r, err := a.Role(ctx, "u1", "site1"); err != nil || r != model.RoleAdmin {
		t.Errorf("Postgres down, nothing changed: %q, %v; want the role seen before", r, err)
	}
	ver.v = 8 // the member removed, or demoted
	if r, err := a.Role(ctx, "u1", "site1"); err == nil {
		t.Errorf("Postgres down after an access change: %q; want an error", r)
	}
}

// Every action has its rule, and the guard answers each refusal the way the
// README's table says.
func TestGuardRules(t *testing.T) {
	for a := ReadStats; a <= ManageRevenue; a++ {
		if _, ok := rules[a]; !ok {
			t.Errorf("action %d has no rule", a)
		}
	}
	now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	store := &roleStore{role: model.RoleViewer}
	g := NewAccess(store, &versions{}, func() time.Time { return now }, nil)
	ctx := context.Background()
	viewer := auth.Principal{UserID: "u1", Scopes: model.AllScopes}
	for _, tc := range []struct {
		p    auth.Principal
		a    Action
		code string
	}{
		{viewer, ReadStats, ""},
		{viewer, SendEvents, "forbidden"},
		{viewer, DeleteSite, "forbidden"},
		{auth.Principal{UserID: "u1", Scopes: []model.Scope{model.ScopeEventsWrite}}, ReadStats, "forbidden"},
	} {
		_, _, err := g.Check(ctx, tc.p, "site1", tc.a)
		if got := codeOf(err); got != tc.code {
			t.Errorf("action %d: code %q (%v), want %q", tc.a, got, err, tc.code)
		}
	}
	store.role = ""
	for a, code := range map[Action]string{ReadStats: "site_not_found", SendEvents: "invalid_site_id", ManageSite: "site_not_found"} {
		if _, _, err := g.Check(ctx, viewer, "not\x00text", a); codeOf(err) != code {
			t.Errorf("action %d on a site id that is not text: %v, want %s", a, err, code)
		}
	}
}

// codeOf is the error code a client would see ("" for no error).
func codeOf(err error) string {
	var e *errs.Error
	if errors.As(err, &e) {
		return e.Code
	}
	if err != nil {
		return "not an errs.Error"
	}
	return ""
}

// shieldOf is a model.Shield that excludes one page.
type shieldOf string

func (s shieldOf) Excludes(pathname, _ string, _ netip.Addr) bool { return pathname == string(s) }

// siteOnce is a store of one site with exclusions.
type siteOnce struct{ roleStore }

func (s *siteOnce) SiteByID(context.Context, model.SiteID) (model.Site, error) {
	s.calls++
	return model.Site{ID: "site1", Exclusions: model.Exclusions{Pages: []string{"/admin"}}}, nil
}

// A site's exclusions are compiled as it enters the cache, once per load,
// not on every lookup; a site reloaded after a change is compiled anew.
func TestAccessCompilesExclusionsOncePerLoad(t *testing.T) {
	now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	store, ver := &siteOnce{}, &versions{v: 7}
	compiled := 0
	a := NewAccess(store, ver, func() time.Time { return now }, func(e model.Exclusions) model.Shield {
		compiled++
		return shieldOf(e.Pages[0])
	})
	ctx := context.Background()
	for range 3 {
		site, err := a.Site(ctx, "site1")
		if err != nil || site.Shield == nil || !site.Shield.Excludes("/admin", "", netip.Addr{}) {
			t.Fatalf("site %+v, %v; want it with its shield", site, err)
		}
	}
	if compiled != 1 || store.calls != 1 {
		t.Errorf("three lookups: %d loads, %d compilations; want 1 and 1", store.calls, compiled)
	}
	ver.v = 8
	if _, err := a.Site(ctx, "site1"); err != nil || compiled != 2 {
		t.Errorf("after a change: %d compilations, %v; want 2", compiled, err)
	}
}

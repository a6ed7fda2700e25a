package accounts

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/tally-analytics/tally/internal/model"
)

// roleStore answers a role and counts how often it was asked.
type roleStore struct {
	role  model.Role
	calls int
}

func (s *roleStore) SiteByID(context.Context, model.SiteID) (model.Site, error) {
	return model.Site{}, nil
}
func (s *roleStore) MemberRole(context.Context, model.SiteID, model.UserID) (model.Role, error) {
	s.calls++
	return s.role, nil
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
	a := NewAccess(store, ver, func() time.Time { return now })
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

package accounts

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/model"
)

func TestNormalizeDomain(t *testing.T) {
	for in, want := range map[string]string{
		"Example.COM.": "example.com", " shop.example.org ": "shop.example.org", "a_b.example.com": "a_b.example.com",
		"localhost": "localhost", "127.0.0.1": "127.0.0.1", "bücher.example": "xn--bcher-kva.example",
		"XN--BCHER-KVA.example": "xn--bcher-kva.example",
	} {
		if got, err := NormalizeDomain(in); err != nil || got != want {
			t.Errorf("NormalizeDomain(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "http://example.com", "example.com/path", "a@b.com", "-a.com", "a..com", "\ufffd.com",
		"\xff.com", "a\x00b.com", "ex ample.com", "exa%mple.com", "☃\u200d.com"} {
		if got, err := NormalizeDomain(in); err == nil {
			t.Errorf("NormalizeDomain(%q) = %q, want an error", in, got)
		}
	}
}

// siteStore holds one site its one user owns, for the Sites service.
type siteStore struct {
	Store // the methods not used here are not implemented
	site  model.Site
	gone  bool
}

func (s *siteStore) MemberRole(context.Context, model.SiteID, model.UserID) (model.Role, error) {
	return model.RoleOwner, nil
}
func (s *siteStore) SiteByID(context.Context, model.SiteID) (model.Site, error) { return s.site, nil }
func (s *siteStore) Memberships(context.Context, model.UserID) ([]model.Membership, error) {
	return nil, nil
}
func (s *siteStore) UpdateSite(_ context.Context, site model.Site) (model.Site, error) {
	s.site = site
	return site, nil
}
func (s *siteStore) DeleteSite(context.Context, model.SiteID) error          { s.gone = true; return nil }
func (s *siteStore) HasPayments(context.Context, model.SiteID) (bool, error) { return false, nil }

// redisDown is the access version while Redis is unreachable.
type redisDown struct{}

func (redisDown) Version(context.Context) (int64, error) {
	return 0, errors.New("redis: connection refused")
}
func (redisDown) Bump(context.Context) error { return errors.New("redis: connection refused") }

// A site deleted while Redis is down is deleted, and the owner is told so:
// Postgres announces the change to every server without Redis.
func TestSiteDeletedWhileRedisIsDown(t *testing.T) {
	st := &siteStore{site: model.Site{ID: "s1", Domain: "example.com", Timezone: "UTC", BaseCurrency: "USD"}}
	sites := NewSites(NewService(st, nil, redisDown{}, "test", time.Now), st, nil)
	err := sites.Delete(context.Background(), auth.Principal{UserID: "u1", Scopes: model.AllScopes}, "s1")
	if err != nil || !st.gone {
		t.Errorf("deleted %v, %v; want deleted and no error", st.gone, err)
	}
}

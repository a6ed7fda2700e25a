package sharing

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tally-analytics/tally/internal/accounts"
	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/model"
)

// memStore keeps links in memory, by hash, and counts hash lookups.
type memStore struct {
	links   map[string]model.SharedLink
	lookups int
}

func (m *memStore) CreateSharedLink(_ context.Context, l model.SharedLink, hash []byte, limit int) (model.SharedLink, error) {
	n := 0
	for _, x := range m.links {
		if x.SiteID == l.SiteID {
			n++
		}
	}
	if n >= limit {
		return model.SharedLink{}, errs.ErrConflict
	}
	l.ID = model.SharedLinkID(strings.Repeat("i", len(m.links)+1))
	m.links[string(hash)] = l
	return l, nil
}

func (m *memStore) SharedLinksBySite(_ context.Context, site model.SiteID) ([]model.SharedLink, error) {
	var out []model.SharedLink
	for _, l := range m.links {
		if l.SiteID == site {
			out = append(out, l)
		}
	}
	return out, nil
}

func (m *memStore) SharedLinkByHash(_ context.Context, hash []byte) (model.SharedLink, error) {
	m.lookups++
	if l, ok := m.links[string(hash)]; ok {
		return l, nil
	}
	return model.SharedLink{}, errs.ErrNotFound
}

func (m *memStore) SetSharedLinkPassword(_ context.Context, site model.SiteID, id model.SharedLinkID, hash string) (model.SharedLink, error) {
	for h, l := range m.links {
		if l.ID == id && l.SiteID == site {
			l.PasswordHash = hash
			m.links[h] = l
			return l, nil
		}
	}
	return model.SharedLink{}, errs.ErrNotFound
}

func (m *memStore) DeleteSharedLink(_ context.Context, site model.SiteID, id model.SharedLinkID) error {
	for h, l := range m.links {
		if l.ID == id && l.SiteID == site {
			delete(m.links, h)
			return nil
		}
	}
	return errs.ErrNotFound
}

// writers lets the user "owner" manage the site "s1"; the rest is not found.
type writers struct{}

func (writers) Check(_ context.Context, p auth.Principal, id model.SiteID, a accounts.Action) (model.Site, model.Role, error) {
	switch {
	case id != "s1":
		return model.Site{}, "", errs.E(errs.NotFound, "site_not_found", "site not found")
	case p.SharedSite == "s1" && a == accounts.ReadStats, p.UserID == "owner":
		return model.Site{ID: "s1"}, model.RoleOwner, nil
	}
	return model.Site{}, "", errs.E(errs.Forbidden, "forbidden", "no")
}

func TestCreateOpenDelete(t *testing.T) {
	store := &memStore{links: map[string]model.SharedLink{}}
	s := newService(store, time.Now)
	ctx := context.Background()
	owner := auth.Principal{UserID: "owner"}

	for _, label := range []string{"", "   ", strings.Repeat("é", MaxLabelLen+1), "tab\there"} {
		if _, err := s.Create(ctx, owner, "s1", Input{Label: label}); errs.KindOf(err) != errs.Invalid {
			t.Errorf("label %q: %v, want invalid", label, err)
		}
	}
	if _, err := s.Create(ctx, auth.Principal{UserID: "viewer"}, "s1", Input{Label: "x"}); errs.KindOf(err) != errs.Forbidden {
		t.Errorf("a viewer creating: %v, want forbidden", err)
	}
	c, err := s.Create(ctx, owner, "s1", Input{Label: "  Investors  ", ShowRevenue: true})
	if err != nil {
		t.Fatal(err)
	}
	// 32 bytes in base64url without padding: ceil(32*8/6) = 43 characters
	if len(c.Token) != 43 || strings.ContainsAny(c.Token, "+/=") || c.Link.Label != "Investors" || !c.Link.ShowRevenue || c.Link.CreatedBy != "owner" {
		t.Errorf("created %+v with token %q", c.Link, c.Token)
	}
	for h := range store.links {
		if bytes.Contains([]byte(h), []byte(c.Token)) || !bytes.Equal([]byte(h), auth.HashKey(c.Token)) {
			t.Error("the store holds something else than the token's SHA-256")
		}
	}
	if got := URL("https://stats.example/", c.Token); got != "https://stats.example/share/"+c.Token {
		t.Errorf("URL = %q", got)
	}

	o, err := s.Open(ctx, c.Token, "")
	if err != nil || o.Link.ID != c.Link.ID || o.Site.ID != "s1" || o.Principal.SharedSite != "s1" || o.Principal.UserID != "" {
		t.Fatalf("Open = %+v, %v", o, err)
	}
	before := store.lookups
	for _, bad := range []string{"", "short", c.Token + "x", strings.Repeat("*", 43)} {
		if _, err := s.Open(ctx, bad, ""); !isNotFound(err) {
			t.Errorf("Open(%q): %v, want shared_link_not_found", bad, err)
		}
	}
	if store.lookups != before {
		t.Error("a malformed token was looked up")
	}
	other, _ := auth.NewLinkToken()
	if _, err := s.Open(ctx, other, ""); !isNotFound(err) {
		t.Errorf("an unknown token: %v", err)
	}

	// the limit: 1 link exists, 19 more fit, the 21st is a 400
	for i := range MaxPerSite - 1 {
		if _, err := s.Create(ctx, owner, "s1", Input{Label: "l"}); err != nil {
			t.Fatalf("link %d: %v", i+2, err)
		}
	}
	_, err = s.Create(ctx, owner, "s1", Input{Label: "one too many"})
	var e *errs.Error
	if !errors.As(err, &e) || e.Kind != errs.Conflict || e.Code != "too_many_shared_links" {
		t.Errorf("link %d: %v, want 409 too_many_shared_links", MaxPerSite+1, err)
	}

	if err := s.Delete(ctx, owner, "s1", c.Link.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Open(ctx, c.Token, ""); !isNotFound(err) {
		t.Errorf("a deleted link opens: %v", err)
	}
	if err := s.Delete(ctx, owner, "s1", c.Link.ID); !isNotFound(err) {
		t.Errorf("deleting twice: %v", err)
	}
}

// newService is a service over store with a real argon2id hasher, signing
// accesses with a test secret by the clock now.
func newService(store Store, now func() time.Time) *Service {
	return NewService(store, writers{}, auth.NewPasswords(1), "a test secret of at least 32 characters", now)
}

func isNotFound(err error) bool {
	var e *errs.Error
	return errors.As(err, &e) && e.Kind == errs.NotFound && e.Code == "shared_link_not_found"
}

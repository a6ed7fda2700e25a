package pgstore_test

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/model"
)

// Shared links: found by their hash only, listed per site, at most limit
// per site even when created at once, deleted by their own site only, and
// gone with their site.
func TestSharedLinks(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	u := ownerOf(t, s, "site1", "site2")
	hash := bytes.Repeat([]byte{7}, 32)
	l, err := s.CreateSharedLink(ctx, model.SharedLink{SiteID: "site1", Label: "public", ShowRevenue: true, CreatedBy: u.ID}, hash, 3)
	if err != nil {
		t.Fatal(err)
	}
	if l.ID == "" || l.SiteID != "site1" || l.Label != "public" || !l.ShowRevenue || l.CreatedBy != u.ID || l.CreatedAt.IsZero() {
		t.Errorf("created %+v", l)
	}
	if got, err := s.SharedLinkByHash(ctx, hash); err != nil || got != l {
		t.Errorf("SharedLinkByHash = %+v, %v; want %+v", got, err, l)
	}
	if _, err := s.SharedLinkByHash(ctx, bytes.Repeat([]byte{8}, 32)); !errors.Is(err, errs.ErrNotFound) {
		t.Errorf("an unknown hash: %v, want ErrNotFound", err)
	}

	// three at most, however many are sent at once: 1 exists, 2 more pass
	passed, full := atOnce(t, 5, errs.ErrConflict, func(i int) error {
		_, err := s.CreateSharedLink(ctx, model.SharedLink{SiteID: "site1", Label: "x"}, bytes.Repeat([]byte{byte(10 + i)}, 32), 3)
		return err
	})
	if passed != 2 || full != 3 {
		t.Errorf("five concurrent creations beside one link, limit 3: %d passed, %d refused; want 2 and 3", passed, full)
	}
	list, err := s.SharedLinksBySite(ctx, "site1")
	if err != nil || len(list) != 3 || list[0].ID != l.ID || list[1].CreatedBy != "" {
		t.Errorf("SharedLinksBySite = %+v, %v", list, err)
	}

	// a link is deleted through its own site only
	if err := s.DeleteSharedLink(ctx, "site2", l.ID); !errors.Is(err, errs.ErrNotFound) {
		t.Errorf("deleting through another site: %v, want ErrNotFound", err)
	}
	if err := s.DeleteSharedLink(ctx, "site1", "not-a-uuid"); !errors.Is(err, errs.ErrNotFound) {
		t.Errorf("deleting a malformed id: %v, want ErrNotFound", err)
	}
	if err := s.DeleteSharedLink(ctx, "site1", l.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SharedLinkByHash(ctx, hash); !errors.Is(err, errs.ErrNotFound) {
		t.Errorf("a deleted link: %v, want ErrNotFound", err)
	}
	// the site goes, its links with it
	if err := s.DeleteSite(ctx, "site1"); err != nil {
		t.Fatal(err)
	}
	if list, err := s.SharedLinksBySite(ctx, "site1"); err != nil || len(list) != 0 {
		t.Errorf("links of a deleted site: %+v, %v", list, err)
	}
	if _, err := s.CreateSharedLink(ctx, model.SharedLink{SiteID: "site1", Label: "x"}, bytes.Repeat([]byte{99}, 32), 3); !errors.Is(err, errs.ErrNotFound) {
		t.Errorf("a link of a deleted site: %v, want ErrNotFound", err)
	}
}

// A link's password hash: stored with the link or set later, read back
// with it, removed by "", and set through the link's own site only.
func TestSharedLinkPasswords(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	ownerOf(t, s, "site1", "site2")
	hash := bytes.Repeat([]byte{7}, 32)
	l, err := s.CreateSharedLink(ctx, model.SharedLink{SiteID: "site1", Label: "board", PasswordHash: "$argon2id$one"}, hash, 3)
	if err != nil || l.PasswordHash != "$argon2id$one" || !l.Protected() {
		t.Fatalf("created %+v, %v; want its password hash", l, err)
	}
	plain, err := s.CreateSharedLink(ctx, model.SharedLink{SiteID: "site1", Label: "plain"}, bytes.Repeat([]byte{8}, 32), 3)
	if err != nil || plain.Protected() {
		t.Fatalf("created %+v, %v; want no password", plain, err)
	}
	if got, err := s.SharedLinkByHash(ctx, hash); err != nil || got.PasswordHash != "$argon2id$one" {
		t.Errorf("SharedLinkByHash = %+v, %v; want the password hash", got, err)
	}

	changed, err := s.SetSharedLinkPassword(ctx, "site1", l.ID, "$argon2id$two")
	if err != nil || changed.ID != l.ID || changed.PasswordHash != "$argon2id$two" || changed.Label != "board" {
		t.Errorf("changed %+v, %v", changed, err)
	}
	for _, bad := range []struct {
		site model.SiteID
		id   model.SharedLinkID
	}{{"site2", l.ID}, {"site1", "not-a-uuid"}, {"site1", "00000000-0000-0000-0000-000000000000"}} {
		if _, err := s.SetSharedLinkPassword(ctx, bad.site, bad.id, "$argon2id$three"); !errors.Is(err, errs.ErrNotFound) {
			t.Errorf("setting the password of %s through %s: %v, want ErrNotFound", bad.id, bad.site, err)
		}
	}
	removed, err := s.SetSharedLinkPassword(ctx, "site1", l.ID, "")
	if err != nil || removed.Protected() {
		t.Errorf("removed %+v, %v; want no password", removed, err)
	}
	list, err := s.SharedLinksBySite(ctx, "site1")
	if err != nil || len(list) != 2 || list[0].Protected() || list[1].Protected() {
		t.Errorf("SharedLinksBySite = %+v, %v; want both without a password", list, err)
	}
}

// atOnce runs create n times at once (i from 0) and counts the creations
// that passed and those refused with full; any other error fails the test.
func atOnce(t *testing.T, n int, full error, create func(i int) error) (passed, refused int) {
	t.Helper()
	var wg sync.WaitGroup
	results := make(chan error, n)
	for i := range n {
		wg.Go(func() { results <- create(i) })
	}
	wg.Wait()
	close(results)
	for err := range results {
		switch {
		case err == nil:
			passed++
		case errors.Is(err, full):
			refused++
		default:
			t.Errorf("a concurrent creation: %v", err)
		}
	}
	return passed, refused
}

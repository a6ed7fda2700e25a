package sharing

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/model"
)

// testClock is a settable clock.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// A link's password: the accounts' rule (8 to 256 characters), kept as an
// argon2id hash; the link opens only with an access Unlock gave for its
// current password, until it expires; the access of one link opens no
// other; a link without a password needs none.
func TestPasswords(t *testing.T) {
	store := &memStore{links: map[string]model.SharedLink{}}
	clock := &testClock{now: time.Date(2026, 5, 8, 9, 0, 0, 0, time.UTC)}
	s := newService(store, clock.Now)
	ctx := context.Background()
	owner := auth.Principal{UserID: "owner"}

	for _, pw := range []string{"short", "1234567", strings.Repeat("x", 257), strings.Repeat("é", 257)} {
		_, err := s.Create(ctx, owner, "s1", Input{Label: "x", Password: pw})
		var e *errs.Error
		if !errors.As(err, &e) || e.Kind != errs.Invalid || e.Field != "password" {
			t.Errorf("a password of %d characters: %v, want invalid naming the field password", len([]rune(pw)), err)
		}
	}
	if len(store.links) != 0 {
		t.Fatalf("%d links made with bad passwords", len(store.links))
	}
	const secret = "correct horse battery"
	locked, err := s.Create(ctx, owner, "s1", Input{Label: "board", Password: secret})
	if err != nil {
		t.Fatal(err)
	}
	if !locked.Link.Protected() || !strings.HasPrefix(locked.Link.PasswordHash, "$argon2id$") || strings.Contains(locked.Link.PasswordHash, secret) {
		t.Fatalf("the link keeps %q, want an argon2id hash", locked.Link.PasswordHash)
	}
	open, err := s.Create(ctx, owner, "s1", Input{Label: "public"})
	if err != nil || open.Link.Protected() {
		t.Fatalf("a link without a password: %+v, %v", open.Link, err)
	}

	// without access, or with a forged one, the link is locked; a link without a password opens as ever
	for _, access := range []string{"", "x", "1.x", "99999999999.AAAA"} {
		if _, err := s.Open(ctx, locked.Token, access); !IsLocked(err) || errs.KindOf(err) != errs.Unauthenticated {
			t.Errorf("Open with access %q: %v, want locked", access, err)
		}
	}
	if _, err := s.Open(ctx, open.Token, ""); err != nil {
		t.Errorf("a link without a password: %v", err)
	}
	if a, err := s.Unlock(ctx, open.Token, "anything"); err != nil || a.Value != "" {
		t.Errorf("unlocking a link without a password: %+v, %v; want no access needed", a, err)
	}

	// a wrong password earns nothing; the right one an access that opens this link only
	if a, err := s.Unlock(ctx, locked.Token, "not the password"); errs.KindOf(err) != errs.Unauthenticated || a.Value != "" {
		t.Errorf("a wrong password: %+v, %v; want unauthenticated", a, err)
	}
	if _, err := s.Unlock(ctx, "no such token", secret); !isNotFound(err) {
		t.Errorf("unlocking an unknown token: %v", err)
	}
	access, err := s.Unlock(ctx, locked.Token, secret)
	if err != nil || access.Value == "" || !access.Expires.Equal(clock.Now().Add(AccessLifetime)) {
		t.Fatalf("the right password: %+v, %v", access, err)
	}
	if strings.Contains(access.Value, locked.Link.PasswordHash) || strings.Contains(access.Value, secret) {
		t.Error("the access holds the password or its hash")
	}
	if o, err := s.Open(ctx, locked.Token, access.Value); err != nil || o.Link.ID != locked.Link.ID {
		t.Fatalf("Open with the access: %+v, %v", o, err)
	}
	other, err := s.Create(ctx, owner, "s1", Input{Label: "other", Password: secret})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Open(ctx, other.Token, access.Value); !IsLocked(err) {
		t.Errorf("another link with the same password opens with this one's access: %v", err)
	}
	// a later expiry written in is no access: the signature covers it
	exp, sig, _ := strings.Cut(access.Value, ".")
	if _, err := s.Open(ctx, locked.Token, "9"+exp+"."+sig); !IsLocked(err) {
		t.Errorf("an access with its expiry changed opens the link: %v", err)
	}
	// another server with another secret does not honour it
	elsewhere := NewService(store, writers{}, auth.NewPasswords(1), "another secret of at least 32 characters", clock.Now)
	if _, err := elsewhere.Open(ctx, locked.Token, access.Value); !IsLocked(err) {
		t.Errorf("a server with another secret honours the access: %v", err)
	}

	// it expires
	clock.Advance(AccessLifetime - time.Second)
	if _, err := s.Open(ctx, locked.Token, access.Value); err != nil {
		t.Errorf("a second before its expiry: %v", err)
	}
	clock.Advance(time.Second)
	if _, err := s.Open(ctx, locked.Token, access.Value); !IsLocked(err) {
		t.Errorf("an expired access: %v", err)
	}
}

// Changing a link's password, even to the same one, ends every access given
// before; removing it opens the link to all; only a manager may, and only
// with a password of the rule.
func TestSetPassword(t *testing.T) {
	store := &memStore{links: map[string]model.SharedLink{}}
	s := newService(store, time.Now)
	ctx := context.Background()
	owner := auth.Principal{UserID: "owner"}
	const secret = "correct horse battery"
	c, err := s.Create(ctx, owner, "s1", Input{Label: "board", Password: secret})
	if err != nil {
		t.Fatal(err)
	}
	access, err := s.Unlock(ctx, c.Token, secret)
	if err != nil {
		t.Fatal(err)
	}

	if _, err := s.SetPassword(ctx, auth.Principal{UserID: "viewer"}, "s1", c.Link.ID, "another password"); errs.KindOf(err) != errs.Forbidden {
		t.Errorf("a viewer setting the password: %v, want forbidden", err)
	}
	for _, pw := range []string{"", "short"} {
		if _, err := s.SetPassword(ctx, owner, "s1", c.Link.ID, pw); errs.KindOf(err) != errs.Invalid {
			t.Errorf("a password %q: %v, want invalid", pw, err)
		}
	}
	if _, err := s.RemovePassword(ctx, auth.Principal{UserID: "viewer"}, "s1", c.Link.ID); errs.KindOf(err) != errs.Forbidden {
		t.Errorf("a viewer removing the password: %v, want forbidden", err)
	}
	if _, err := s.RemovePassword(ctx, owner, "s1", "nope"); !isNotFound(err) {
		t.Errorf("removing the password of an unknown link: %v", err)
	}
	if _, err := s.SetPassword(ctx, owner, "s1", "nope", "another password"); !isNotFound(err) {
		t.Errorf("the password of an unknown link: %v", err)
	}
	if _, err := s.Open(ctx, c.Token, access.Value); err != nil {
		t.Fatalf("refused changes ended the access: %v", err)
	}

	l, err := s.SetPassword(ctx, owner, "s1", c.Link.ID, secret)
	if err != nil || !l.Protected() || l.PasswordHash == c.Link.PasswordHash {
		t.Fatalf("the same password again: %+v, %v; want a new hash", l, err)
	}
	if _, err := s.Open(ctx, c.Token, access.Value); !IsLocked(err) {
		t.Errorf("the access of the former password opens the link: %v", err)
	}
	if access, err = s.Unlock(ctx, c.Token, secret); err != nil {
		t.Fatal(err)
	}
	if l, err = s.RemovePassword(ctx, owner, "s1", c.Link.ID); err != nil || l.Protected() {
		t.Fatalf("removing the password: %+v, %v", l, err)
	}
	if _, err := s.Open(ctx, c.Token, ""); err != nil {
		t.Errorf("a link whose password was removed: %v", err)
	}
	// a password set again: the access of an earlier one stays void
	if _, err = s.SetPassword(ctx, owner, "s1", c.Link.ID, secret); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Open(ctx, c.Token, access.Value); !IsLocked(err) {
		t.Errorf("an access of a removed password opens the link again: %v", err)
	}
}

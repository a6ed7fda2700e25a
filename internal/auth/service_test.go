package auth

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/model"
)

// countingStore knows no key, and counts how often it is asked.
type countingStore struct{ keyLookups atomic.Int64 }

func (s *countingStore) KeyByHash(context.Context, []byte) (model.APIKey, error) {
	s.keyLookups.Add(1)
	return model.APIKey{}, errs.ErrNotFound
}
func (s *countingStore) UserByID(context.Context, model.UserID) (model.User, error) {
	return model.User{}, errs.ErrNotFound
}
func (s *countingStore) UserByEmail(context.Context, string) (model.User, error) {
	return model.User{}, errs.ErrNotFound
}
func (s *countingStore) TouchKeys(context.Context, map[model.KeyID]time.Time) error { return nil }

type fixedRevocations struct{}

func (fixedRevocations) Version(context.Context) (int64, error) { return 1, nil }
func (fixedRevocations) Bump(context.Context) error             { return nil }

// An unknown key is refused from the cache for 10 s: a client retrying it
// reaches Postgres once, not on every request.
func TestUnknownKeysCachedBriefly(t *testing.T) {
	store := &countingStore{}
	now := time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)
	s := NewService(store, fixedRevocations{}, nil, nil, "test", func() time.Time { return now }, slog.New(slog.DiscardHandler))
	key := "sk_test_" + "0123456789abcdef0123456789abcdef0123456789abcdef"
	if !LooksLikeKey(key) {
		t.Fatalf("%s is not shaped like a key", key)
	}
	for range 50 {
		if _, err := s.Authenticate(context.Background(), key); !errs.Is(err, errs.Unauthenticated) {
			t.Fatalf("unknown key: %v, want unauthorized", err)
		}
	}
	if n := store.keyLookups.Load(); n != 1 {
		t.Errorf("50 requests with one unknown key asked Postgres %d times, want once", n)
	}
	now = now.Add(unknownKeyTTL)
	s.Authenticate(context.Background(), key)
	if n := store.keyLookups.Load(); n != 2 {
		t.Errorf("after %v the key was looked up %d times in all, want twice", unknownKeyTTL, n)
	}
}

// oneKeyStore knows one key until it is deleted (by hand: tally revokes,
// never deletes), and counts its lookups.
type oneKeyStore struct {
	countingStore
	key     model.APIKey
	deleted bool
}

func (s *oneKeyStore) KeyByHash(context.Context, []byte) (model.APIKey, error) {
	s.keyLookups.Add(1)
	if s.deleted {
		return model.APIKey{}, errs.ErrNotFound
	}
	return s.key, nil
}

func (s *oneKeyStore) UserByID(context.Context, model.UserID) (model.User, error) {
	if s.deleted {
		return model.User{}, errs.ErrNotFound
	}
	return model.User{ID: s.key.UserID, Plan: model.PlanFree}, nil
}

// A loaded key is trusted for credentialTTL at most: one deleted by hand in
// Postgres, which bumps no version, stops working within it. Before, it
// worked until some unrelated revocation.
func TestDeletedKeyStopsWithinTheTTL(t *testing.T) {
	store := &oneKeyStore{key: model.APIKey{ID: "k1", UserID: "u1", Environment: "test", Scopes: model.AllScopes}}
	now := time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)
	s := NewService(store, fixedRevocations{}, nil, nil, "test", func() time.Time { return now }, slog.New(slog.DiscardHandler))
	key := "sk_test_" + "0123456789abcdef0123456789abcdef0123456789abcdef"
	for range 10 {
		if _, err := s.Authenticate(context.Background(), key); err != nil {
			t.Fatal(err)
		}
	}
	if n := store.keyLookups.Load(); n != 1 {
		t.Errorf("10 requests asked Postgres %d times, want once", n)
	}
	store.deleted = true
	now = now.Add(credentialTTL)
	if _, err := s.Authenticate(context.Background(), key); !errs.Is(err, errs.Unauthenticated) {
		t.Errorf("a key deleted %v ago: %v, want unauthorized", credentialTTL, err)
	}
}

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

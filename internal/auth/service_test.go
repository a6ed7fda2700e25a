package auth

import (
	"context"
	"errors"
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
// never deletes), fails with down while Postgres is unreachable, and counts
// its lookups.
type oneKeyStore struct {
	countingStore
	key     model.APIKey
	deleted bool
	down    error
}

func (s *oneKeyStore) KeyByHash(context.Context, []byte) (model.APIKey, error) {
	s.keyLookups.Add(1)
	if s.down != nil {
		return model.APIKey{}, s.down
	}
	if s.deleted {
		return model.APIKey{}, errs.ErrNotFound
	}
	return s.key, nil
}

func (s *oneKeyStore) UserByID(context.Context, model.UserID) (model.User, error) {
	if s.down != nil {
		return model.User{}, s.down
	}
	if s.deleted {
		return model.User{}, errs.ErrNotFound
	}
	return model.User{ID: s.key.UserID, Plan: model.PlanFree}, nil
}

// bumpedRevocations is the revocation version, bumped by hand.
type bumpedRevocations struct{ v atomic.Int64 }

func (r *bumpedRevocations) Version(context.Context) (int64, error) { return r.v.Load(), nil }
func (r *bumpedRevocations) Bump(context.Context) error             { r.v.Add(1); return nil }

// While Postgres is down, a key seen before keeps working, unless a
// revocation was announced since it was loaded: a key revoked, then
// Postgres gone before its next request, must fail on that request.
func TestRevokedKeyFailsWhilePostgresIsDown(t *testing.T) {
	store := &oneKeyStore{key: model.APIKey{ID: "k1", UserID: "u1", Environment: "test", Scopes: model.AllScopes}}
	revs := &bumpedRevocations{}
	now := time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)
	s := NewService(store, revs, nil, nil, "test", func() time.Time { return now }, slog.New(slog.DiscardHandler))
	key := "sk_test_" + "0123456789abcdef0123456789abcdef0123456789abcdef"
	if _, err := s.Authenticate(context.Background(), key); err != nil {
		t.Fatal(err)
	}
	store.down = errors.New("dial tcp: connection refused")
	now = now.Add(credentialTTL) // the cache must ask Postgres again
	if _, err := s.Authenticate(context.Background(), key); err != nil {
		t.Errorf("Postgres down, nothing revoked: %v; want the key to keep working", err)
	}
	revoked := now
	store.key.RevokedAt = &revoked // tally key revoke: revoked_at set, then the version bumped
	revs.Bump(context.Background())
	if p, err := s.Authenticate(context.Background(), key); err == nil {
		t.Errorf("Postgres down after a revocation: admitted as %+v; want an error", p)
	}
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

// generationStore knows one user, whose token generation the test moves.
type generationStore struct {
	countingStore
	generation int64
}

func (s *generationStore) UserByID(_ context.Context, id model.UserID) (model.User, error) {
	return model.User{ID: id, Email: "gen@example.com", Plan: model.PlanFree, TokenGeneration: s.generation}, nil
}

// A login token is admitted while it is of its user's token generation:
// once that moved on (a password changed or reset) and the version was
// bumped, the tokens issued before are refused, from the cache too, and
// one issued after is admitted.
func TestTokensOfAnEarlierGenerationRefused(t *testing.T) {
	store := &generationStore{}
	revs := &bumpedRevocations{}
	now := time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	tokens := NewTokens("0123456789abcdef0123456789abcdef", clock)
	s := NewService(store, revs, tokens, nil, "test", clock, slog.New(slog.DiscardHandler))
	before, _, _ := tokens.Issue("u1", 0)
	p, err := s.Authenticate(context.Background(), before)
	if err != nil || p.UserID != "u1" || p.Email != "gen@example.com" || p.IsKey() {
		t.Fatalf("a token of the current generation: %+v, %v", p, err)
	}
	store.generation = 1 // the password changed: the store first, then the version
	if _, err := s.Authenticate(context.Background(), before); err != nil {
		t.Fatalf("before the version moved, the cached user answers: %v", err)
	}
	revs.Bump(context.Background())
	if p, err := s.Authenticate(context.Background(), before); !errs.Is(err, errs.Unauthenticated) {
		t.Errorf("a token of generation 0 after the change: %+v, %v; want unauthorized", p, err)
	}
	after, _, _ := tokens.Issue("u1", 1)
	if _, err := s.Authenticate(context.Background(), after); err != nil {
		t.Errorf("a token of generation 1: %v", err)
	}
	// from the cache now: still refused
	if _, err := s.Authenticate(context.Background(), before); !errs.Is(err, errs.Unauthenticated) {
		t.Errorf("a token of generation 0, cached user: %v; want unauthorized", err)
	}
}

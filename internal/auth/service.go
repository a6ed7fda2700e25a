package auth

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/outage"
)

// Store is what the authenticator needs from the account store.
type Store interface {
	KeyByHash(ctx context.Context, hash []byte) (model.APIKey, error)
	UserByID(ctx context.Context, id model.UserID) (model.User, error)
	UserByEmail(ctx context.Context, email string) (model.User, error)
	TouchKeys(ctx context.Context, used map[model.KeyID]time.Time) error
}

// Revocations is a counter shared by all instances that changes whenever a
// credential is revoked, so that cached credentials are re-checked on the
// very next request everywhere.
type Revocations interface {
	Version(ctx context.Context) (int64, error)
	Bump(ctx context.Context) error
}

// Service authenticates bearer credentials and logs users in.
type Service struct {
	store     Store
	revs      Revocations
	tokens    *Tokens
	passwords *PasswordCheck
	keyEnv    string
	now       func() time.Time
	log       *slog.Logger
	// second is asked at login for accounts with two-factor
	// authentication; challenges hold the dashboard's logins waiting for it
	second     SecondFactor
	challenges Challenges
	// storeDown logs, once per interval, keys admitted from the cache
	// while Postgres is unreachable
	storeDown *outage.Reporter

	keys  versionedCache[[32]byte, keyEntry]
	users versionedCache[model.UserID, tokenUser] // of login tokens

	mu   sync.Mutex
	used map[model.KeyID]time.Time // last use of each key, to be flushed
}

// keyEntry is what an API key resolved to: a key, or (unknownSince set) no
// key at all.
type keyEntry struct {
	principal    Principal
	key          model.APIKey
	unknownSince time.Time
}

// tokenUser is what a login token's user resolved to: the principal its
// tokens act as, while they are of the user's token generation.
type tokenUser struct {
	principal  Principal
	generation int64
}

// unknownKeyTTL is how long a key Postgres does not know is refused from
// the cache: a client retrying a wrong key does not reach Postgres each
// time. (A key is 256 random bits: none is asked for before it exists.)
const unknownKeyTTL = 10 * time.Second

// versionedCache keeps what credentials resolved to, each entry valid at the
// revocation version it was loaded at (a revocation, or a change to a user
// that matters to its credentials, bumps the version). Full, it starts over.
type versionedCache[K comparable, V any] struct {
	mu      sync.Mutex
	entries map[K]versioned[V]
}

type versioned[V any] struct {
	value   V
	version int64
	at      time.Time // loaded then
}

// credentialTTL bounds how long a loaded credential is trusted without
// asking Postgres again, whatever the version. Changes made by hand in the
// database are announced by Postgres (see RedisRevocations.Forget); while a
// server cannot hear them, a key or user deleted by hand
// in the database (tally revokes, never deletes) stops working within it.
// Changes made through tally bump the version and apply at once.
const credentialTTL = time.Minute

// current reports whether e may answer now at version.
func (e versioned[V]) current(version int64, now time.Time) bool {
	return e.version == version && now.Sub(e.at) < credentialTTL
}

const maxCachedKeys = 10_000

// get returns k's entry and the version it was loaded at.
func (c *versionedCache[K, V]) get(k K) (versioned[V], bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[k]
	return e, ok
}

func (c *versionedCache[K, V]) put(k K, v V, version int64, at time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil || len(c.entries) >= maxCachedKeys {
		c.entries = map[K]versioned[V]{}
	}
	c.entries[k] = versioned[V]{value: v, version: version, at: at}
}

// NewService makes an authenticator. keyEnv is the only API-key environment
// accepted ("live" in production, "test" elsewhere); passwords checks the
// passwords of logins.
func NewService(store Store, revs Revocations, tokens *Tokens, passwords *PasswordCheck, keyEnv string,
	now func() time.Time, log *slog.Logger, opts ...Option) *Service {
	s := &Service{store: store, revs: revs, tokens: tokens, passwords: passwords, keyEnv: keyEnv, now: now, log: log,
		storeDown: outage.New(log, "auth: Postgres unavailable; API keys admitted from this instance's cache", 0),
		used:      map[model.KeyID]time.Time{}}
	for _, o := range opts {
		o(s)
	}
	return s
}

func unauthorized(msg string) *errs.Error {
	return errs.E(errs.Unauthenticated, "unauthorized", "%s", msg)
}

// Authenticate turns a bearer credential (API key or JWT) into a Principal.
// Every failure is Unauthenticated with a message that does not echo the
// credential.
func (s *Service) Authenticate(ctx context.Context, bearer string) (Principal, error) {
	bearer = strings.TrimSpace(bearer)
	switch {
	case bearer == "":
		return Principal{}, unauthorized("missing bearer credential")
	case LooksLikeKey(bearer):
		return s.authenticateKey(ctx, bearer)
	default:
		return s.authenticateToken(ctx, bearer)
	}
}

// authenticateToken admits a login token of its user's current token
// generation: one issued before their logins were ended (a password
// changed or reset) is refused, on every server from the change on (it
// bumps the revocation version, dropping what was cached).
func (s *Service) authenticateToken(ctx context.Context, token string) (Principal, error) {
	userID, generation, err := s.tokens.Parse(token)
	if err != nil {
		return Principal{}, unauthorized("invalid or expired token").Wrap(err)
	}
	version, verErr := s.revs.Version(ctx)
	cached, hit := s.users.get(userID)
	if !hit || verErr != nil || !cached.current(version, s.now()) {
		user, err := s.store.UserByID(ctx, userID)
		if errors.Is(err, errs.ErrNotFound) {
			return Principal{}, unauthorized("invalid or expired token")
		}
		if err != nil {
			return Principal{}, errs.E(errs.Unavailable, "service_unavailable", "cannot check credentials now").Wrap(err)
		}
		cached.value = tokenUser{generation: user.TokenGeneration, principal: Principal{UserID: user.ID, Email: user.Email,
			Scopes: model.AllScopes, Plan: user.Plan, EventsPerHour: user.EventsPerHour}}
		if verErr == nil {
			s.users.put(userID, cached.value, version, s.now())
		}
	}
	if generation != cached.value.generation {
		return Principal{}, unauthorized("invalid or expired token")
	}
	return cached.value.principal, nil
}

func (s *Service) authenticateKey(ctx context.Context, secret string) (Principal, error) {
	env, ok := KeyEnvironment(secret)
	if !ok {
		return Principal{}, unauthorized("malformed API key")
	}
	if env != s.keyEnv {
		return Principal{}, unauthorized("this server accepts only sk_" + s.keyEnv + "_ keys")
	}
	var hash [32]byte
	copy(hash[:], HashKey(secret))

	version, verErr := s.revs.Version(ctx)
	cached, hit := s.keys.get(hash)
	if hit && !cached.value.unknownSince.IsZero() {
		if s.now().Sub(cached.value.unknownSince) < unknownKeyTTL {
			return Principal{}, unauthorized("invalid API key")
		}
		hit = false
	}
	if hit && verErr == nil && cached.current(version, s.now()) {
		return s.admit(cached.value)
	}
	entry, err := s.loadKey(ctx, hash[:])
	switch {
	case err == nil:
		s.storeDown.OK()
	case errs.Is(err, errs.Unauthenticated):
		s.keys.put(hash, keyEntry{unknownSince: s.now()}, version, s.now())
		return Principal{}, err
	case hit && (verErr != nil || cached.version == version):
		// Postgres is unreachable: a key this instance has already seen keeps
		// working (DESIGN §7), unless a revocation was announced since it was
		// loaded (it may be this key's); revocations apply again once it
		// answers.
		s.storeDown.Fail(1, err)
		return s.admit(cached.value)
	default:
		return Principal{}, err
	}
	if verErr == nil {
		s.keys.put(hash, entry, version, s.now())
	}
	return s.admit(entry)
}

func (s *Service) loadKey(ctx context.Context, hash []byte) (keyEntry, error) {
	key, err := s.store.KeyByHash(ctx, hash)
	if errors.Is(err, errs.ErrNotFound) {
		return keyEntry{}, unauthorized("invalid API key")
	}
	if err != nil {
		return keyEntry{}, errs.E(errs.Unavailable, "service_unavailable", "cannot check credentials now").Wrap(err)
	}
	user, err := s.store.UserByID(ctx, key.UserID)
	if errors.Is(err, errs.ErrNotFound) {
		return keyEntry{}, unauthorized("invalid API key")
	}
	if err != nil {
		return keyEntry{}, errs.E(errs.Unavailable, "service_unavailable", "cannot check credentials now").Wrap(err)
	}
	p := Principal{UserID: user.ID, Email: user.Email, KeyID: key.ID, Scopes: key.Scopes, Plan: user.Plan, EventsPerHour: user.EventsPerHour}
	return keyEntry{principal: p, key: key}, nil
}

// admit checks the state of a known key and records its use.
func (s *Service) admit(c keyEntry) (Principal, error) {
	now := s.now()
	if c.key.RevokedAt != nil {
		return Principal{}, unauthorized("API key revoked")
	}
	if c.key.ExpiresAt != nil && !now.Before(*c.key.ExpiresAt) {
		return Principal{}, unauthorized("API key expired")
	}
	if c.key.Environment != s.keyEnv {
		return Principal{}, unauthorized("API key of another environment")
	}
	s.mu.Lock()
	s.used[c.key.ID] = now
	s.mu.Unlock()
	return c.principal, nil
}

// FlushUsage writes the last-use times gathered since the previous flush.
func (s *Service) FlushUsage(ctx context.Context) error {
	s.mu.Lock()
	used := s.used
	s.used = map[model.KeyID]time.Time{}
	s.mu.Unlock()
	if len(used) == 0 {
		return nil
	}
	return s.store.TouchKeys(ctx, used)
}

// RunUsageFlusher flushes key usage every interval until ctx ends, then once more.
func (s *Service) RunUsageFlusher(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			flushCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			if err := s.FlushUsage(flushCtx); err != nil {
				s.log.Warn("auth: flush key usage", "err", err)
			}
			cancel()
			return
		case <-t.C:
			if err := s.FlushUsage(ctx); err != nil {
				s.log.Warn("auth: flush key usage", "err", err)
			}
		}
	}
}

// LoginResult is a successful login.
type LoginResult struct {
	Token     string
	User      model.User
	ExpiresAt time.Time
}

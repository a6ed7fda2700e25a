// Package accounts manages users, sites, memberships, API keys and provider
// secrets: the rules around them, on top of the Postgres store. The CLI and
// the HTTP API both go through it.
package accounts

import (
	"context"
	"errors"
	"net/mail"
	"strings"
	"time"

	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/model"
)

// Store is the persistence accounts needs.
type Store interface {
	CreateUser(ctx context.Context, u model.User) (model.User, error)
	UserByEmail(ctx context.Context, email string) (model.User, error)
	CreateSite(ctx context.Context, site model.Site, owner model.UserID) (model.Site, error)
	SiteByID(ctx context.Context, id model.SiteID) (model.Site, error)
	SitesByUser(ctx context.Context, user model.UserID) ([]model.Site, error)
	MemberRole(ctx context.Context, site model.SiteID, user model.UserID) (model.Role, error)
	AddMember(ctx context.Context, site model.SiteID, user model.UserID, role model.Role) error
	CreateKey(ctx context.Context, k model.APIKey, hash []byte) (model.APIKey, error)
	KeyByID(ctx context.Context, id model.KeyID) (model.APIKey, error)
	KeysByUser(ctx context.Context, user model.UserID) ([]model.APIKey, error)
	RevokeKey(ctx context.Context, id model.KeyID, at time.Time) (model.APIKey, error)
	UpdateProviderSecrets(ctx context.Context, site model.SiteID, p model.Provider, update func(current []string) ([]string, error)) error
}

// Service holds the account rules.
type Service struct {
	store     Store
	passwords *auth.Passwords
	revs      auth.Revocations
	guard     *Guard
	keyEnv    string
	now       func() time.Time
}

// NewService makes the accounts service; keyEnv is the environment of the
// keys it creates ("live" or "test").
func NewService(store Store, passwords *auth.Passwords, revs auth.Revocations, keyEnv string, now func() time.Time) *Service {
	return &Service{store: store, passwords: passwords, revs: revs, keyEnv: keyEnv, now: now, guard: NewGuard(storeLookup{store})}
}

// Check answers whether p may do a to the site, reading Postgres (see Guard).
func (s *Service) Check(ctx context.Context, p auth.Principal, id model.SiteID, a Action) (model.Site, model.Role, error) {
	return s.guard.Check(ctx, p, id, a)
}

// NewUser is the input of CreateUser.
type NewUser struct {
	Email, Password, Name string
	Plan                  model.Plan // empty = free
	EventsPerHour         int        // enterprise custom limit; 0 = plan default
}

// CreateUser validates and stores a new user with a hashed password.
func (s *Service) CreateUser(ctx context.Context, in NewUser) (model.User, error) {
	email := strings.TrimSpace(in.Email)
	if addr, err := mail.ParseAddress(email); err != nil || addr.Address != email || len(email) > 254 {
		return model.User{}, errs.InvalidField("email", "must be a valid email address")
	}
	if err := auth.CheckNewPassword("password", in.Password); err != nil {
		return model.User{}, err
	}
	name := strings.TrimSpace(in.Name)
	if name == "" || len(name) > 200 {
		return model.User{}, errs.InvalidField("name", "must be 1 to 200 characters")
	}
	if in.Plan == "" {
		in.Plan = model.PlanFree
	}
	if !in.Plan.Valid() {
		return model.User{}, errs.InvalidField("plan", "must be free, pro or enterprise")
	}
	if in.EventsPerHour < 0 || (in.EventsPerHour > 0 && in.Plan != model.PlanEnterprise) {
		return model.User{}, errs.InvalidField("events_per_hour", "a custom limit needs the enterprise plan and a positive value")
	}
	hash, err := s.passwords.Hash(ctx, in.Password)
	if err != nil {
		return model.User{}, err
	}
	u, err := s.store.CreateUser(ctx, model.User{Email: email, Name: name, PasswordHash: hash, Plan: in.Plan,
		EventsPerHour: in.EventsPerHour})
	if errors.Is(err, errs.ErrConflict) {
		return model.User{}, errs.E(errs.Conflict, "user_exists", "a user with this email already exists").WithField("email")
	}
	return u, err
}

// UserByEmail finds a user; NotFound names the email field.
func (s *Service) UserByEmail(ctx context.Context, email string) (model.User, error) {
	u, err := s.store.UserByEmail(ctx, strings.TrimSpace(email))
	if errors.Is(err, errs.ErrNotFound) {
		return model.User{}, errs.E(errs.NotFound, "user_not_found", "no user with this email").WithField("email")
	}
	return u, err
}

// NewKey is the input of CreateKey.
type NewKey struct {
	OwnerEmail string
	Name       string
	Scopes     []model.Scope // empty = all scopes
	ExpiresAt  *time.Time
}

// CreatedKey is a new key with its secret, which is never available again.
type CreatedKey struct {
	Key    model.APIKey
	Secret string
}

// CreateKey makes an API key for a user.
func (s *Service) CreateKey(ctx context.Context, in NewKey) (CreatedKey, error) {
	owner, err := s.UserByEmail(ctx, in.OwnerEmail)
	if err != nil {
		return CreatedKey{}, err
	}
	name := strings.TrimSpace(in.Name)
	if name == "" || len(name) > 100 {
		return CreatedKey{}, errs.InvalidField("name", "must be 1 to 100 characters")
	}
	scopes, err := normalizeScopes(in.Scopes)
	if err != nil {
		return CreatedKey{}, err
	}
	if in.ExpiresAt != nil {
		switch at := in.ExpiresAt.UTC(); {
		case !at.After(s.now()):
			return CreatedKey{}, errs.InvalidField("expires_at", "must be in the future")
		case at.Year() > 9999: // what a timestamp can write
			return CreatedKey{}, errs.InvalidField("expires_at", "must be before the year 10000 (UTC)")
		default:
			in.ExpiresAt = &at
		}
	}
	secret, prefix, hash := auth.NewKeySecret(s.keyEnv)
	key, err := s.store.CreateKey(ctx, model.APIKey{
		ID: model.KeyID("key_" + auth.RandomString(16, idAlphabet)), UserID: owner.ID, Name: name, Prefix: prefix,
		Environment: s.keyEnv, Scopes: scopes, ExpiresAt: in.ExpiresAt,
	}, hash)
	if err != nil {
		return CreatedKey{}, err
	}
	return CreatedKey{Key: key, Secret: secret}, nil
}

func normalizeScopes(in []model.Scope) ([]model.Scope, error) {
	if len(in) == 0 {
		return append([]model.Scope(nil), model.AllScopes...), nil
	}
	var out []model.Scope
	for _, sc := range in {
		if !sc.Valid() {
			return nil, errs.InvalidField("scopes", "unknown scope %q", sc)
		}
		if !containsScope(out, sc) {
			out = append(out, sc)
		}
	}
	return out, nil
}

func containsScope(list []model.Scope, s model.Scope) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// accessChanged tells every instance that who may do what to a site
// changed (a member removed or demoted, a site changed or deleted): their
// caches of roles, sites and keys no longer hold, so the change applies on
// the very next request. Without Redis the change still stands: it is
// saved, and Postgres announces it to every instance too (the bump logs its
// failure), so the caller is not told it failed.
func (s *Service) accessChanged(ctx context.Context) {
	_ = s.revs.Bump(ctx)
}

// RevokeKey revokes a key and makes every instance drop its cached copy
// before returning: the key fails on the very next request.
func (s *Service) RevokeKey(ctx context.Context, id model.KeyID) (model.APIKey, error) {
	key, err := s.store.RevokeKey(ctx, id, s.now())
	if errors.Is(err, errs.ErrNotFound) {
		return model.APIKey{}, errs.E(errs.NotFound, "key_not_found", "no API key with this id")
	}
	if err != nil {
		return model.APIKey{}, err
	}
	s.accessChanged(ctx)
	return key, nil
}

// ListKeys lists a user's keys (never their secrets).
func (s *Service) ListKeys(ctx context.Context, ownerEmail string) ([]model.APIKey, error) {
	owner, err := s.UserByEmail(ctx, ownerEmail)
	if err != nil {
		return nil, err
	}
	return s.store.KeysByUser(ctx, owner.ID)
}

// KeysOf lists a user's keys (never their secrets), newest first.
func (s *Service) KeysOf(ctx context.Context, user model.UserID) ([]model.APIKey, error) {
	return s.store.KeysByUser(ctx, user)
}

// RevokeKeyOf revokes one of user's own keys; another user's key is not found.
func (s *Service) RevokeKeyOf(ctx context.Context, user model.UserID, id model.KeyID) (model.APIKey, error) {
	key, err := s.store.KeyByID(ctx, id)
	if errors.Is(err, errs.ErrNotFound) || (err == nil && key.UserID != user) {
		return model.APIKey{}, errs.E(errs.NotFound, "key_not_found", "no API key with this id")
	}
	if err != nil {
		return model.APIKey{}, err
	}
	return s.RevokeKey(ctx, id)
}

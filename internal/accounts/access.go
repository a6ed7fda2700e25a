package accounts

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/model"
)

// accessStore is what the access cache reads.
type accessStore interface {
	SiteByID(ctx context.Context, id model.SiteID) (model.Site, error)
	MemberRole(ctx context.Context, site model.SiteID, user model.UserID) (model.Role, error)
}

// Versioner is the access version every instance shares (the revocation
// counter, auth.Revocations): a change of who may do what to a site bumps it.
type Versioner interface {
	Version(ctx context.Context) (int64, error)
}

// Access answers "which role does this user have on this site" and "what is
// this site" on the ingest hot path from a short-lived in-process cache, so
// that most events cost no Postgres round trip and ingestion keeps working
// through a Postgres outage for sites already seen. An answer holds while the
// shared access version is the one it was cached under: a member removed or
// demoted, a site changed or deleted, takes effect on the next request on
// every instance. When the version cannot be read (Redis down), the cache is
// not trusted and Postgres answers.
type Access struct {
	store       accessStore
	versions    Versioner
	now         func() time.Time
	positiveTTL time.Duration
	negativeTTL time.Duration
	// shield compiles a site's exclusions as it enters the cache (nil: none)
	shield func(model.Exclusions) model.Shield

	guard *Guard // over this cache

	mu    sync.Mutex
	roles map[roleKey]cached[model.Role]
	sites map[model.SiteID]cached[model.Site]
}

type roleKey struct {
	site model.SiteID
	user model.UserID
}

type cached[T any] struct {
	val      T
	notFound bool
	at       time.Time
	version  int64
}

const maxAccessEntries = 100_000

// NewAccess caches answers for 30 s, and "not found" for 5 s, while the
// access version holds. shield (exclusions.Compile; nil: none) makes a
// site's exclusions ready for the ingest path once per site loaded, so that
// no event compiles them.
func NewAccess(store accessStore, versions Versioner, now func() time.Time, shield func(model.Exclusions) model.Shield) *Access {
	a := &Access{store: store, versions: versions, now: now, shield: shield, positiveTTL: 30 * time.Second, negativeTTL: 5 * time.Second,
		roles: map[roleKey]cached[model.Role]{}, sites: map[model.SiteID]cached[model.Site]{}}
	a.guard = NewGuard(a)
	return a
}

// Check answers whether p may do a to the site from this cache (see Guard).
func (a *Access) Check(ctx context.Context, p auth.Principal, id model.SiteID, act Action) (model.Site, model.Role, error) {
	return a.guard.Check(ctx, p, id, act)
}

// Role is user's role on site, or an error wrapping errs.ErrNotFound.
func (a *Access) Role(ctx context.Context, user model.UserID, site model.SiteID) (model.Role, error) {
	if !site.Text() {
		return "", errs.ErrNotFound
	}
	return lookup(ctx, a, a.roles, roleKey{site, user}, func() (model.Role, error) { return a.store.MemberRole(ctx, site, user) })
}

// Site is the site with id, or an error wrapping errs.ErrNotFound.
func (a *Access) Site(ctx context.Context, id model.SiteID) (model.Site, error) {
	if !id.Text() {
		return model.Site{}, errs.ErrNotFound
	}
	return lookup(ctx, a, a.sites, id, func() (model.Site, error) {
		site, err := a.store.SiteByID(ctx, id)
		if err == nil && a.shield != nil {
			site.Shield = a.shield(site.Exclusions)
		}
		return site, err
	})
}

func lookup[K comparable, T any](ctx context.Context, a *Access, m map[K]cached[T], k K, load func() (T, error)) (T, error) {
	now := a.now()
	version, verErr := a.versions.Version(ctx)
	a.mu.Lock()
	c, hit := m[k]
	a.mu.Unlock()
	if hit && verErr == nil && c.version == version {
		ttl := a.positiveTTL
		if c.notFound {
			ttl = a.negativeTTL
		}
		if now.Sub(c.at) < ttl {
			return c.result()
		}
	}
	v, err := load()
	notFound := errors.Is(err, errs.ErrNotFound)
	if err != nil && !notFound {
		if hit && (verErr != nil || c.version == version) {
			// the store is down: a stale answer beats none, unless an access
			// change was announced since it was loaded (it may be this one)
			return c.result()
		}
		var zero T
		return zero, err
	}
	if verErr != nil {
		return v, err // nothing to cache it under
	}
	a.mu.Lock()
	if len(m) >= maxAccessEntries {
		clear(m)
	}
	m[k] = cached[T]{val: v, notFound: notFound, at: now, version: version}
	a.mu.Unlock()
	return v, err
}

func (c cached[T]) result() (T, error) {
	if c.notFound {
		var zero T
		return zero, errs.ErrNotFound
	}
	return c.val, nil
}

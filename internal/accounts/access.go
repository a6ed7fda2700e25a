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
// not trusted and Postgres answers. A site id the store found no site for is
// remembered apart, for a minute and without a version (see missingSites).
type Access struct {
	store       accessStore
	versions    Versioner
	now         func() time.Time
	positiveTTL time.Duration
	negativeTTL time.Duration
	// shield compiles a site's exclusions as it enters the cache (nil: none)
	shield func(model.Exclusions) model.Shield

	guard *Guard // over this cache

	// missing are the site ids the store found no site for
	missing *missingSites
	// count is told the outcome of each site lookup that reached the store
	count func(result string)

	mu    sync.Mutex
	roles map[roleKey]cached[model.Role]
	sites map[model.SiteID]cached[model.Site]
}

// Outcomes of a site lookup that reached the store, as CountingLookups
// tells them.
const (
	LookupFound   = "found"
	LookupMissing = "missing"
	LookupFailed  = "error"
)

// AccessOption adjusts an Access.
type AccessOption func(*Access)

// CountingLookups tells count the outcome of each site lookup that reached
// the store (LookupFound, LookupMissing, LookupFailed): what the caches
// spare Postgres, and what unknown ids still cost it.
func CountingLookups(count func(result string)) AccessOption {
	return func(a *Access) { a.count = count }
}

// LookupBudget bounds the store lookups of site ids that a caller causes
// (see SiteWithin): it is asked before an id that no cache answers is
// looked up. Its error refuses the lookup and is the answer; otherwise
// found, called when the lookup did not find the id missing (the site was
// found, or the store failed), gives the lookup back, so that only ids that
// name no site spend the budget.
type LookupBudget func(ctx context.Context) (found func(), err error)

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

// NewAccess caches answers for 30 s, and a role's "not found" for 5 s, while
// the access version holds; a site's "not found" for a minute (see
// missingSites). shield (exclusions.Compile; nil: none) makes a site's
// exclusions ready for the ingest path once per site loaded, so that no
// event compiles them.
func NewAccess(store accessStore, versions Versioner, now func() time.Time, shield func(model.Exclusions) model.Shield,
	opts ...AccessOption) *Access {
	a := &Access{store: store, versions: versions, now: now, shield: shield, positiveTTL: 30 * time.Second, negativeTTL: 5 * time.Second,
		missing: newMissingSites(maxMissingSites, missingSiteTTL, now), count: func(string) {},
		roles: map[roleKey]cached[model.Role]{}, sites: map[model.SiteID]cached[model.Site]{}}
	for _, o := range opts {
		o(a)
	}
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
	return lookup(ctx, a, a.roles, roleKey{site, user}, true, func() (model.Role, error) { return a.store.MemberRole(ctx, site, user) })
}

// Site is the site with id, or an error wrapping errs.ErrNotFound.
func (a *Access) Site(ctx context.Context, id model.SiteID) (model.Site, error) {
	return a.SiteWithin(ctx, id, nil)
}

// SiteWithin is Site, asking the store only within budget (nil: no bound):
// an id that a cache answers, found or missing, spends nothing of it.
func (a *Access) SiteWithin(ctx context.Context, id model.SiteID, budget LookupBudget) (model.Site, error) {
	if !id.Text() || a.missing.has(id) {
		return model.Site{}, errs.ErrNotFound
	}
	return lookup(ctx, a, a.sites, id, false, func() (model.Site, error) { return a.loadSite(ctx, id, budget) })
}

// loadSite looks a site up in the store, once budget allows it.
func (a *Access) loadSite(ctx context.Context, id model.SiteID, budget LookupBudget) (model.Site, error) {
	var found func()
	if budget != nil {
		var err error
		if found, err = budget(ctx); err != nil {
			return model.Site{}, err
		}
	}
	site, err := a.store.SiteByID(ctx, id)
	switch {
	case errors.Is(err, errs.ErrNotFound):
		a.missing.add(id)
		a.count(LookupMissing)
		return site, err
	case err != nil:
		a.count(LookupFailed)
	default:
		a.count(LookupFound)
		if a.shield != nil {
			site.Shield = a.shield(site.Exclusions)
		}
	}
	if found != nil {
		found()
	}
	return site, err
}

// lookup answers k from m while its version and TTL hold, else loads it
// and caches the answer; "not found" too when keepMisses.
func lookup[K comparable, T any](ctx context.Context, a *Access, m map[K]cached[T], k K, keepMisses bool,
	load func() (T, error)) (T, error) {
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
			// the store is down (or the lookup was refused): a stale answer
			// beats none, unless an access change was announced since it was
			// loaded (it may be this one)
			return c.result()
		}
		var zero T
		return zero, err
	}
	if verErr != nil {
		return v, err // nothing to cache it under
	}
	if notFound && !keepMisses {
		return v, err
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

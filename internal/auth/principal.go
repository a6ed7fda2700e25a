// Package auth authenticates callers: login JWTs, API keys (stored as SHA-256
// hashes), password hashing, and the Principal a request acts as.
package auth

import (
	"context"
	"slices"

	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/model"
)

// Principal is who a request acts for: a user, through a login token or
// through one of their API keys; the visitor of a shared link; or the
// email reports of a site.
type Principal struct {
	UserID model.UserID
	// Email is the user's, for the limits counted per account (a
	// password asked again counts against the login's); empty without a
	// user.
	Email string
	// SharedSite is set for a reader without a user — the visitor of a
	// shared link, the email reports — who reads that one site's
	// statistics and nothing else.
	SharedSite model.SiteID
	// KeyID is set when the credential is an API key; empty for a JWT.
	KeyID  model.KeyID
	Scopes []model.Scope
	// Plan and EventsPerHour of the user, for rate limits.
	Plan          model.Plan
	EventsPerHour int
}

// ForSharedLink is the principal of a visitor of a shared link of site.
func ForSharedLink(site model.SiteID) Principal {
	return Principal{SharedSite: site, Scopes: []model.Scope{model.ScopeStatsRead}}
}

// ForEmailReport is the principal the mail of site — its email reports,
// its traffic spike notifications — reads its statistics as: that site's
// statistics only, as a shared link's visitor reads them (no user, so no owner's role is borrowed, and a deleted site
// is not found).
func ForEmailReport(site model.SiteID) Principal {
	return Principal{SharedSite: site, Scopes: []model.Scope{model.ScopeStatsRead}}
}

// IsKey reports whether the principal authenticated with an API key.
func (p Principal) IsKey() bool { return p.KeyID != "" }

// Can reports whether the principal holds scope s. Login sessions hold every
// scope; admin:full implies every scope.
func (p Principal) Can(s model.Scope) bool {
	return slices.Contains(p.Scopes, s) || slices.Contains(p.Scopes, model.ScopeAdminFull)
}

// Require returns a Forbidden error unless the principal holds scope s.
func (p Principal) Require(s model.Scope) error {
	if p.Can(s) {
		return nil
	}
	return errs.E(errs.Forbidden, "forbidden", "this API key lacks the %s scope", s)
}

type principalKey struct{}

// WithPrincipal returns ctx carrying p.
func WithPrincipal(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// FromContext returns the principal of ctx, if any.
func FromContext(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(Principal)
	return p, ok
}

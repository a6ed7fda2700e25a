// Package model holds tally's plain data types and named identifiers. It does
// no I/O and imports nothing of tally's.
package model

import (
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// UserID identifies a user (a UUID string).
type UserID string

// SiteID identifies a site; it is the site_id of the API.
type SiteID string

// Text reports whether id can name a site at all: printable UTF-8 text. An
// id that is not (a NUL, control characters, bytes that are not UTF-8)
// names no site, and no store is asked about it.
func (id SiteID) Text() bool {
	return utf8.ValidString(string(id)) && !strings.ContainsFunc(string(id), unicode.IsControl)
}

// KeyID is the public identifier of an API key (never the secret).
type KeyID string

// Plan is a user's billing plan; it sets the events rate limit.
type Plan string

// Plans.
const (
	PlanFree       Plan = "free"
	PlanPro        Plan = "pro"
	PlanEnterprise Plan = "enterprise"
)

// Valid reports whether p is a known plan.
func (p Plan) Valid() bool {
	return p == PlanFree || p == PlanPro || p == PlanEnterprise
}

// Role is a user's role on a site.
type Role string

// Roles, from most to least privileged.
const (
	RoleOwner  Role = "owner"
	RoleAdmin  Role = "admin"
	RoleViewer Role = "viewer"
)

// Valid reports whether r is a known role.
func (r Role) Valid() bool { return r == RoleOwner || r == RoleAdmin || r == RoleViewer }

// CanWrite reports whether the role may send events and change site settings.
func (r Role) CanWrite() bool { return r == RoleOwner || r == RoleAdmin }

// Scope is a permission an API key carries.
type Scope string

// Scopes of the spec.
const (
	ScopeStatsRead   Scope = "stats:read"
	ScopeEventsWrite Scope = "events:write"
	ScopeGoalsManage Scope = "goals:manage"
	ScopeSitesManage Scope = "sites:manage"
	ScopeAdminFull   Scope = "admin:full"
)

// AllScopes lists every scope; a key created without scopes gets all of them.
var AllScopes = []Scope{ScopeStatsRead, ScopeEventsWrite, ScopeGoalsManage, ScopeSitesManage, ScopeAdminFull}

// Valid reports whether s is a known scope.
func (s Scope) Valid() bool { return slices.Contains(AllScopes, s) }

// Provider names a payment provider of the spec.
type Provider string

// Providers.
const (
	ProviderA Provider = "provider_a"
	ProviderB Provider = "provider_b"
	ProviderC Provider = "provider_c"
	ProviderD Provider = "provider_d"
)

// Valid reports whether p is a known provider.
func (p Provider) Valid() bool {
	return p == ProviderA || p == ProviderB || p == ProviderC || p == ProviderD
}

// User is an account.
type User struct {
	ID           UserID
	Email        string
	Name         string
	PasswordHash string
	Plan         Plan
	// EventsPerHour overrides the plan's events rate limit (enterprise); 0 = plan default.
	EventsPerHour int
	// TokenGeneration is carried by every login token issued to the user;
	// it moves on when their logins are ended (a password changed or
	// reset), and a token of an earlier one is refused.
	TokenGeneration int64
	CreatedAt       time.Time
}

// Site is a tracked website.
type Site struct {
	ID           SiteID
	Domain       string
	Timezone     string
	BaseCurrency string
	// ClientRevenue is what the site does with revenue the tracking script
	// reports.
	ClientRevenue ClientRevenue
	// Exclusions is the traffic the site keeps out of its statistics.
	Exclusions Exclusions
	// Shield is Exclusions made ready for the ingest path, once per cached
	// site; nil when the site excludes nothing, or was not loaded for
	// ingestion.
	Shield    Shield
	CreatedAt time.Time
}

// ClientRevenue is a site's policy for revenue the tracking script reports:
// unsigned, so anyone who knows the site id can send it. It is kept apart
// from verified revenue (provider webhooks, the payments API, the Events API)
// unless Included.
type ClientRevenue struct {
	// Included counts it in the revenue figures with verified revenue; else
	// the reports show it beside them (client_reported).
	Included bool
	// Cap is the most one event may report, in minor units of the base
	// currency; 0 refuses all of it.
	Cap int64
}

// DefaultClientRevenueCap is a new site's cap: 10,000.00 of its base currency.
const DefaultClientRevenueCap = 1_000_000

// APIKey is a stored API key; the secret itself is never kept, only its hash.
type APIKey struct {
	ID          KeyID
	UserID      UserID
	Name        string
	Prefix      string // the first characters of the key, for display
	Environment string // "live" or "test"
	Scopes      []Scope
	ExpiresAt   *time.Time
	RevokedAt   *time.Time
	LastUsedAt  *time.Time
	CreatedAt   time.Time
}

// HasScope reports whether the key carries s (admin:full implies every scope).
func (k APIKey) HasScope(s Scope) bool {
	return slices.Contains(k.Scopes, s) || slices.Contains(k.Scopes, ScopeAdminFull)
}

// GoalID identifies a goal (a UUID string).
type GoalID string

// GoalType is what completes a goal.
type GoalType string

// Goal types of the spec.
const (
	GoalPageview    GoalType = "pageview"
	GoalCustomEvent GoalType = "custom_event"
)

// Goal is a conversion a site tracks: a pageview of PagePath (a page
// pattern of package pagepattern: * for one path segment, ** for any depth,
// a hash route after #) or a custom event EventName.
type Goal struct {
	ID        GoalID
	SiteID    SiteID
	Name      string
	Type      GoalType
	PagePath  string
	EventName string
	CreatedAt time.Time
}

// Membership is a site with a user's role on it.
type Membership struct {
	Site Site
	Role Role
}

// SiteDeletion is a queued removal of a deleted site's data.
type SiteDeletion struct {
	SiteID      SiteID
	RequestedAt time.Time
}

// DashboardSession is a login to the dashboard.
type DashboardSession struct {
	UserID    UserID
	CSRFToken string
	ExpiresAt time.Time
}

// TOTP is a user's time-based one-time password (two-factor
// authentication): the secret, opened, and whether it is on.
type TOTP struct {
	Secret string
	// EnabledAt is when the user confirmed it with a code; nil while they
	// are setting it up (it is not asked at login then).
	EnabledAt *time.Time
	// LastStep is the time step of the last code accepted (0: none).
	LastStep int64
	// RecoveryCodes is how many unused recovery codes the user has.
	RecoveryCodes int
}

// Member is a role on a site, as the site's settings list it: a user's, or
// an email's that has no account yet (invited); the two look the same, so the
// list tells nobody which emails have accounts.
type Member struct {
	Email string
	Role  Role
}

// ProviderSecretState tells whether a site has a provider's webhook
// secrets, and how many (never the secrets).
type ProviderSecretState struct {
	Provider  Provider
	Count     int
	UpdatedAt time.Time
}

// MaxProviderSecrets is how many signing secrets a site may hold for one
// provider: a live endpoint's, a test endpoint's, and one more while either
// is rotated. A webhook is verified if any of them verifies it.
const MaxProviderSecrets = 3

// Realtime is who was on a site in the last few minutes: the visitors, and
// how many of them are on each page and came from each source, the most
// first.
type Realtime struct {
	Visitors int64
	Pages    []VisitorCount
	Sources  []VisitorCount
}

// VisitorCount is a value (a page, a source) and the visitors of it.
type VisitorCount struct {
	Value    string
	Visitors int64
}

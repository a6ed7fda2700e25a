// Package web is tally's dashboard: server-rendered pages (html/template,
// assets embedded) where people log in, look at their sites' statistics, and
// manage sites, goals, segments, members, webhook secrets, email reports,
// traffic spike notifications and API keys. It calls the same services as
// the API, as the logged-in user.
//
// The dashboard page itself is cheap (one site lookup); each report is a
// card the page's small script loads from its own URL, so no request waits
// for every report. Without JavaScript, each card is a link to its report.
package web

import (
	"context"
	"embed"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/tally-analytics/tally/internal/accounts"
	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/emailreports"
	"github.com/tally-analytics/tally/internal/export"
	"github.com/tally-analytics/tally/internal/goals"
	"github.com/tally-analytics/tally/internal/httpapi"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/outage"
	"github.com/tally-analytics/tally/internal/passwords"
	"github.com/tally-analytics/tally/internal/ratelimit"
	"github.com/tally-analytics/tally/internal/sharing"
	"github.com/tally-analytics/tally/internal/spikes"
	"github.com/tally-analytics/tally/internal/stats"
	"github.com/tally-analytics/tally/internal/web/worldmap"
)

//go:embed templates assets
var files embed.FS

// Authenticator checks a login: its password, then (for an account with
// two-factor authentication) its code.
type Authenticator interface {
	BeginLogin(ctx context.Context, email, password string) (auth.PasswordStep, error)
	Challenged(ctx context.Context, challenge string) (model.User, error)
	FinishLogin(ctx context.Context, challenge, code string) (model.User, error)
}

// SessionStore keeps dashboard logins.
type SessionStore interface {
	CreateDashboardSession(ctx context.Context, tokenHash []byte, s model.DashboardSession) error
	DashboardSession(ctx context.Context, tokenHash []byte, now time.Time) (model.DashboardSession, error)
	DeleteDashboardSession(ctx context.Context, tokenHash []byte) error
	UserByID(ctx context.Context, id model.UserID) (model.User, error)
}

// Sites manages the user's sites, as the API's Sites endpoints do.
type Sites = httpapi.SitesAPI

// Team manages a site's members and webhook secrets.
type Team interface {
	Members(ctx context.Context, user model.UserID, site model.SiteID) ([]model.Member, error)
	SetMember(ctx context.Context, user model.UserID, site model.SiteID, email string, role model.Role) error
	RemoveMember(ctx context.Context, user model.UserID, site model.SiteID, email string) error
	SecretStates(ctx context.Context, user model.UserID, site model.SiteID) ([]model.ProviderSecretState, error)
	SetSecrets(ctx context.Context, user model.UserID, site model.SiteID, p model.Provider, secrets []string, add bool) (int, error)
}

// Keys manages the user's API keys.
type Keys interface {
	KeysOf(ctx context.Context, user model.UserID) ([]model.APIKey, error)
	CreateKey(ctx context.Context, in accounts.NewKey) (accounts.CreatedKey, error)
	RevokeKeyOf(ctx context.Context, user model.UserID, id model.KeyID) (model.APIKey, error)
}

// Goals manages a site's goals.
type Goals interface {
	List(ctx context.Context, p auth.Principal, site model.SiteID) ([]model.Goal, error)
	Create(ctx context.Context, p auth.Principal, in goals.Input) (model.Goal, error)
	Get(ctx context.Context, p auth.Principal, id model.GoalID) (model.Goal, error)
	Update(ctx context.Context, p auth.Principal, id model.GoalID, in goals.Input) (model.Goal, error)
	Delete(ctx context.Context, p auth.Principal, id model.GoalID) error
}

// Stats answers the dashboard's cards and its download: the reports of a
// range, the realtime view and the tracking health, as the stats service
// returns them (the dashboard presents them itself).
type Stats interface {
	export.Reports
	Realtime(ctx context.Context, p auth.Principal, r stats.Request) (stats.Realtime, error)
	Ingestion(ctx context.Context, p auth.Principal, r stats.Request) (stats.Ingestion, error)
	EventProperties(ctx context.Context, p auth.Principal, r stats.Request) (stats.EventProperties, error)
}

// Limiter counts login attempts.
type Limiter interface {
	AllowN(ctx context.Context, key string, lim ratelimit.Limit, n int) (ratelimit.Result, error)
}

// ClientRevenue purges the revenue the tracking script reported to a site.
type ClientRevenue interface {
	PurgeClientRevenue(ctx context.Context, p auth.Principal, site model.SiteID) (int64, error)
}

// Deps are what the dashboard uses.
type Deps struct {
	Auth     Authenticator
	Sessions SessionStore
	Sites    Sites
	Team     Team
	Revenue  ClientRevenue
	Keys     Keys
	// TwoFactor is the Security page's.
	TwoFactor TwoFactor
	// Passwords changes the user's password (the Security page) and
	// resets forgotten ones (the login page, when the server sends email).
	Passwords Passwords
	Goals     Goals
	Funnels   Funnels
	Shares    Shares
	Segments  Segments
	Reports   EmailReports
	Spikes    SpikeNotifications
	Stats     Stats
	Limiter   Limiter
	Log       *slog.Logger
	Now       func() time.Time
	// SecureCookies marks cookies Secure (every environment but development).
	SecureCookies bool
	// HSTS sends Strict-Transport-Security (when HTTPS is enforced).
	HSTS bool
	// ForceHTTPS redirects plain-HTTP requests to HTTPS (308; see
	// httpapi.RedirectHTTPS), after the headers every answer carries: a
	// shared link's redirect carries its own too.
	ForceHTTPS bool
	// PublicURL is the server's address as sites see it (for the install
	// snippet and webhook URLs); empty = the request's own.
	PublicURL string
	// TrustedProxies are the reverse proxies whose X-Forwarded-For is
	// believed (for the client address of the login limit), and whose
	// X-Forwarded-Proto (see httpapi.Scheme).
	TrustedProxies []*net.IPNet
	// LoginAttempts per email and client address in 15 minutes (see
	// httpapi.LoginLimits).
	LoginAttempts int
	// StatsPerHour bounds a user's report cards per rolling hour (shared
	// with the user's stats API calls made with a login token).
	StatsPerHour int
	// ManagePerHour bounds a user's form posts per rolling hour (shared
	// with the user's management API calls made with a login token).
	ManagePerHour int
	// SharePerHour bounds the report cards of one shared link per rolling
	// hour, whoever opens it.
	SharePerHour int
	// ShareMisses bounds the failed lookups of shared links' tokens per
	// client address (httpapi.ShareMisses); nil: unbounded.
	ShareMisses Attempts
	// SessionTTL is how long a login lasts.
	SessionTTL time.Duration
}

// Server is the dashboard.
type Server struct {
	deps  Deps
	echo  *echo.Echo
	views *views
	world worldmap.Map // the locations card's map
	// unavailable logs 503s (an outage) once per interval
	unavailable *outage.Reporter
}

// New builds the dashboard and its routes.
func New(deps Deps) (*Server, error) {
	if deps.Now == nil {
		deps.Now = time.Now
	}
	if deps.SessionTTL <= 0 {
		deps.SessionTTL = 14 * 24 * time.Hour
	}
	v, err := parseViews()
	if err != nil {
		return nil, err
	}
	world, err := worldmap.Load()
	if err != nil {
		return nil, err
	}
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	s := &Server{deps: deps, echo: e, views: v, world: world,
		unavailable: outage.New(deps.Log, "dashboard: answering 503: a store is unavailable", 0)}
	e.HTTPErrorHandler = s.handleError
	e.IPExtractor = httpapi.IPExtractor(deps.TrustedProxies)
	e.Use(middleware.Recover(), s.headers)
	if deps.ForceHTTPS {
		e.Use(echo.WrapMiddleware(func(next http.Handler) http.Handler { return httpapi.RedirectHTTPS(deps.TrustedProxies, next) }))
	}
	// every answer gzip-compressed when it gains by it: pages and cards
	// carry their CSRF token masked anew each time (csrf.go), so that
	// compression cannot leak it
	e.Use(middleware.BodyLimit("256K"), httpapi.NewCompressor().Middleware, s.loadSession)

	assets, err := fs.Sub(files, "assets")
	if err != nil {
		return nil, err
	}
	e.GET("/assets/*", echo.WrapHandler(http.StripPrefix("/assets/", cacheFor(time.Hour, http.FileServer(http.FS(assets))))))
	e.GET("/", s.home)
	e.GET("/login", s.loginForm)
	e.POST("/login", s.login)
	e.GET("/login/code", s.codeForm)
	e.POST("/login/code", s.loginCode)
	if deps.Passwords.Resets() { // else a forgotten password is the operator's to set: no page, no link
		e.GET("/login/forgot", s.forgotForm)
		e.POST("/login/forgot", s.forgot)
		// the token is in the path: logged by the route's pattern only
		e.GET(passwords.ResetPath+":token", s.resetForm)
		e.POST("/login/reset", s.reset)
	}
	e.POST("/logout", s.logout, s.requireLogin)
	e.POST("/theme", s.setTheme)
	// a shared link's dashboard: no login, the token scopes every request
	e.GET("/share/:token", s.sharedDashboard)
	e.POST("/share/:token", s.unlockShared) // the password of a link that has one
	e.GET("/share/:token/cards/:card", s.sharedCard)
	// an email's unsubscribe link: no login, its token is the say-so
	s.unsubscribeRoutes(emailreports.UnsubscribePath, "email reports", deps.Reports)
	s.unsubscribeRoutes(spikes.UnsubscribePath, "traffic spike notifications", deps.Spikes)

	// requireLogin is attached route by route: echo answers every path of a
	// group with middleware, which would turn unknown paths into logins.
	in := func(method, path string, h echo.HandlerFunc) { e.Add(method, path, h, s.requireLogin) }
	in(http.MethodGet, "/sites", s.siteList)
	in(http.MethodGet, "/sites/new", s.siteForm)
	in(http.MethodPost, "/sites", s.createSite)
	in(http.MethodGet, "/sites/:site", s.dashboard)
	in(http.MethodGet, "/sites/:site/cards/:card", s.card)
	in(http.MethodGet, "/sites/:site/download", s.download)
	in(http.MethodGet, "/sites/:site/settings", s.settings)
	in(http.MethodPost, "/sites/:site/settings", s.updateSite)
	in(http.MethodPost, "/sites/:site/delete", s.deleteSite)
	in(http.MethodPost, "/sites/:site/goals", s.createGoal)
	in(http.MethodGet, "/sites/:site/goals/:goal", s.goalForm)
	in(http.MethodPost, "/sites/:site/goals/:goal", s.updateGoal)
	in(http.MethodPost, "/sites/:site/goals/:goal/delete", s.deleteGoal)
	in(http.MethodPost, "/sites/:site/funnels", s.createFunnel)
	in(http.MethodGet, "/sites/:site/funnels/:funnel", s.funnelEditor)
	in(http.MethodPost, "/sites/:site/funnels/:funnel", s.updateFunnel)
	in(http.MethodPost, "/sites/:site/funnels/:funnel/delete", s.deleteFunnel)
	in(http.MethodPost, "/sites/:site/segments", s.createSegment)
	in(http.MethodPost, "/sites/:site/segments/:segment/delete", s.deleteSegment)
	in(http.MethodPost, "/sites/:site/shared-links", s.createSharedLink)
	in(http.MethodPost, "/sites/:site/shared-links/:link/delete", s.deleteSharedLink)
	in(http.MethodPost, "/sites/:site/shared-links/password", s.setSharedLinkPassword)
	in(http.MethodPost, "/sites/:site/shared-links/:link/password/delete", s.removeSharedLinkPassword)
	in(http.MethodPost, "/sites/:site/email-reports", s.setReportRecipient)
	in(http.MethodPost, "/sites/:site/email-reports/:recipient/delete", s.removeReportRecipient)
	in(http.MethodPost, "/sites/:site/spike-notification", s.setSpikeThreshold)
	in(http.MethodPost, "/sites/:site/spike-notification/delete", s.turnOffSpikes)
	in(http.MethodPost, "/sites/:site/spike-notification/recipients", s.addSpikeRecipient)
	in(http.MethodPost, "/sites/:site/spike-notification/recipients/:recipient/delete", s.removeSpikeRecipient)
	in(http.MethodPost, "/sites/:site/secrets", s.setSecret)
	in(http.MethodPost, "/sites/:site/client-revenue", s.setClientRevenue)
	in(http.MethodPost, "/sites/:site/client-revenue/purge", s.purgeClientRevenue)
	in(http.MethodPost, "/sites/:site/exclusions", s.setExclusions)
	in(http.MethodPost, "/sites/:site/members", s.setMember)
	in(http.MethodPost, "/sites/:site/members/remove", s.removeMember)
	in(http.MethodGet, "/account/keys", s.keyList)
	in(http.MethodPost, "/account/keys", s.createKey)
	in(http.MethodPost, "/account/keys/:key/revoke", s.revokeKey)
	in(http.MethodGet, "/account/security", s.security)
	in(http.MethodPost, "/account/security/setup", s.securitySetup)
	in(http.MethodPost, "/account/security/confirm", s.securityConfirm)
	in(http.MethodPost, "/account/security/recovery-codes", s.securityRegenerate)
	in(http.MethodPost, "/account/security/disable", s.securityDisable)
	in(http.MethodPost, "/account/security/password", s.securityPassword)
	return s, nil
}

// Handler is the dashboard's http.Handler.
func (s *Server) Handler() http.Handler { return s.echo }

func cacheFor(d time.Duration, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age="+itoa(int64(d/time.Second)))
		next.ServeHTTP(w, r)
	})
}

// headers sets what every dashboard answer carries: a content security
// policy that allows only the dashboard's own scripts and styles, no
// framing, no sniffing, and no caching of pages (they hold private data).
func (s *Server) headers(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		h := c.Response().Header()
		frames := "'none'"
		if embedded(c.Request()) {
			frames = "*" // a shared dashboard in another site's page
		} else {
			h.Set("X-Frame-Options", "DENY")
		}
		h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "+
			"form-action 'self'; frame-ancestors "+frames+"; base-uri 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin")
		h.Set("Cache-Control", "no-store")
		if s.deps.HSTS {
			h.Set("Strict-Transport-Security", "max-age=31536000; includeSubDomains")
		}
		if p := c.Request().URL.Path; strings.HasPrefix(p, sharing.PathPrefix) || p == emailreports.UnsubscribePath || p == spikes.UnsubscribePath {
			sharedHeaders(h) // a token in the URL
		}
		return next(c)
	}
}

func (s *Server) home(c echo.Context) error {
	if _, ok := session(c); ok {
		return c.Redirect(http.StatusSeeOther, "/sites")
	}
	return c.Redirect(http.StatusSeeOther, "/login")
}

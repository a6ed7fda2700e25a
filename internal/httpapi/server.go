// Package httpapi is tally's HTTP layer (echo): one route table, thin
// handlers (bind → one service call → respond), the authentication
// middleware, and the single error handler that writes the spec's error
// envelope for every failure.
package httpapi

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/tally-analytics/tally/internal/accounts"
	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/ingest"
	"github.com/tally-analytics/tally/internal/metrics"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/outage"
	"github.com/tally-analytics/tally/internal/ratelimit"
	"github.com/tally-analytics/tally/internal/revenue"
)

// Authenticator checks credentials and logs users in.
type Authenticator interface {
	Authenticate(ctx context.Context, bearer string) (auth.Principal, error)
	Login(ctx context.Context, c auth.Credentials) (auth.LoginResult, error)
}

// Ingester accepts events.
type Ingester interface {
	Track(ctx context.Context, p auth.Principal, in ingest.Input) (string, error)
	TrackBatch(ctx context.Context, p auth.Principal, ins []ingest.Input) ([]ingest.Result, error)
	TrackBrowser(ctx context.Context, in ingest.Input, spend ingest.RevenueAllowance) (string, error)
	// RefusedRequest counts, for tracking health, the events of a request
	// refused before they reached the service (see countRefusals).
	RefusedRequest(p *auth.Principal, sites []string, err error)
}

// Deps are the services the API calls.
type Deps struct {
	Auth    Authenticator
	Ingest  Ingester
	Stats   Stats
	Goals   Goals
	Revenue Revenue
	// Funnels manages funnel definitions (the report is Stats.Funnel).
	Funnels Funnels
	// SitesAPI manages sites (the sites:manage scope).
	SitesAPI SitesAPI
	// Export streams raw exports (the stats:read scope).
	Export Exporter
	// SharedLinks manages the links to sites' read-only dashboards.
	SharedLinks SharedLinks
	// Segments manages sites' saved sets of filters.
	Segments Segments
	// Passwords changes a login token's user's password.
	Passwords Passwords
	// PublicURL is the server's address as browsers reach it (for a shared
	// link's URL); empty = the request's own.
	PublicURL string
	// Sites and SiteLookup find sites for the payment and webhook routes.
	Sites      revenue.Sites
	SiteLookup WebhookSites
	Limiter    RateLimiter
	Log        *slog.Logger
	// MaxEventBody limits event request bodies (bytes); MaxBatchBody, batch
	// request bodies.
	MaxEventBody, MaxBatchBody int64
	// TrustedProxies are the CIDRs whose X-Forwarded-For and
	// X-Forwarded-Proto are believed (see Scheme).
	TrustedProxies []*net.IPNet
	// Limits are the request rate limits.
	Limits Limits
	// ForceHTTPS redirects plain-HTTP requests to HTTPS and sends HSTS.
	ForceHTTPS bool
	// Metrics records request latencies and counts; nil records nothing.
	Metrics *metrics.Metrics
	// MetricsToken, when set, is the bearer token GET /metrics requires;
	// without it /metrics answers loopback clients only.
	MetricsToken string
	// Now is the clock of the bounds this instance keeps in memory (the
	// lookups of webhooks' unknown sites); nil is time.Now.
	Now func() time.Time
}

// WebhookSites finds webhooks' sites (accounts.Access): from its caches,
// else from the store once budget allows it.
type WebhookSites interface {
	SiteWithin(ctx context.Context, id model.SiteID, budget accounts.LookupBudget) (model.Site, error)
}

// Limits are the rate limits of the API.
type Limits struct {
	// EventsPerHour by plan (free, pro, enterprise); an account's own
	// limit (Principal.EventsPerHour) overrides.
	EventsPerHour map[model.Plan]int
	StatsPerHour  int
	// LoginAttempts per email and client address in 15 minutes (ten times
	// as many per address; see LoginLimits).
	LoginAttempts int
	// ManagePerHour bounds management calls (sites, goals, verify) per
	// credential and rolling hour.
	ManagePerHour int
	// AuthFailuresPerMinute bounds failed authentications (credentials,
	// webhook signatures) per client address.
	AuthFailuresPerMinute int
	// TrackerPerMinute per client address.
	TrackerPerMinute int
	// ClientRevenuePerHour bounds the tracker's events with revenue per site.
	ClientRevenuePerHour int
	// ExportsPerHour bounds raw exports per account and rolling hour.
	ExportsPerHour int
	// WebhooksPerHour bounds the signed webhook deliveries of a site per
	// rolling hour.
	WebhooksPerHour int
}

// Server is the HTTP API.
type Server struct {
	deps Deps
	echo *echo.Echo
	// outages are logged once per interval, not once per request
	unavailable, limiterDown *outage.Reporter
	fails                    failGuard
	// siteMisses bounds each client address's webhooks to unknown sites
	siteMisses *ratelimit.Local
	// gz compresses the answers of the routes that read (reads)
	gz *Compressor
}

// maxBody limits bodies of routes that set no tighter limit.
const maxBody = 1 << 20

// New builds the API and its route table.
func New(deps Deps) *Server {
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	if deps.Now == nil {
		deps.Now = time.Now
	}
	s := &Server{deps: deps, echo: e, gz: NewCompressor(),
		siteMisses:  ratelimit.NewLocal(ratelimit.PerMinute(webhookSiteMissesPerMinute), maxBlockedAddresses, deps.Now),
		unavailable: outage.New(deps.Log, "api: answering 503: a store is unavailable or the event buffer is full", 0),
		limiterDown: outage.New(deps.Log, "api: rate limits unavailable (Redis); requests pass unlimited", 0)}
	e.HTTPErrorHandler = s.handleError
	e.IPExtractor = IPExtractor(deps.TrustedProxies)
	e.Use(assignRequestID, s.recoverPanics, s.logRequests, s.redirectHTTPS, s.securityHeaders, limitAnyBody)

	s.trackerRoutes()
	e.GET("/health", s.health)
	e.GET("/api/health", s.health)
	e.GET("/metrics", s.metrics)

	v1 := e.Group("/api/v1")
	v1.GET("/openapi.json", s.openAPI, s.reads()...)
	v1.POST("/auth/login", s.login, bodyLimit(64<<10))
	v1.GET("/auth/verify", s.verify, s.authenticate, s.limitManage)
	v1.POST("/auth/password", s.changePassword, s.authenticate, s.loginTokenOnly, bodyLimit(64<<10))

	// Middleware is attached per route, not per group: echo answers 404
	// instead of 405 for a group that has middleware. So is compression
	// (reads): the ingest routes, whose answers are a few bytes, pay for
	// nothing of it, not even a look at Accept-Encoding.
	ingest := []echo.MiddlewareFunc{s.authenticate, s.countRefusals(sitesInBody(false)), s.limitEvents, bodyLimit(deps.MaxEventBody)}
	v1.POST("/events/pageview", s.pageview, ingest...)
	v1.POST("/events/custom", s.custom, ingest...)
	// The batch route counts its events against the limit itself, once it
	// knows how many there are.
	v1.POST(strings.TrimPrefix(batchRoute, "/api/v1"), s.batch, s.authenticate, s.countRefusals(sitesInBody(true)), bodyLimit(deps.MaxBatchBody))
	s.statsRoutes(v1, s.reads(s.authenticate, s.limitStats)...)
	s.goalRoutes(v1, s.authenticate)
	s.funnelRoutes(v1, s.authenticate)
	s.revenueRoutes(v1, s.authenticate)
	s.siteRoutes(v1, s.authenticate, s.limitManage)
	s.sharedLinkRoutes(v1, s.authenticate)
	s.segmentRoutes(v1, s.authenticate)
	// the export counts against its own limit once its request is valid
	s.exportRoutes(v1, s.authenticate)
	s.queryRoutes(e.Group("/api/v2"), s.reads(s.authenticate, s.limitStats)...)
	return s
}

// reads is the middleware of a route that reads: compression (JSON and CSV
// answers of up to hundreds of KB), then mw. The raw export compresses its
// stream itself and has none.
func (s *Server) reads(mw ...echo.MiddlewareFunc) []echo.MiddlewareFunc {
	return append([]echo.MiddlewareFunc{s.gz.Middleware}, mw...)
}

// IPExtractor takes the client address from the connection, or from
// X-Forwarded-For when the connection comes from a trusted proxy (the
// rightmost address not of a trusted proxy). The dashboard uses it too.
func IPExtractor(trusted []*net.IPNet) echo.IPExtractor {
	if len(trusted) == 0 {
		return echo.ExtractIPDirect()
	}
	opts := []echo.TrustOption{echo.TrustLoopback(false), echo.TrustLinkLocal(false), echo.TrustPrivateNet(false)}
	for _, n := range trusted {
		opts = append(opts, echo.TrustIPRange(n))
	}
	return echo.ExtractIPFromXFFHeader(opts...)
}

// Handler returns the http.Handler of the API.
func (s *Server) Handler() http.Handler { return s.echo }

// Routes lists the registered routes (method and path).
func (s *Server) Routes() []*echo.Route { return s.echo.Routes() }

// HTTPServer serves h (the API, or the API and the dashboard) with
// timeouts suited to the internet: slow clients cannot hold connections forever.
func HTTPServer(addr string, h http.Handler) *http.Server {
	return &http.Server{
		Addr:              addr,
		Handler:           h,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       15 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
	}
}

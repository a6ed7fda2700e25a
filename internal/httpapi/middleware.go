package httpapi

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/metrics"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/ratelimit"
)

// authenticate resolves the bearer credential into a principal carried by the
// request context; any failure is 401 before the handler runs.
func (s *Server) authenticate(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		h := c.Request().Header.Get(echo.HeaderAuthorization)
		scheme, cred, ok := strings.Cut(h, " ")
		if h == "" {
			return errs.E(errs.Unauthenticated, "unauthorized", "missing Authorization: Bearer header")
		}
		if !ok || !strings.EqualFold(scheme, "Bearer") {
			return errs.E(errs.Unauthenticated, "unauthorized", "the Authorization header must be: Bearer <token or API key>")
		}
		if err := s.refuseFailing(c, failCredential); err != nil {
			return err
		}
		p, err := s.deps.Auth.Authenticate(c.Request().Context(), cred)
		if err != nil {
			return s.countFailure(c, failCredential, err)
		}
		c.SetRequest(c.Request().WithContext(auth.WithPrincipal(c.Request().Context(), p)))
		return next(c)
	}
}

// principal is the authenticated caller (the authenticate middleware ran).
func principal(c echo.Context) auth.Principal {
	p, _ := auth.FromContext(c.Request().Context())
	return p
}

// bodyLimit caps the request body; reading past it fails with 413.
func bodyLimit(n int64) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			r := c.Request()
			if r.ContentLength > n {
				return errs.E(errs.TooLarge, "payload_too_large", "request body is larger than %d bytes", n)
			}
			r.Body = http.MaxBytesReader(c.Response(), r.Body, n)
			return next(c)
		}
	}
}

// recoverPanics turns a panic into a 500 with the stack in the log.
func (s *Server) recoverPanics(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) (err error) {
		defer func() {
			if r := recover(); r != nil {
				if r == http.ErrAbortHandler {
					panic(r)
				}
				err = fmt.Errorf("panic: %v\n%s", r, debug.Stack())
			}
		}()
		return next(c)
	}
}

// logRequests logs one line per request: method, route pattern, status,
// duration and request id. Never the client address, query string, headers
// or body: they can carry personal data or credentials. It also records the
// request's latency in the metrics.
func (s *Server) logRequests(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		err := next(c)
		if err != nil {
			c.Error(err)
		}
		status, took := c.Response().Status, time.Since(start)
		route := c.Path()
		if route == "" {
			route = "unmatched"
		}
		s.deps.Metrics.ObserveRequest(route, c.Request().Method, status, took)
		if status < 500 {
			s.unavailable.OK()
		}
		level := slog.LevelDebug
		if status >= 400 && status < 500 {
			level = slog.LevelInfo
		}
		ctx := c.Request().Context()
		if status >= 500 || !s.deps.Log.Enabled(ctx, level) {
			return nil // a 5xx was logged with its cause by handleError
		}
		s.deps.Log.Log(ctx, level, "request", "method", c.Request().Method, "route", route,
			"status", status, "duration_ms", float64(took.Microseconds())/1000, "request_id", requestID(c))
		return nil
	}
}

// RateLimiter counts requests against limits.
type RateLimiter interface {
	AllowN(ctx context.Context, key string, lim ratelimit.Limit, n int) (ratelimit.Result, error)
}

// Names of the limits, for the rate-limit metric.
const (
	limitEventsName  = "events"
	limitStatsName   = "stats"
	limitTrackerName = "tracker"
	// limitClientRevenueName: tracker events with revenue, per site.
	limitClientRevenueName = "client_revenue"
	limitLoginName         = "login"
	limitManageName        = "manage"
	limitExportsName       = "exports"
	// limitWebhooksName: signed webhook deliveries, per site.
	limitWebhooksName = "webhooks"
	// limitWebhookSitesName: webhooks to unknown sites, per address.
	limitWebhookSitesName = "webhook_sites"
)

// KeyedLimit is a limit and the key it counts under.
type KeyedLimit struct {
	Key   string
	Limit ratelimit.Limit
}

// LoginLimits are what a login attempt counts against, on the API and the
// dashboard alike: attempts per email and client address (against guessing
// one account's password), and ten times as many per address across emails
// (against spraying one password over many accounts, which also slows real
// logins: every attempt costs a password hash). Across addresses, an
// account's wrong passwords are bounded where the password is checked
// (auth.FailedPasswords): a bound of failures, which these limits cannot be.
func LoginLimits(email, addr string, attempts int) []KeyedLimit {
	client := clientOf(addr)
	return []KeyedLimit{
		{Key: "login:" + hashed(strings.ToLower(strings.TrimSpace(email))+"|"+client), Limit: ratelimit.Limit{N: attempts, Period: 15 * time.Minute}},
		{Key: "login:addr:" + hashed(client), Limit: ratelimit.Limit{N: 10 * attempts, Period: 15 * time.Minute}},
	}
}

// ResetLimits are what a request for a password-reset link counts
// against, on the dashboard: requests per email, whatever the client
// address, and ten times as many per address across emails, an hour
// each. Unlike the login's, the first bound is per email alone: each
// request sends the address an email and voids the link sent before, so
// no number of addresses may send more. Neither key depends on whether
// the email is an account's.
func ResetLimits(email, addr string, attempts int) []KeyedLimit {
	return []KeyedLimit{
		{Key: "reset:" + hashed(strings.ToLower(strings.TrimSpace(email))), Limit: ratelimit.Limit{N: attempts, Period: time.Hour}},
		{Key: "reset:addr:" + hashed(clientOf(addr)), Limit: ratelimit.Limit{N: 10 * attempts, Period: time.Hour}},
	}
}

// SharePasswordLimits are what a try of a shared link's password counts
// against: tries from the client's address, whatever the link, and ten
// times as many of the link, whatever the address (against guessing from
// many addresses), 15 minutes each, as a login's. Every try counts, the
// right one too: each costs a password hash. The link enters its key as a
// digest of its token.
func SharePasswordLimits(token, addr string, attempts int) []KeyedLimit {
	return []KeyedLimit{
		{Key: "share-password:addr:" + hashed(clientOf(addr)), Limit: ratelimit.Limit{N: attempts, Period: 15 * time.Minute}},
		{Key: "share-password:link:" + hashed(token), Limit: ratelimit.Limit{N: 10 * attempts, Period: 15 * time.Minute}},
	}
}

// ShareMisses is the bound on a client address's failed lookups of shared
// links' tokens (unknown, deleted or malformed ones) and the key it counts
// under: 50 in any 15 minutes. Past them every token the address sends is
// refused unlooked-up, a valid one too (else the answer to a guess would
// still tell a valid token from the others), until the first miss is 15
// minutes old. A valid token's lookups are not counted (its cards have
// their link's allowance): a person mistyping a link or following dead
// ones stays far from the bound, as does a shared dashboard's dozen cards,
// each counted only while its lookup is under way.
func ShareMisses(addr string) (string, ratelimit.Bound) {
	return "share-miss:" + hashed(clientOf(addr)), ratelimit.Bound{N: 50, Window: 15 * time.Minute}
}

// clientOf is the client a limit per address counts: the IPv4 address, or
// the /64 network of an IPv6 address, which one host or subscriber is given
// whole (counting its addresses one by one would give it 2^64 allowances).
func clientOf(addr string) string {
	ip, err := netip.ParseAddr(addr)
	switch {
	case err != nil:
		return addr
	case ip.Unmap().Is4():
		return ip.Unmap().String() // ::ffff:203.0.113.7 is 203.0.113.7
	}
	return netip.PrefixFrom(ip.WithZone(""), 64).Masked().String()
}

// hashed is how a client address (or an email) enters a limit's key: a
// digest, so that Redis never holds it in the clear.
func hashed(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:12])
}

// ManageLimitKey names the allowance of management calls (sites, goals,
// credential checks) of a caller; the dashboard's forms count against their
// user's, as the user's login-token calls do.
func ManageLimitKey(p auth.Principal) string { return "manage:" + callerKey(p) }

// limitManage applies the management allowance per credential.
func (s *Server) limitManage(next echo.HandlerFunc) echo.HandlerFunc {
	return s.rateLimit(limitManageName, func(c echo.Context) (string, ratelimit.Limit) {
		return ManageLimitKey(principal(c)), ratelimit.PerHour(s.deps.Limits.ManagePerHour)
	})(next)
}

// rateLimit limits requests by the key and limit keyOf picks; name labels
// the limit's refusals in the metrics.
func (s *Server) rateLimit(name string, keyOf func(c echo.Context) (string, ratelimit.Limit)) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			key, lim := keyOf(c)
			if err := s.checkLimit(c, name, key, lim, 1); err != nil {
				return err
			}
			return next(c)
		}
	}
}

// checkLimit counts n requests against a limit. Every answer carries
// X-RateLimit-Limit, X-RateLimit-Remaining and X-RateLimit-Reset (seconds
// until the full limit is back); a refusal is 429 with Retry-After. When Redis
// cannot answer, requests pass: limits are a guard, not a reason to drop
// events (the failure is logged and counted).
func (s *Server) checkLimit(c echo.Context, name, key string, lim ratelimit.Limit, n int) error {
	res, err := s.deps.Limiter.AllowN(c.Request().Context(), key, lim, n)
	if err != nil {
		s.deps.Metrics.LimiterUnavailable()
		s.limiterDown.Fail(1, err)
		return nil // no headers: they would be guesses
	}
	s.limiterDown.OK()
	SetLimitHeaders(c.Response().Header(), res)
	if !res.Allowed {
		s.deps.Metrics.RateLimited(name)
		if name == limitEventsName || name == limitTrackerName || name == limitClientRevenueName {
			s.deps.Metrics.CountEvents(metrics.OutcomeRateLimited, n)
		}
		return &errs.Error{Kind: errs.RateLimited, Code: "rate_limit_exceeded", RetryAfter: res.RetryAfter,
			Message: fmt.Sprintf("rate limit of %d requests per %s exceeded; retry in %d s", lim.N, lim.Period, ceilSeconds(res.RetryAfter))}
	}
	return nil
}

// SetLimitHeaders writes a limit's X-RateLimit-Limit, X-RateLimit-Remaining
// and X-RateLimit-Reset (seconds until the full limit is back), which every
// limited answer carries, the dashboard's included.
func SetLimitHeaders(h http.Header, res ratelimit.Result) {
	// the keys in their canonical form (what Set would make of them), set
	// as they are: Set's canonicalising showed in the event endpoints' profile
	h["X-Ratelimit-Limit"] = []string{strconv.Itoa(res.Limit)}
	h["X-Ratelimit-Remaining"] = []string{strconv.Itoa(res.Remaining)}
	h["X-Ratelimit-Reset"] = []string{strconv.Itoa(ceilSeconds(res.ResetAfter))}
}

// callerKey names the credential a limit counts against: the API key, or
// the user of a login token.
func callerKey(p auth.Principal) string {
	if p.IsKey() {
		return "key:" + string(p.KeyID)
	}
	return "user:" + string(p.UserID)
}

// limitEvents applies the Events API limit of the caller's plan.
func (s *Server) limitEvents(next echo.HandlerFunc) echo.HandlerFunc {
	limited := s.rateLimit(limitEventsName, s.eventsLimit)(next)
	return func(c echo.Context) error {
		if !spendsEvents(principal(c)) {
			return next(c) // refused further on, and not charged
		}
		return limited(c)
	}
}

// spendsEvents reports whether p's requests count against the account's
// Events API allowance: those of a credential that may send events. Another
// key's requests are refused (403) without spending it, so a leaked
// read-only key cannot use up the account's allowance.
func spendsEvents(p auth.Principal) bool { return p.Can(model.ScopeEventsWrite) }

// eventsLimit is the key and limit of the caller's Events API allowance. It
// belongs to the account: its API keys and login tokens share it, so a
// second key does not double it (and each key stays within the spec's
// per-key limit).
func (s *Server) eventsLimit(c echo.Context) (string, ratelimit.Limit) {
	p := principal(c)
	n := p.EventsPerHour
	if n <= 0 {
		n = s.deps.Limits.EventsPerHour[p.Plan]
	}
	if n <= 0 {
		n = s.deps.Limits.EventsPerHour[model.PlanFree]
	}
	return "events:account:" + string(p.UserID), ratelimit.PerHour(n)
}

// limitStats applies the stats limit per credential.
func (s *Server) limitStats(next echo.HandlerFunc) echo.HandlerFunc {
	return s.rateLimit(limitStatsName, func(c echo.Context) (string, ratelimit.Limit) {
		return StatsLimitKey(principal(c)), ratelimit.PerHour(s.deps.Limits.StatsPerHour)
	})(next)
}

// StatsLimitKey names the stats allowance of a caller (the dashboard's
// report cards count against their user's).
func StatsLimitKey(p auth.Principal) string { return "stats:" + callerKey(p) }

// ceilSeconds rounds a duration up to whole seconds (at least 1 when positive).
func ceilSeconds(d time.Duration) int {
	return int((d + time.Second - 1) / time.Second)
}

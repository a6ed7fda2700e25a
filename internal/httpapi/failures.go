package httpapi

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/tally-analytics/tally/internal/accounts"
	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/ratelimit"
)

// failGuard slows clients that keep failing to authenticate — unknown or
// bad keys and tokens, webhooks with bad signatures — before their attempts
// reach the stores. Failures count per client address against a limit
// shared by every instance; once the limit refuses one, this instance
// answers that address 429 at once, asking nothing, until the limit lets
// it through again.
type failGuard struct {
	mu    sync.Mutex
	until map[string]refusal // limit key → its refusal here
}

// refusal is an address refused for failing: until when, and the limit's
// figures for the answers' headers (its size, when it is full again).
type refusal struct {
	until, full time.Time
	limit       int
}

// Kinds of authentication failures, each with its own count.
const (
	failCredential = "credential"
	failSignature  = "signature"
)

const maxBlockedAddresses = 10_000

// failKey is the count of failures of kind from the client at addr: per
// address, and for webhook signatures per address and site (the site_id of
// the webhook's query). A payment provider delivers every site's webhooks
// from the same few addresses, so the deliveries to one site that keep
// failing (a stale secret, or a provider account of the site's owner
// pointed at it to fail on purpose) must not hold back every other site's.
func failKey(kind, addr, site string) string {
	key := "authfail:" + kind + ":" + hashed(clientOf(addr))
	if kind == failSignature {
		key += ":" + hashed(site)
	}
	return key
}

// refuseFailing answers 429 when the client's address is refused for kind.
// With nobody refused — the common case, on every request — it costs a
// map length.
func (s *Server) refuseFailing(c echo.Context, kind string) error {
	s.fails.mu.Lock()
	defer s.fails.mu.Unlock()
	if len(s.fails.until) == 0 {
		return nil
	}
	key := failKey(kind, c.RealIP(), c.QueryParam("site_id"))
	r, ok := s.fails.until[key]
	if !ok {
		return nil
	}
	if left := time.Until(r.until); left > 0 {
		SetLimitHeaders(c.Response().Header(), ratelimit.Result{Limit: r.limit, ResetAfter: time.Until(r.full)})
		return tooManyFailures(left)
	}
	delete(s.fails.until, key)
	return nil
}

// countFailure counts err, an authentication failure of kind, against the
// client's address and returns what to answer: err, or 429 once the
// address has failed too often.
func (s *Server) countFailure(c echo.Context, kind string, err error) error {
	if errs.KindOf(err) != errs.Unauthenticated {
		return err
	}
	key := failKey(kind, c.RealIP(), c.QueryParam("site_id"))
	res, lerr := s.deps.Limiter.AllowN(c.Request().Context(), key, ratelimit.PerMinute(s.deps.Limits.AuthFailuresPerMinute), 1)
	if lerr != nil || res.Allowed {
		return err
	}
	s.deps.Metrics.RateLimited("auth_failures")
	SetLimitHeaders(c.Response().Header(), res)
	now := time.Now()
	s.fails.mu.Lock()
	if s.fails.until == nil || len(s.fails.until) >= maxBlockedAddresses {
		s.fails.until = map[string]refusal{}
	}
	s.fails.until[key] = refusal{until: now.Add(res.RetryAfter), full: now.Add(res.ResetAfter), limit: res.Limit}
	s.fails.mu.Unlock()
	return tooManyFailures(res.RetryAfter)
}

// webhookSiteMissesPerMinute bounds, per client address and instance, the webhooks
// to sites that no cache of the instance knows (found or missing) and that
// Postgres then finds no site for: 60 a minute, a burst of 60 and then one
// a second. Past it a webhook whose site the caches do not answer is
// refused unlooked-up; one whose site they answer still passes.
//
// The failures per address and site (failKey) cannot bound these: each
// made-up site_id is a count of its own. A bound per address alone can,
// and a provider's addresses, which deliver every site's webhooks, stay
// far from it: a site looked up and found gives its lookup back, and a
// deleted site still delivered to costs one lookup a minute (the cache of
// missing sites, accounts.missingSites).
const webhookSiteMissesPerMinute = 60

// siteLookups is the client address's budget of lookups of webhooks'
// sites (see webhookSiteMissesPerMinute). Its refusal is the failures' own 429: the
// unknown sites it bounds are answered as bad signatures.
func (s *Server) siteLookups(c echo.Context) accounts.LookupBudget {
	return func(context.Context) (func(), error) {
		key := hashed(clientOf(c.RealIP()))
		res := s.siteMisses.Take(key)
		if !res.Allowed {
			s.deps.Metrics.RateLimited(limitWebhookSitesName)
			SetLimitHeaders(c.Response().Header(), res)
			return nil, tooManyFailures(res.RetryAfter)
		}
		return func() { s.siteMisses.GiveBack(key) }, nil
	}
}

func tooManyFailures(retry time.Duration) error {
	return &errs.Error{Kind: errs.RateLimited, Code: "rate_limit_exceeded", RetryAfter: retry,
		Message: fmt.Sprintf("too many failed authentications from this address; retry in %d s", ceilSeconds(retry))}
}

package httpapi

import (
	"fmt"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

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
	until map[string]time.Time // limit key → end of its refusal here
}

// Kinds of authentication failures, each with its own count.
const (
	failCredential = "credential"
	failSignature  = "signature"
)

const maxBlockedAddresses = 10_000

func failKey(kind, addr string) string { return "authfail:" + kind + ":" + hashed(clientOf(addr)) }

// refuseFailing answers 429 when the client's address is refused for kind.
// With nobody refused — the common case, on every request — it costs a
// map length.
func (s *Server) refuseFailing(c echo.Context, kind string) error {
	s.fails.mu.Lock()
	defer s.fails.mu.Unlock()
	if len(s.fails.until) == 0 {
		return nil
	}
	key := failKey(kind, c.RealIP())
	until, ok := s.fails.until[key]
	if !ok {
		return nil
	}
	if left := time.Until(until); left > 0 {
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
	key := failKey(kind, c.RealIP())
	res, lerr := s.deps.Limiter.AllowN(c.Request().Context(), key, ratelimit.PerMinute(s.deps.Limits.AuthFailuresPerMinute), 1)
	if lerr != nil || res.Allowed {
		return err
	}
	s.deps.Metrics.RateLimited("auth_failures")
	s.fails.mu.Lock()
	if s.fails.until == nil || len(s.fails.until) >= maxBlockedAddresses {
		s.fails.until = map[string]time.Time{}
	}
	s.fails.until[key] = time.Now().Add(res.RetryAfter)
	s.fails.mu.Unlock()
	return tooManyFailures(res.RetryAfter)
}

func tooManyFailures(retry time.Duration) error {
	return &errs.Error{Kind: errs.RateLimited, Code: "rate_limit_exceeded", RetryAfter: retry,
		Message: fmt.Sprintf("too many failed authentications from this address; retry in %d s", ceilSeconds(retry))}
}

// Package ratelimit limits request rates in Redis, so that the limits hold
// across every API instance. It uses the GCRA algorithm of
// go-redis/redis_rate: a limit of N per period admits a burst of N and then
// one request every period/N, a rolling window with no reset cliff.
package ratelimit

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"
)

// Limit is N requests per period.
type Limit struct {
	N      int
	Period time.Duration
}

// PerHour is n requests per rolling hour.
func PerHour(n int) Limit { return Limit{N: n, Period: time.Hour} }

// PerMinute is n requests per rolling minute.
func PerMinute(n int) Limit { return Limit{N: n, Period: time.Minute} }

// Result is the outcome of one request against a limit.
type Result struct {
	Allowed   bool
	Limit     int
	Remaining int
	// ResetAfter is when the full limit is available again; RetryAfter,
	// when not allowed, is when the next request will pass.
	ResetAfter, RetryAfter time.Duration
}

// Limiter checks limits in Redis.
type Limiter struct {
	rl       *redis_rate.Limiter
	prefix   string
	failures atomic.Int64
}

// New uses keys under prefix+"rl:".
func New(rdb redis.Cmdable, prefix string) *Limiter {
	return &Limiter{rl: redis_rate.NewLimiter(rdb), prefix: prefix + "rl:"}
}

// Allow counts one request for key. When Redis cannot answer, the request
// is allowed (the service keeps working) and the error is returned for the
// caller to log; Failures counts these.
func (l *Limiter) Allow(ctx context.Context, key string, lim Limit) (Result, error) {
	return l.AllowN(ctx, key, lim, 1)
}

// AllowN counts n requests at once (a batch of n events): all of them pass
// or none does. n must not exceed lim.N.
func (l *Limiter) AllowN(ctx context.Context, key string, lim Limit, n int) (Result, error) {
	res, err := l.rl.AllowN(ctx, l.prefix+key, redis_rate.Limit{Rate: lim.N, Burst: lim.N, Period: lim.Period}, n)
	if err != nil {
		l.failures.Add(1)
		return Result{Allowed: true, Limit: lim.N, Remaining: lim.N}, fmt.Errorf("ratelimit: %w", err)
	}
	return Result{Allowed: res.Allowed > 0, Limit: lim.N, Remaining: res.Remaining,
		ResetAfter: max(res.ResetAfter, 0), RetryAfter: max(res.RetryAfter, 0)}, nil
}

// Failures is the number of checks Redis could not answer.
func (l *Limiter) Failures() int64 { return l.failures.Load() }

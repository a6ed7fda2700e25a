// Package ratelimit limits request rates across every API instance without
// a Redis command per request.
//
// The authority is one GCRA state per key in Redis (a limit of N per period
// admits a burst of N, then one request every period/N: a rolling window
// with no reset cliff). An instance takes tokens from it in leases: a
// request that finds no token left on its instance asks Redis for what it
// needs plus some extra, sized to about 500 ms of the key's recent traffic
// and at most 1% of N; the next requests spend the extra locally. Three
// rules keep the limit exact where it matters:
//
//   - Redis only grants tokens it has, so the instances together never admit
//     more than the limit allows (no overshoot, however many instances).
//   - No extra is granted from the last quarter of a key's allowance: close
//     to the limit every request asks Redis, so a key's last tokens are not
//     held by one instance while another refuses (no undershoot there).
//   - Tokens an instance has not spent within a second go back to Redis.
//
// What remains is a bound: while a key has more than a quarter of its
// allowance left, another instance may hold up to 1% of N of it for up to a
// second. One instance alone is exact.
package ratelimit

import (
	"context"
	_ "embed"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

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

// interval is the time one token takes to come back.
func (l Limit) interval() time.Duration { return l.Period / time.Duration(l.N) }

// Result is the outcome of one request against a limit.
type Result struct {
	Allowed   bool
	Limit     int
	Remaining int
	// ResetAfter is when the full limit is available again; RetryAfter,
	// when not allowed, is when the next request will pass.
	ResetAfter, RetryAfter time.Duration
}

const (
	// leaseWindow is how much of a key's recent traffic a lease covers.
	leaseWindow = 500 * time.Millisecond
	// leaseLife is how long an instance keeps tokens it has not spent.
	leaseLife = time.Second
	// maxLeaseShare is the largest extra of a lease, as a share of N.
	maxLeaseShare = 100
	// reserveShare: no extra comes from the last 1/reserveShare of N.
	reserveShare = 4
	// idleLife is how long the state of an unused key is kept.
	idleLife = time.Minute
)

//go:embed lease.lua
var leaseSource string

var leaseScript = redis.NewScript(leaseSource)

// Limiter checks limits, leasing tokens from Redis.
type Limiter struct {
	rdb      redis.Scripter
	prefix   string
	now      func() time.Time
	failures atomic.Int64
	calls    atomic.Int64

	mu   sync.Mutex
	keys map[string]*keyState
}

// keyState is an instance's view of one key: its unspent lease and what
// Redis said last.
type keyState struct {
	mu sync.Mutex
	// tokens were granted by Redis and not yet spent here
	tokens int
	// at is when Redis last answered; left and reset are what it said then:
	// the tokens it had left after the grant, and when it is full again
	at          time.Time
	left        int
	reset       time.Duration
	spent       int       // tokens spent here since at
	deniedUntil time.Time // before this, Redis has no token for this key
	used        time.Time
	lim         Limit // the key's limit at its last use
}

// New uses keys under prefix+"rl:".
func New(rdb redis.Scripter, prefix string) *Limiter {
	return &Limiter{rdb: rdb, prefix: prefix + "rl:", now: time.Now, keys: map[string]*keyState{}}
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
	st := l.state(key)
	st.mu.Lock()
	defer st.mu.Unlock()
	now := l.now()
	st.used, st.lim = now, lim
	if st.tokens >= n {
		st.tokens -= n
		st.spent += n
		return st.allowed(lim, now), nil
	}
	if now.Before(st.deniedUntil) {
		return st.denied(lim, n, now), nil
	}
	// Ask Redis: give back what is left here, take n and a lease.
	extra := 0
	if elapsed := now.Sub(st.at); !st.at.IsZero() && elapsed > 0 {
		rate := float64(st.spent) / elapsed.Seconds()
		extra = min(int(rate*leaseWindow.Seconds()+0.5), lim.N/maxLeaseShare)
	}
	if err := l.ask(ctx, key, lim, st, n, extra, now); err != nil {
		l.failures.Add(1)
		return Result{Allowed: true, Limit: lim.N, Remaining: lim.N}, fmt.Errorf("ratelimit: %w", err)
	}
	if st.tokens < n {
		st.deniedUntil = now.Add(st.retryAfter(lim, 1))
		return st.denied(lim, n, now), nil
	}
	st.tokens -= n
	st.spent += n
	return st.allowed(lim, now), nil
}

// ask runs the lease script: st's unspent tokens go back, and Redis grants
// need plus up to extra tokens, or nothing when it has fewer than need.
func (l *Limiter) ask(ctx context.Context, key string, lim Limit, st *keyState, need, extra int, now time.Time) error {
	l.calls.Add(1)
	res, err := leaseScript.Run(ctx, l.rdb, []string{l.prefix + key}, lim.N, lim.Period.Microseconds(),
		st.tokens, need, extra, lim.N/reserveShare).Int64Slice()
	if err != nil {
		return err
	}
	if len(res) != 3 {
		return fmt.Errorf("lease script answered %v", res)
	}
	st.tokens = int(res[0])
	st.at, st.left, st.reset, st.spent = now, int(res[1]), time.Duration(res[2])*time.Microsecond, 0
	st.deniedUntil = time.Time{}
	return nil
}

// allowed is the answer to a request that passed: Redis's last word, with
// what this instance still holds.
func (st *keyState) allowed(lim Limit, now time.Time) Result {
	reset := st.reset - now.Sub(st.at) - time.Duration(st.tokens)*lim.interval()
	return Result{Allowed: true, Limit: lim.N, Remaining: min(st.left+st.tokens, lim.N), ResetAfter: max(reset, 0)}
}

// denied is the answer to a request of n that cannot pass before Redis has
// n tokens for it.
func (st *keyState) denied(lim Limit, n int, now time.Time) Result {
	elapsed := now.Sub(st.at)
	return Result{Limit: lim.N, Remaining: min(st.left+st.tokens, lim.N), ResetAfter: max(st.reset-elapsed, 0),
		RetryAfter: max(st.retryAfter(lim, n)-elapsed, time.Millisecond)}
}

// retryAfter is how long after Redis's last answer it will have n tokens.
func (st *keyState) retryAfter(lim Limit, n int) time.Duration {
	return st.reset - lim.Period + time.Duration(n-st.tokens)*lim.interval()
}

func (l *Limiter) state(key string) *keyState {
	l.mu.Lock()
	defer l.mu.Unlock()
	st := l.keys[key]
	if st == nil {
		st = &keyState{}
		l.keys[key] = st
	}
	return st
}

// Run gives back, every leaseLife, the tokens this instance holds unspent,
// and forgets keys no longer used, until ctx ends; then it gives back the
// rest.
func (l *Limiter) Run(ctx context.Context) {
	t := time.NewTicker(leaseLife)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
			l.giveBack(stopCtx, 0)
			cancel()
			return
		case <-t.C:
			l.giveBack(ctx, leaseLife)
		}
	}
}

// giveBack returns the unspent tokens of leases older than age.
func (l *Limiter) giveBack(ctx context.Context, age time.Duration) {
	l.mu.Lock()
	keys := make(map[string]*keyState, len(l.keys))
	for k, st := range l.keys {
		keys[k] = st
	}
	l.mu.Unlock()
	now := l.now()
	for key, st := range keys {
		st.mu.Lock()
		if st.tokens > 0 && now.Sub(st.at) >= age {
			if err := l.ask(ctx, key, st.lim, st, 0, 0, now); err != nil {
				l.failures.Add(1)
			}
		}
		idle := st.tokens == 0 && now.Sub(st.used) > idleLife
		st.mu.Unlock()
		if idle {
			l.mu.Lock()
			if l.keys[key] == st {
				delete(l.keys, key)
			}
			l.mu.Unlock()
		}
	}
}

// Failures is the number of checks Redis could not answer.
func (l *Limiter) Failures() int64 { return l.failures.Load() }

// Calls is the number of times this instance asked Redis.
func (l *Limiter) Calls() int64 { return l.calls.Load() }

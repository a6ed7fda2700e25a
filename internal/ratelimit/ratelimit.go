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
// A call whose answer is lost is not counted twice: each call is named, and
// Redis keeps its answer for a while, so the client's retry of it gets the
// same answer without giving back or taking tokens again. When no answer
// comes at all, the instance drops the tokens it was giving back rather
// than spend or give them back again: Redis may have them already. Until
// the key is full again, its allowance is then short by what the instance
// held (at most 1% of N): Redis's failure errs on the side of the limit.
//
// What remains is a bound: while a key has more than a quarter of its
// allowance left, another instance may hold up to 1% of N of it for up to a
// second. One instance alone is exact.
//
// A busy key's requests do not wait for Redis either: once half of a lease
// is spent, the next one is asked for in the background while the rest is
// spent, so only a key's first request, a key near its limit, or one whose
// traffic outruns its lease waits for Redis's answer.
//
// Attempts, beside the Limiter, bounds failures rather than requests (the
// codes tried for an account's second factor), exactly: one Redis call per
// attempt, for operations too rare and too guarded for a lease.
//
// Local, by the Limiter's rule but in memory, limits what costs one
// instance alone, on that instance: no Redis at all.
package ratelimit

import (
	"context"
	_ "embed"
	"fmt"
	"math/rand/v2"
	"strconv"
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
	// renewTimeout bounds a lease asked for in the background.
	renewTimeout = leaseLife
	// answerLife is how long Redis keeps a call's answer for its retries:
	// longer than the client's read timeouts and retry take (tally's: 2 s
	// each, one retry). Short, as each call leaves a key behind for it.
	answerLife = 10 * time.Second
)

//go:embed lease.lua
var leaseSource string

var leaseScript = redis.NewScript(leaseSource)

// Limiter checks limits, leasing tokens from Redis.
type Limiter struct {
	rdb      redis.Scripter
	prefix   string
	name     string        // this instance's, in the names of its calls
	seq      atomic.Uint64 // calls named so far
	now      func() time.Time
	failures atomic.Int64
	calls    atomic.Int64
	waits    atomic.Int64
	renewals atomic.Int64
	// inFlight are the leases being asked for in the background
	inFlight sync.WaitGroup

	mu   sync.Mutex
	keys map[string]*keyState
	// stopped: Run has ended, and no lease is renewed in the background
	// any more (so none is added while Run waits for those in flight)
	stopped bool
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
	// lease is the extra of Redis's last grant (0: none, every request
	// that finds no token asks); renewing, whether the next lease is being
	// asked for in the background
	lease    int
	renewing chan struct{} // closed when the lease asked for has come
}

// New uses keys under prefix+"rl:", and prefix+"rl-call:" for the answers
// of its calls.
func New(rdb redis.Scripter, prefix string) *Limiter {
	return &Limiter{rdb: rdb, prefix: prefix, name: strconv.FormatUint(rand.Uint64(), 36), now: time.Now,
		keys: map[string]*keyState{}}
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
	if st.tokens < n && st.renewing != nil {
		// The next lease is on its way: wait for it rather than ask again
		// (the instance would then hold two). Another request may spend it
		// first and ask for the next.
		l.waits.Add(1)
		for st.tokens < n && st.renewing != nil {
			renewed := st.renewing
			st.mu.Unlock()
			<-renewed
			st.mu.Lock()
		}
		now = l.now()
	}
	if st.tokens >= n {
		st.tokens -= n
		st.spent += n
		if st.renewing == nil && st.lease > 0 && 2*st.tokens < st.lease {
			l.renew(key, lim, st, now)
		}
		return st.allowed(lim, now), nil
	}
	if now.Before(st.deniedUntil) {
		return st.denied(lim, n, now), nil
	}
	// Ask Redis and wait: give back what is left here, take n and a lease
	// (none once Run has ended: nothing would give it back). No renewal is
	// on its way: one that came with too few tokens is over.
	l.waits.Add(1)
	extra := st.extra(lim, now)
	if l.isStopped() {
		extra = 0
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

// extra is the size of the next lease: about leaseWindow of the key's
// traffic since Redis last answered, and no more than this instance may
// hold (1% of N, counting what it holds already).
func (st *keyState) extra(lim Limit, now time.Time) int {
	elapsed := now.Sub(st.at)
	if st.at.IsZero() || elapsed <= 0 {
		return 0
	}
	rate := float64(st.spent) / elapsed.Seconds()
	return max(min(int(rate*leaseWindow.Seconds()+0.5), lim.N/maxLeaseShare-st.tokens), 0)
}

// ask runs the lease script and waits: st's unspent tokens go back, and
// Redis grants need plus up to extra tokens, or nothing when it has fewer
// than need. Without an answer, the tokens being given back are dropped:
// Redis may have taken them back.
func (l *Limiter) ask(ctx context.Context, key string, lim Limit, st *keyState, need, extra int, now time.Time) error {
	grant, left, reset, err := l.lease(ctx, key, lim, st.tokens, need, extra)
	if err != nil {
		st.tokens, st.lease = 0, 0
		return err
	}
	st.tokens = grant
	st.lease = max(grant-need, 0)
	st.at, st.left, st.reset, st.spent = now, left, reset, 0
	st.deniedUntil = time.Time{}
	return nil
}

// renew asks Redis for st's next lease in the background, while the
// requests spend what st holds; st.mu is held. Nothing goes back: the
// tokens granted join those left. If Redis cannot answer, the requests ask
// it themselves once st runs out.
func (l *Limiter) renew(key string, lim Limit, st *keyState, now time.Time) {
	extra := st.extra(lim, now)
	if extra == 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped {
		return
	}
	renewed := make(chan struct{})
	st.renewing = renewed
	l.renewals.Add(1)
	l.inFlight.Go(func() {
		ctx, cancel := context.WithTimeout(context.Background(), renewTimeout)
		defer cancel()
		grant, left, reset, err := l.lease(ctx, key, lim, 0, 0, extra)
		st.mu.Lock()
		defer st.mu.Unlock()
		defer close(renewed)
		st.renewing = nil
		if err != nil {
			l.failures.Add(1)
			return
		}
		st.tokens += grant
		st.lease = grant
		st.at, st.left, st.reset, st.spent = l.now(), left, reset, 0
		if grant > 0 {
			st.deniedUntil = time.Time{}
		}
	})
}

// lease runs the lease script: back tokens go back to Redis, which grants
// need plus up to extra tokens (0 when it has fewer than need), and says
// how many it has left and when it is full again.
func (l *Limiter) lease(ctx context.Context, key string, lim Limit, back, need, extra int) (grant, left int, reset time.Duration, err error) {
	l.calls.Add(1)
	call := l.prefix + "rl-call:" + l.name + ":" + strconv.FormatUint(l.seq.Add(1), 36)
	res, err := leaseScript.Run(ctx, l.rdb, []string{l.prefix + "rl:" + key, call}, lim.N, lim.Period.Microseconds(),
		back, need, extra, lim.N/reserveShare, answerLife.Milliseconds()).Int64Slice()
	if err != nil {
		return 0, 0, 0, err
	}
	if len(res) != 3 {
		return 0, 0, 0, fmt.Errorf("lease script answered %v", res)
	}
	return int(res[0]), int(res[1]), time.Duration(res[2]) * time.Microsecond, nil
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
			l.mu.Lock()
			l.stopped = true
			l.mu.Unlock()
			l.inFlight.Wait() // their tokens go back too
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
		if st.tokens > 0 && now.Sub(st.at) >= age && st.renewing == nil {
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

func (l *Limiter) isStopped() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.stopped
}

// Failures is the number of calls Redis could not answer: requests' asks,
// renewals and give-backs.
func (l *Limiter) Failures() int64 { return l.failures.Load() }

// Calls is the number of times this instance asked Redis.
func (l *Limiter) Calls() int64 { return l.calls.Load() }

// Waits is the number of times a request waited for Redis: for its own
// call, or for the lease being renewed when it found the tokens gone (one
// request may wait for both).
func (l *Limiter) Waits() int64 { return l.waits.Load() }

// Renewals is the number of leases asked for in the background.
func (l *Limiter) Renewals() int64 { return l.renewals.Load() }

package ratelimit_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tally-analytics/tally/internal/ratelimit"
	"github.com/tally-analytics/tally/internal/testenv"
)

func TestLimit(t *testing.T) {
	rdb, prefix := testenv.Redis(t)
	l := ratelimit.New(rdb, prefix)
	ctx := context.Background()
	lim := ratelimit.PerHour(5)
	for i := range 5 {
		res, err := l.Allow(ctx, "k", lim)
		if err != nil || !res.Allowed || res.Remaining != 4-i || res.Limit != 5 {
			t.Fatalf("request %d: %+v, %v", i+1, res, err)
		}
	}
	res, err := l.Allow(ctx, "k", lim)
	if err != nil || res.Allowed {
		t.Fatalf("6th request: %+v, %v; want refused", res, err)
	}
	// GCRA: the next request passes one period/N (12 min) after the last
	if res.RetryAfter < 11*time.Minute || res.RetryAfter > 12*time.Minute || res.ResetAfter < 59*time.Minute {
		t.Errorf("retry after %v, reset after %v; want about 12 min and 1 h", res.RetryAfter, res.ResetAfter)
	}
	// a batch of 2 waits for two tokens: 12 min more
	if res, _ := l.AllowN(ctx, "k", lim, 2); res.Allowed || res.RetryAfter < 23*time.Minute || res.RetryAfter > 24*time.Minute {
		t.Errorf("a batch of 2: %+v; want refused, retry after about 24 min", res)
	}
	if other, _ := l.Allow(ctx, "other", lim); !other.Allowed {
		t.Error("another key is limited too")
	}
	// 5 requests a key are below 1% of nothing: every one asked Redis, and
	// the refusals after the first were answered from the instance
	if l.Calls() != 5+1+1 {
		t.Errorf("%d calls to Redis, want 7 (5 grants, the first refusal, the other key)", l.Calls())
	}
}

// A busy key costs a Redis call per lease, not per request, and the
// remaining count stays that of the whole key.
func TestLeasesSpareRedis(t *testing.T) {
	rdb, prefix := testenv.Redis(t)
	l := ratelimit.New(rdb, prefix)
	ctx := context.Background()
	lim := ratelimit.PerHour(10_000_000)
	start := time.Now()
	var res ratelimit.Result
	for i := range 100_000 {
		var err error
		if res, err = l.Allow(ctx, "busy", lim); err != nil || !res.Allowed {
			t.Fatalf("request %d: %+v, %v", i+1, res, err)
		}
	}
	// A token comes back every 360 µs; the count may hold those.
	back := int(time.Since(start)/(360*time.Microsecond)) + 1
	if res.Remaining < 10_000_000-100_000 || res.Remaining > 10_000_000-100_000+back {
		t.Errorf("remaining %d, want 9,900,000 (+%d come back)", res.Remaining, back)
	}
	if l.Calls() > 100 {
		t.Errorf("%d calls to Redis for 100,000 requests, want at most 100", l.Calls())
	}
	t.Logf("100,000 requests, %d calls to Redis, %v", l.Calls(), time.Since(start))
}

// A busy key's requests do not wait for Redis: the next lease is asked for
// while half of the current one is left. Here every exchange with Redis
// takes 5 ms more (fifty times a round trip on loopback), and the requests
// come in bursts of 50 a millisecond, so that half a lease (a quarter of a
// second of them) outlasts a renewal many times over. Only the first
// requests wait, while the instance learns the key's rate.
func TestBusyKeyDoesNotWaitForRedis(t *testing.T) {
	l := slowLimiter(t)
	ctx := context.Background()
	lim := ratelimit.PerHour(100_000_000) // a token back every 36 µs; 1% of N is a million
	admitted := 0
	send := func(d time.Duration) {
		for start := time.Now(); time.Since(start) < d; time.Sleep(time.Millisecond) {
			for range 50 {
				res, err := l.Allow(ctx, "busy", lim)
				if err != nil || !res.Allowed {
					t.Fatalf("request %d: %+v, %v", admitted+1, res, err)
				}
				admitted++
			}
		}
	}
	start := time.Now()
	send(300 * time.Millisecond)
	waited, renewed, before := l.Waits(), l.Renewals(), admitted
	send(1500 * time.Millisecond)
	// How many leases 1.5 s takes depends on how fast this machine sends
	// (a lease is half a second of the rate it learned): what must hold
	// whatever the speed is that none waited, and that the leases it took
	// were renewed in the background.
	if l.Waits() != waited || l.Renewals() == renewed {
		t.Errorf("%d requests after the first 300 ms: %d waited for Redis, %d leases renewed in the background; want none waiting, and a renewal or more",
			admitted-before, l.Waits()-waited, l.Renewals()-renewed)
	}
	// what was admitted is counted, with the tokens that came back since
	res, err := l.Allow(ctx, "busy", lim)
	back := int(time.Since(start)/(36*time.Microsecond)) + 1
	if want := 100_000_000 - admitted - 1; err != nil || res.Remaining < want || res.Remaining > want+back {
		t.Errorf("after %d requests: %+v, %v; want %d remaining (+%d come back)", admitted, res, err, want, back)
	}
	t.Logf("%d requests, %d calls to Redis; the first 300 ms: %d requests, %d waited", admitted, l.Calls(), before, waited)
}

// slowLimiter is a limiter on the test Redis through a proxy that holds
// every exchange 5 ms (fifty times a round trip on loopback).
func slowLimiter(t *testing.T) *ratelimit.Limiter {
	t.Helper()
	rdb, prefix := testenv.Redis(t)
	proxy := testenv.NewProxy(t, rdb.Options().Addr)
	proxy.Inspect(func() func([]byte) time.Duration {
		return func([]byte) time.Duration { return 5 * time.Millisecond }
	})
	opts := *rdb.Options()
	opts.Addr = proxy.Addr
	slow := redis.NewClient(&opts)
	t.Cleanup(func() { slow.Close() })
	return ratelimit.New(slow, prefix)
}

// An instance stopping while its requests go on: Run waits for the leases
// being renewed before it gives the unspent tokens back, no renewal starts
// after that, and the requests still pass (asking Redis themselves).
func TestStopWhileRenewing(t *testing.T) {
	l := slowLimiter(t)
	ctx := context.Background()
	lim := ratelimit.PerHour(100_000_000)
	runCtx, stop := context.WithCancel(ctx)
	stopped := make(chan struct{})
	go func() { l.Run(runCtx); close(stopped) }()
	var wg sync.WaitGroup
	var refused atomic.Int64
	deadline := time.Now().Add(600 * time.Millisecond)
	for range 8 {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				if res, err := l.Allow(ctx, "busy", lim); err != nil || !res.Allowed {
					refused.Add(1)
				}
			}
		})
	}
	time.Sleep(300 * time.Millisecond)
	stop()
	<-stopped
	renewed, calls := l.Renewals(), l.Calls()
	wg.Wait()
	if refused.Load() != 0 {
		t.Errorf("%d requests refused or failed around the stop", refused.Load())
	}
	if renewed == 0 || l.Renewals() != renewed {
		t.Errorf("%d leases renewed in the background before the stop, %d after; want some before, none after",
			renewed, l.Renewals()-renewed)
	}
	t.Logf("%d calls to Redis, %d after the stop", l.Calls(), l.Calls()-calls)
}

// Tokens an instance holds go back to Redis when it stops (and after a
// second unspent), for the other instances.
func TestUnspentTokensGoBack(t *testing.T) {
	rdb, prefix := testenv.Redis(t)
	a, b := ratelimit.New(rdb, prefix), ratelimit.New(rdb, prefix)
	ctx := context.Background()
	lim := ratelimit.PerHour(100_000) // a token back every 36 ms
	for range 1000 {
		if res, _ := a.Allow(ctx, "k", lim); !res.Allowed {
			t.Fatal("refused")
		}
	}
	held, _ := b.Allow(ctx, "k", lim)
	// a holds up to 1% of N beyond the 1,000 it spent
	if held.Remaining > 100_000-1001+2 || held.Remaining < 100_000-1001-1000 {
		t.Fatalf("b sees %d remaining, want 98,999 less what a holds (at most 1,000)", held.Remaining)
	}
	running(a)()
	// b holds no token: its next request asks Redis
	res, _ := b.Allow(ctx, "k", lim)
	if !res.Allowed || res.Remaining < 100_000-1002 || res.Remaining > 100_000-1002+3 {
		t.Errorf("after a gave back: %+v, want 98,998 remaining (+ a few come back)", res)
	}
}

// Two instances spending one key together admit exactly its limit: none
// more, and none of its last quarter stays unspent in a lease.
func TestTwoInstancesAdmitTheLimit(t *testing.T) {
	rdb, prefix := testenv.Redis(t)
	insts := []*ratelimit.Limiter{ratelimit.New(rdb, prefix), ratelimit.New(rdb, prefix)}
	ctx := context.Background()
	lim := ratelimit.PerHour(2000) // a token back every 1.8 s
	var allowed, refusedInARow atomic.Int64
	start := time.Now()
	var wg sync.WaitGroup
	for w := range 16 {
		wg.Go(func() {
			for i := 0; refusedInARow.Load() < 200; i++ {
				res, err := insts[(w+i)%2].Allow(ctx, "k", lim)
				if err != nil {
					t.Error(err)
					return
				}
				if res.Allowed {
					allowed.Add(1)
					refusedInARow.Store(0)
				} else {
					refusedInARow.Add(1)
				}
			}
		})
	}
	wg.Wait()
	back := int64(time.Since(start) / (1800 * time.Millisecond))
	if allowed.Load() < 2000 || allowed.Load() > 2000+back {
		t.Errorf("%d admitted, want 2,000 (+%d come back)", allowed.Load(), back)
	}
	t.Logf("%d admitted in %v; %d and %d calls to Redis", allowed.Load(), time.Since(start), insts[0].Calls(), insts[1].Calls())
}

func TestRedisDownAllows(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 100 * time.Millisecond})
	defer rdb.Close()
	l := ratelimit.New(rdb, "x:")
	res, err := l.Allow(context.Background(), "k", ratelimit.PerMinute(1))
	if err == nil || !res.Allowed || l.Failures() != 1 {
		t.Errorf("with Redis down: %+v, %v, failures %d; want allowed, an error, and 1 failure", res, err, l.Failures())
	}
}

// running runs l's Run until the returned stop, which waits for it.
func running(l *ratelimit.Limiter) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { l.Run(ctx); close(done) }()
	return func() { cancel(); <-done }
}

// admit sends n requests of key "k" to l, each of which must pass.
func admit(t *testing.T, l *ratelimit.Limiter, lim ratelimit.Limit, n int) {
	t.Helper()
	for range n {
		if res, err := l.Allow(context.Background(), "k", lim); err != nil || !res.Allowed {
			t.Fatalf("refused: %+v, %v", res, err)
		}
	}
}

// checkRemaining asks b for a token of key "k" and checks what Redis has
// left: want, plus the tokens that came back since start.
func checkRemaining(t *testing.T, b *ratelimit.Limiter, lim ratelimit.Limit, want int, start time.Time, why string) {
	t.Helper()
	res, _ := b.Allow(context.Background(), "k", lim)
	back := int(time.Since(start)/(lim.Period/time.Duration(lim.N))) + 1
	if res.Remaining < want || res.Remaining > want+back {
		t.Errorf("%d remaining, want %d (+%d come back): %s", res.Remaining, want, back, why)
	}
}

// lateLimiters are a limiter a whose client gives up on an answer after
// 100 ms and then sends the call again retries times, through a proxy that
// holds a's next lease call 300 ms once hold is called (held reports
// whether it did), and a limiter b on the same Redis directly.
func lateLimiters(t *testing.T, retries int) (a, b *ratelimit.Limiter, hold func(), held func() bool) {
	t.Helper()
	rdb, prefix := testenv.Redis(t)
	proxy := testenv.NewProxy(t, rdb.Options().Addr)
	var late atomic.Bool
	proxy.Inspect(func() func([]byte) time.Duration {
		return func(piece []byte) time.Duration {
			if strings.Contains(string(piece), "rl-call:") && late.CompareAndSwap(true, false) {
				return 300 * time.Millisecond
			}
			return 0
		}
	})
	opts := *rdb.Options()
	opts.Addr, opts.ReadTimeout, opts.MaxRetries = proxy.Addr, 100*time.Millisecond, retries
	client := redis.NewClient(&opts)
	t.Cleanup(func() { client.Close() })
	return ratelimit.New(client, prefix), ratelimit.New(rdb, prefix), func() { late.Store(true) }, func() bool { return !late.Load() }
}

// A call whose answer came too late, so that the client sent it again
// (go-redis retries a command whose reply timed out): Redis answers the
// retry with the first answer, and the tokens given back go back once.
func TestRetriedCallCountsOnce(t *testing.T) {
	a, b, hold, held := lateLimiters(t, 1)
	lim := ratelimit.PerHour(10_000) // a token back every 360 ms
	start := time.Now()
	admit(t, a, lim, 500)
	admit(t, b, lim, 1)
	// the stop gives a's unspent tokens back, in a call answered too late
	// the first time
	hold()
	running(a)()
	if !held() {
		t.Fatal("the give-back was not held")
	}
	if a.Failures() != 0 {
		t.Errorf("%d failed calls; the retry should have had the first answer", a.Failures())
	}
	time.Sleep(300 * time.Millisecond) // the held call reaches Redis after its retry
	// b's second request sees every token but the 502 spent
	checkRemaining(t, b, lim, 10_000-502, start, "a's tokens went back twice")
}

// A call that gets no answer at all may still have reached Redis: the
// tokens it gave back are dropped, neither spent nor given back again.
func TestLostAnswerDropsTokens(t *testing.T) {
	a, b, hold, held := lateLimiters(t, -1)
	lim := ratelimit.PerHour(10_000)
	start := time.Now()
	admit(t, a, lim, 500)
	hold()
	running(a)()
	if !held() || a.Failures() != 1 {
		t.Fatalf("held: %v, %d failed calls; want the give-back held and failed", held(), a.Failures())
	}
	time.Sleep(300 * time.Millisecond) // the give-back reaches Redis now
	calls := a.Calls()
	admit(t, a, lim, 1)
	if a.Calls() != calls+1 {
		t.Fatalf("%d calls to Redis after the lost answer; want the request to ask Redis", a.Calls()-calls)
	}
	checkRemaining(t, b, lim, 10_000-502, start, "a's tokens went back twice or were spent")
}

// A request after Run has ended asks Redis for what it needs and no lease:
// nothing would give one back.
func TestNoLeaseAfterStop(t *testing.T) {
	rdb, prefix := testenv.Redis(t)
	a, b := ratelimit.New(rdb, prefix), ratelimit.New(rdb, prefix)
	lim := ratelimit.PerHour(10_000)
	start := time.Now()
	stop := running(a)
	admit(t, a, lim, 500)
	stop()
	admit(t, a, lim, 3)
	checkRemaining(t, b, lim, 10_000-504, start, "a holds tokens after its stop")
}

package ratelimit_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/tally-analytics/tally/internal/ratelimit"
	"github.com/tally-analytics/tally/internal/testenv"
)

// At most N failures in any window, by the caller's clock: the N+1st is
// refused until the first leaves the window, and then one more passes.
func TestAttemptsBound(t *testing.T) {
	rdb, prefix := testenv.Redis(t)
	a := ratelimit.NewAttempts(rdb, prefix)
	ctx := context.Background()
	b := ratelimit.Bound{N: 3, Window: time.Minute}
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	begin := func(key string, at time.Duration, want time.Duration) ratelimit.Attempt {
		t.Helper()
		att, wait, err := a.Begin(ctx, key, b, t0.Add(at))
		if err != nil || wait != want {
			t.Fatalf("%s at +%v: wait %v (%v), want %v", key, at, wait, err, want)
		}
		return att
	}
	begin("k", 0, 0)
	begin("k", 10*time.Second, 0)
	begin("k", 20*time.Second, 0)
	// the failures of +0, +10 s and +20 s are in the window: the first
	// leaves it at +60 s, 30 s after +30 s
	begin("k", 30*time.Second, 30*time.Second)
	begin("k", 59*time.Second, time.Second)
	begin("other", 59*time.Second, 0) // another key has its own bound
	begin("k", 60*time.Second, 0)
	// +10 s, +20 s and +60 s: the next leaves at +70 s
	begin("k", 61*time.Second, 9*time.Second)
}

// A success is not a failure: taken back, it leaves room for one more.
func TestAttemptsSucceededIsNotCounted(t *testing.T) {
	rdb, prefix := testenv.Redis(t)
	a := ratelimit.NewAttempts(rdb, prefix)
	ctx := context.Background()
	b := ratelimit.Bound{N: 2, Window: time.Minute}
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	first, wait, err := a.Begin(ctx, "k", b, t0)
	if err != nil || wait != 0 {
		t.Fatalf("first: %v, %v", wait, err)
	}
	if err := a.Succeeded(ctx, first); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if _, wait, err := a.Begin(ctx, "k", b, t0.Add(time.Duration(i+1)*time.Second)); err != nil || wait != 0 {
			t.Fatalf("failure %d: %v, %v", i+1, wait, err)
		}
	}
	// failures at +1 s and +2 s: the first leaves at +61 s
	if _, wait, err := a.Begin(ctx, "k", b, t0.Add(3*time.Second)); err != nil || wait != 58*time.Second {
		t.Fatalf("third failure: wait %v (%v), want 58s", wait, err)
	}
}

// Attempts begun at once, before any outcome is known, pass the bound no
// more than one by one: of 20 at the same moment, from two instances,
// exactly 5 are counted.
func TestAttemptsAtOnce(t *testing.T) {
	rdb, prefix := testenv.Redis(t)
	insts := []*ratelimit.Attempts{ratelimit.NewAttempts(rdb, prefix), ratelimit.NewAttempts(rdb, prefix)}
	b := ratelimit.Bound{N: 5, Window: 15 * time.Minute}
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	counted, refused := 0, 0
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			_, wait, err := insts[i%2].Begin(context.Background(), "k", b, now)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				t.Error(err)
			case wait == 0:
				counted++
			case wait == 15*time.Minute:
				refused++
			default:
				t.Errorf("refused with wait %v, want 15m", wait)
			}
		})
	}
	wg.Wait()
	if counted != 5 || refused != 15 {
		t.Errorf("%d counted, %d refused; want 5 and 15", counted, refused)
	}
}

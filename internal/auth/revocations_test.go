package auth_test

import (
	"context"
	"testing"
	"time"

	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/testenv"
)

// Instances that follow the counter answer from memory, and a bump returns
// only once each of them holds the new value.
func TestRevocationsAreFollowed(t *testing.T) {
	rdb, prefix := testenv.Redis(t)
	ctx := context.Background()
	log := testenv.Logger(t)
	a, b := auth.NewRedisRevocations(rdb, prefix, log), auth.NewRedisRevocations(rdb, prefix, log)
	follow := func(r *auth.RedisRevocations) context.CancelFunc {
		runCtx, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { r.Run(runCtx); close(done) }()
		deadline := time.Now().Add(5 * time.Second)
		for !r.Following() {
			if time.Now().After(deadline) {
				t.Fatal("not following the counter after 5 s")
			}
			time.Sleep(5 * time.Millisecond)
		}
		return func() { stop(); <-done }
	}
	stopA, stopB := follow(a), follow(b)
	defer func() { stopA() }()

	// a bump from an instance that does not follow (the CLI) waits for both
	cli := auth.NewRedisRevocations(rdb, prefix, log)
	for want := int64(1); want <= 3; want++ {
		if err := cli.Bump(ctx); err != nil {
			t.Fatal(err)
		}
		for name, r := range map[string]*auth.RedisRevocations{"a": a, "b": b} {
			if v, err := r.Version(ctx); err != nil || counter(v) != want {
				t.Fatalf("%s right after bump %d: version %d, %v", name, want, v, err)
			}
		}
	}
	// Followers answer from memory: a change behind their back is not seen…
	if err := rdb.Set(ctx, prefix+"auth:revocations", 100, 0).Err(); err != nil {
		t.Fatal(err)
	}
	if v, _ := b.Version(ctx); counter(v) != 3 {
		t.Errorf("following, b read %d; want 3 from memory", v)
	}
	// …until it stops following and reads Redis again.
	stopB()
	if v, err := b.Version(ctx); err != nil || counter(v) != 100 {
		t.Errorf("no longer following, b read %d, %v; want 100 from Redis", v, err)
	}
	// a bump waits for a's confirmation only (b left): at once, not ackWait
	start := time.Now()
	if err := a.Bump(ctx); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took >= 2*time.Second {
		t.Errorf("a bump with one follower took %v", took)
	}
	if v, _ := a.Version(ctx); counter(v) != 101 {
		t.Errorf("a after its own bump: %d, want 101", v)
	}
	// Following again after a pause (an outage of Redis, during which a
	// bump may have been lost): the version differs from every one before
	// it, though the counter did not move, so nothing cached stays current.
	before, _ := a.Version(ctx)
	stopA()
	stopA = follow(a)
	after, _ := a.Version(ctx)
	if after == before || counter(after) != counter(before) {
		t.Errorf("following again: version %d then %d; want a new value over the same counter", before, after)
	}
}

// counter is the revocation counter in a version (without its epoch).
func counter(v int64) int64 { return v & (1<<48 - 1) }

package ratelimit

import (
	"context"
	_ "embed"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Bound is at most N failed attempts in any Window.
type Bound struct {
	N      int
	Window time.Duration
}

//go:embed attempts.lua
var attemptsSource string

var attemptsScript = redis.NewScript(attemptsSource)

// Attempts bounds the failed attempts of a key (the second factors tried
// for one account) across every instance: unlike a Limiter, which counts
// requests, it counts failures, and counts each before its outcome is
// known. An attempt is a failure from Begin until Succeeded takes it back,
// so that concurrent attempts cannot pass the bound together while their
// outcomes are pending.
//
// Redis holds a log of each key's attempts by time (a sorted set): exact,
// a rolling window with no reset cliff, and at most N entries a key. The
// times are the caller's clock, so that all instances and the tests agree
// on the window through the clock they are given.
type Attempts struct {
	rdb    redis.Cmdable
	prefix string
}

// NewAttempts keeps its logs under prefix+"attempts:".
func NewAttempts(rdb redis.Cmdable, prefix string) *Attempts {
	return &Attempts{rdb: rdb, prefix: prefix}
}

// Attempt is one attempt counted, a failure until it is Succeeded.
type Attempt struct {
	key, id string
}

// Begin counts an attempt of key at now, as a failure until Succeeded.
// When the bound's N failures are in the window before now already, it
// counts nothing and says how long until one of them leaves the window:
// until then every attempt is refused, a right one too.
func (a *Attempts) Begin(ctx context.Context, key string, b Bound, now time.Time) (Attempt, time.Duration, error) {
	at := Attempt{key: a.prefix + "attempts:" + key, id: strconv.FormatInt(now.UnixMilli(), 36) + ":" +
		strconv.FormatUint(rand.Uint64(), 36)}
	wait, err := attemptsScript.Run(ctx, a.rdb, []string{at.key}, now.UnixMilli(), b.Window.Milliseconds(), b.N, at.id).Int64()
	if err != nil {
		return Attempt{}, 0, fmt.Errorf("ratelimit: attempts: %w", err)
	}
	return at, time.Duration(wait) * time.Millisecond, nil
}

// Succeeded takes the attempt back: it did not fail.
func (a *Attempts) Succeeded(ctx context.Context, at Attempt) error {
	if err := a.rdb.ZRem(ctx, at.key, at.id).Err(); err != nil {
		return fmt.Errorf("ratelimit: attempts: %w", err)
	}
	return nil
}

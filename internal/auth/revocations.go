package auth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisRevocations keeps the revocation counter in Redis, shared by every
// instance, without a Redis command per request: each running instance
// subscribes to the counter's changes and keeps the current value, and a
// bump returns once every subscribed instance has confirmed it holds the
// new value. An instance whose subscription is not live reads the counter
// from Redis on every request instead, as it did before subscribing.
type RedisRevocations struct {
	rdb     redis.UniversalClient
	key     string
	channel string
	log     *slog.Logger

	live    atomic.Bool  // subscribed, and version is current
	version atomic.Int64 // the counter, while live
	// epoch counts the times this instance started or stopped following
	// the counter: a bump made while Redis was out of reach (a key revoked,
	// a member removed) never reached the counter, so whatever was cached
	// before must not count as current after it. Forget starts one too.
	epoch atomic.Int64
}

const (
	// ackWait bounds how long a bump waits for the instances' confirmations.
	ackWait = 2 * time.Second
	// quietPing: a subscription quiet this long is pinged; without an answer
	// in as long again it is no longer trusted.
	quietPing = 5 * time.Second
)

// NewRedisRevocations uses the key prefix+"auth:revocations" and the channel
// of the same name.
func NewRedisRevocations(rdb redis.UniversalClient, prefix string, log *slog.Logger) *RedisRevocations {
	key := prefix + "auth:revocations"
	return &RedisRevocations{rdb: rdb, key: key, channel: key, log: log}
}

// Version is the counter (0 when it was never bumped), marked with the
// epoch while followed: a value cached before an outage of Redis never
// equals one after it.
func (r *RedisRevocations) Version(ctx context.Context) (int64, error) {
	epoch := r.epoch.Load() << 48
	if r.live.Load() {
		return r.version.Load() ^ epoch, nil
	}
	v, err := r.read(ctx)
	return v ^ epoch, err
}

// Forget makes everything cached at the versions given so far stale on this
// instance: the database announced a change (one made by hand in Postgres
// bumps no counter), or may have while nobody listened.
func (r *RedisRevocations) Forget() { r.epoch.Add(1) }

// setLive records whether the counter is followed; each change starts an epoch.
func (r *RedisRevocations) setLive(live bool) {
	if r.live.Swap(live) != live {
		r.epoch.Add(1)
	}
}

// Following reports whether this instance follows the counter (Version
// answers from memory).
func (r *RedisRevocations) Following() bool { return r.live.Load() }

func (r *RedisRevocations) read(ctx context.Context) (int64, error) {
	v, err := r.rdb.Get(ctx, r.key).Int64()
	if errors.Is(err, redis.Nil) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("auth: revocation version: %w", err)
	}
	return v, nil
}

// ackKey is the list on which the instances confirm version v.
func (r *RedisRevocations) ackKey(v int64) string { return r.key + ":ack:" + strconv.FormatInt(v, 10) }

// Bump changes the counter, invalidating every instance's cached keys, and
// returns once every instance that follows the counter holds the new value
// (or after ackWait: an instance that did not confirm by then has lost its
// subscription, and reads the counter on each request until it is back).
// A failure is logged here too: the change itself is saved in Postgres,
// which announces it to every instance as well (see Forget).
func (r *RedisRevocations) Bump(ctx context.Context) error {
	err := r.bump(ctx)
	if err != nil {
		r.log.Warn("auth: servers not told of an access change through Redis; Postgres announces it", "err", err)
	}
	return err
}

func (r *RedisRevocations) bump(ctx context.Context) error {
	v, err := r.rdb.Incr(ctx, r.key).Result()
	if err != nil {
		return fmt.Errorf("auth: bump revocation version: %w", err)
	}
	n, err := r.rdb.Publish(ctx, r.channel, v).Result()
	if err != nil {
		return fmt.Errorf("auth: announce revocation: %w", err)
	}
	ack := r.ackKey(v)
	defer r.rdb.Del(context.WithoutCancel(ctx), ack)
	deadline := time.Now().Add(ackWait)
	for range n {
		wait := time.Until(deadline)
		if wait <= 0 {
			break
		}
		if err := r.rdb.BLPop(ctx, wait, ack).Err(); err != nil {
			if errors.Is(err, redis.Nil) {
				break // someone did not confirm in time
			}
			return fmt.Errorf("auth: wait for instances to confirm a revocation: %w", err)
		}
	}
	return nil
}

// Run follows the counter until ctx ends: subscribed, Version answers
// from memory; otherwise from Redis.
func (r *RedisRevocations) Run(ctx context.Context) {
	defer r.setLive(false)
	ps := r.rdb.Subscribe(ctx, r.channel)
	stopped := context.AfterFunc(ctx, func() { ps.Close() }) // ends a receive under way
	defer stopped()
	defer ps.Close()
	pinged := false
	for ctx.Err() == nil {
		msg, err := ps.ReceiveTimeout(ctx, quietPing)
		if err != nil {
			var netErr interface{ Timeout() bool }
			if errors.As(err, &netErr) && netErr.Timeout() && !pinged {
				pinged = true
				if err := ps.Ping(ctx); err == nil {
					continue
				}
			}
			// go-redis subscribes again on the next receive
			r.setLive(false)
			pinged = false
			if ctx.Err() == nil {
				select {
				case <-ctx.Done():
				case <-time.After(100 * time.Millisecond):
				}
			}
			continue
		}
		pinged = false
		switch m := msg.(type) {
		case *redis.Pong:
			// The subscription answers again: anything published meanwhile
			// arrived before this.
			if !r.live.Load() {
				if v, err := r.read(ctx); err == nil {
					r.version.Store(max(v, r.version.Load()))
					r.setLive(true)
				}
			}
		case *redis.Subscription:
			// Subscribed (again): bumps from now on arrive as messages, the
			// ones before are in the counter.
			if v, err := r.read(ctx); err == nil {
				r.version.Store(v)
				r.setLive(true)
			}
		case *redis.Message:
			v, err := strconv.ParseInt(m.Payload, 10, 64)
			if err != nil {
				continue
			}
			if v > r.version.Load() {
				r.version.Store(v)
			}
			ack := r.ackKey(v)
			pipe := r.rdb.Pipeline()
			pipe.RPush(ctx, ack, 1)
			pipe.Expire(ctx, ack, time.Minute)
			if _, err := pipe.Exec(ctx); err != nil && ctx.Err() == nil {
				r.log.Warn("auth: cannot confirm a revocation", "err", err)
			}
		}
	}
}

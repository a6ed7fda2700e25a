package auth

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// RedisRevocations keeps the revocation counter in Redis, shared by every
// instance.
type RedisRevocations struct {
	rdb redis.Cmdable
	key string
}

// NewRedisRevocations uses the key prefix+"auth:revocations".
func NewRedisRevocations(rdb redis.Cmdable, prefix string) *RedisRevocations {
	return &RedisRevocations{rdb: rdb, key: prefix + "auth:revocations"}
}

// Version reads the counter (0 when it was never bumped).
func (r *RedisRevocations) Version(ctx context.Context) (int64, error) {
	v, err := r.rdb.Get(ctx, r.key).Int64()
	if errors.Is(err, redis.Nil) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("auth: revocation version: %w", err)
	}
	return v, nil
}

// Bump changes the counter, invalidating every instance's cached keys.
func (r *RedisRevocations) Bump(ctx context.Context) error {
	if err := r.rdb.Incr(ctx, r.key).Err(); err != nil {
		return fmt.Errorf("auth: bump revocation version: %w", err)
	}
	return nil
}

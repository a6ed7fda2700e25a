package ratelimit_test

import (
	"context"
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
	if other, _ := l.Allow(ctx, "other", lim); !other.Allowed {
		t.Error("another key is limited too")
	}
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

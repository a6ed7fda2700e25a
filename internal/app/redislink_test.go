package app_test

import (
	"bytes"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tally-analytics/tally/internal/testenv"
)

// redisLink is a proxy to Redis that holds back, for a while, every script
// call naming a batch's applied set (prefix + "applied:"): the sessions'
// compare-and-set. A batch's states are then read at once and written late,
// so another instance can move them on in between. The link counts the
// compare-and-set calls it held and the applied-set lookups (SMISMEMBER),
// which a batch makes only when it computes visitors again, because another
// instance moved their states on after it read them (or when it is replayed
// after a restart).
type redisLink struct {
	sets, lookups atomic.Int64
}

// newRedisLink puts a link in front of cfg's Redis for the test's duration
// and points cfg at it.
func newRedisLink(t *testing.T, cfg *configT, hold time.Duration) *redisLink {
	t.Helper()
	u, err := url.Parse(cfg.RedisURL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := testenv.NewProxy(t, u.Host)
	l := &redisLink{}
	applied := []byte(cfg.RedisPrefix + "applied:")
	// go-redis writes command names in lower case, each as a bulk string of
	// its own
	proxy.Inspect(func() func([]byte) time.Duration {
		applied := &wordCount{word: applied}
		evalsha, eval := &wordCount{word: []byte("\r\nevalsha\r\n")}, &wordCount{word: []byte("\r\neval\r\n")}
		lookup := &wordCount{word: []byte("\r\nsmismember\r\n")}
		return func(p []byte) time.Duration {
			scripts, lookups := evalsha.add(p)+eval.add(p), lookup.add(p)
			if applied.add(p) == 0 {
				return 0
			}
			l.lookups.Add(int64(lookups))
			if scripts == 0 {
				return 0
			}
			l.sets.Add(int64(scripts))
			return hold
		}
	})
	u.Host = proxy.Addr
	cfg.RedisURL = u.String()
	return l
}

// wordCount counts a word in a stream read in pieces, including where a
// read splits it.
type wordCount struct {
	word, tail []byte
}

func (w *wordCount) add(p []byte) int {
	window := append(w.tail, p...)
	n := bytes.Count(window, w.word)
	w.tail = append(w.tail[:0:0], window[max(0, len(window)-len(w.word)+1):]...)
	return n
}

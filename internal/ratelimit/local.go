package ratelimit

import (
	"sync"
	"time"
)

// Local limits a key's requests on this instance alone, in memory, by the
// Limiter's rule (a limit of N per period admits a burst of N, then one
// request every period/N), for what bounds a cost of the instance itself
// — the Postgres lookups its own caches do not spare it — and so need not,
// and should not, wait for Redis. A token taken can be given back, for a
// request that turned out not to cost what the limit bounds.
//
// It holds at most maxKeys keys: a key whose allowance is whole again is
// dropped, and when every key is in use, all are (each is then whole
// again, as after a restart of the instance).
type Local struct {
	lim     Limit
	maxKeys int
	now     func() time.Time

	mu sync.Mutex
	// full is when each key's allowance is whole again (GCRA's theoretical
	// arrival time); a key not held is whole
	full map[string]time.Time
}

// NewLocal limits keys to lim on this instance, holding at most maxKeys
// keys, by the clock now.
func NewLocal(lim Limit, maxKeys int, now func() time.Time) *Local {
	return &Local{lim: lim, maxKeys: maxKeys, now: now, full: map[string]time.Time{}}
}

// Take takes one of key's tokens, or refuses when none is left (the
// Result's RetryAfter says when one is back).
func (l *Local) Take(key string) Result {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	full, held := l.full[key]
	if !held || full.Before(now) {
		full = now
	}
	next := full.Add(l.lim.interval())
	if over := next.Sub(now) - l.lim.Period; over > 0 {
		return Result{Limit: l.lim.N, ResetAfter: full.Sub(now), RetryAfter: over}
	}
	if !held && len(l.full) >= l.maxKeys {
		l.makeRoom(now)
	}
	l.full[key] = next
	return Result{Allowed: true, Limit: l.lim.N, Remaining: int((l.lim.Period - next.Sub(now)) / l.lim.interval()),
		ResetAfter: next.Sub(now)}
}

// GiveBack returns a token Take took from key.
func (l *Local) GiveBack(key string) {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	full, held := l.full[key]
	if !held {
		return
	}
	if full = full.Add(-l.lim.interval()); full.After(now) {
		l.full[key] = full
	} else {
		delete(l.full, key)
	}
}

// makeRoom drops the keys whose allowance is whole again, or every key
// when none is.
func (l *Local) makeRoom(now time.Time) {
	for k, full := range l.full {
		if !full.After(now) {
			delete(l.full, k)
		}
	}
	if len(l.full) >= l.maxKeys {
		clear(l.full)
	}
}

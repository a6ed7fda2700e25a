package ratelimit

import (
	"testing"
	"time"
)

// 3 a minute: a burst of 3, then one every 20 s; a token given back is
// there again at once.
func TestLocalBurstRefillAndGiveBack(t *testing.T) {
	now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	l := NewLocal(PerMinute(3), 10, func() time.Time { return now })
	for i, remaining := range []int{2, 1, 0} {
		res := l.Take("a")
		if !res.Allowed || res.Limit != 3 || res.Remaining != remaining || res.ResetAfter != time.Duration(i+1)*20*time.Second {
			t.Fatalf("take %d: %+v, want allowed with %d left, whole in %d s", i+1, res, remaining, (i+1)*20)
		}
	}
	res := l.Take("a")
	if res.Allowed || res.RetryAfter != 20*time.Second || res.ResetAfter != time.Minute || res.Remaining != 0 {
		t.Errorf("4th take: %+v, want refused, a token back in 20 s, whole in 60 s", res)
	}
	if res := l.Take("b"); !res.Allowed || res.Remaining != 2 {
		t.Errorf("another key: %+v, want its own allowance", res)
	}
	l.GiveBack("a")
	if res := l.Take("a"); !res.Allowed || res.Remaining != 0 {
		t.Errorf("after a token given back: %+v, want allowed, 0 left", res)
	}
	now = now.Add(19 * time.Second)
	if res := l.Take("a"); res.Allowed || res.RetryAfter != time.Second {
		t.Errorf("19 s on: %+v, want refused, retry in 1 s", res)
	}
	now = now.Add(time.Second)
	if res := l.Take("a"); !res.Allowed || res.Remaining != 0 {
		t.Errorf("20 s on: %+v, want the token come back", res)
	}
	now = now.Add(time.Minute)
	if res := l.Take("a"); !res.Allowed || res.Remaining != 2 {
		t.Errorf("a minute idle: %+v, want whole again (2 left after this one)", res)
	}
}

// A Local holds at most its keys: whole ones leave first, and when every
// key is in use, all of them.
func TestLocalBoundedKeys(t *testing.T) {
	now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	l := NewLocal(PerMinute(2), 2, func() time.Time { return now })
	l.Take("a")
	now = now.Add(10 * time.Second)
	l.Take("b")
	now = now.Add(25 * time.Second) // a is whole again (30 s after its take), b is not
	l.Take("c")
	if _, held := l.full["a"]; held || len(l.full) != 2 {
		t.Errorf("keys held %v, want b and c: a was whole", l.full)
	}
	l.Take("d") // b and c in use: all go
	if len(l.full) != 1 {
		t.Errorf("keys held %v, want d alone", l.full)
	}
	// a key given back to whole is not held
	l.GiveBack("d")
	if len(l.full) != 0 {
		t.Errorf("keys held %v after d's one token came back, want none", l.full)
	}
}

package wal

import (
	"context"
	"testing"
	"time"
)

// With Callers, the writer holds a group back only while a call in progress
// could still join it: here SyncEvery is an hour, so every append that
// returns was committed early, and each commit is counted.
func TestCallersEndTheHoldBack(t *testing.T) {
	var c Callers
	l := openLog(t, Options{Dir: t.TempDir(), SyncEvery: time.Hour, NoSync: true, Callers: &c})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := l.Append(ctx, []byte("first")); err != nil { // no commit before it to wait for
		t.Fatal(err)
	}
	commits := func() uint64 { return l.syncs.Load() }

	// one call in progress, waiting on its own append: nothing can join
	c.Enter()
	if _, err := l.Append(ctx, []byte("alone")); err != nil {
		t.Fatalf("the only call in progress was held back: %v", err)
	}
	c.Leave()

	// a waits while b is in progress; b ends without appending
	c.Enter()
	c.Enter()
	before := commits()
	a := appendAsync(ctx, l, "a")
	eventually(t, "a queued", func() bool { return l.held.Load() == 1 })
	select {
	case r := <-a:
		t.Fatalf("a committed while b could still join it: %v", r)
	case <-time.After(50 * time.Millisecond):
	}
	c.Leave() // b
	if r := <-a; r.err != nil {
		t.Fatalf("a, after b ended: %v", r.err)
	}
	c.Leave() // a
	if n := commits() - before; n != 1 {
		t.Errorf("a took %d commits, want 1", n)
	}

	// three calls in progress: the group waits for the third's append and
	// commits the three together
	for range 3 {
		c.Enter()
	}
	before = commits()
	x, y := appendAsync(ctx, l, "x"), appendAsync(ctx, l, "y")
	eventually(t, "x and y queued", func() bool { return l.held.Load() == 2 })
	if _, err := l.Append(ctx, []byte("z")); err != nil {
		t.Fatal(err)
	}
	for _, ch := range []chan appendResult{x, y} {
		if r := <-ch; r.err != nil {
			t.Fatal(r.err)
		}
	}
	if n := commits() - before; n != 1 {
		t.Errorf("x, y and z took %d commits, want 1", n)
	}
	for range 3 {
		c.Leave()
	}
}

// A group that is full (MaxBatch) is committed at once: the calls still in
// progress would join the next group, not this one.
func TestCallersFullGroupNotHeld(t *testing.T) {
	var c Callers
	l := openLog(t, Options{Dir: t.TempDir(), SyncEvery: time.Hour, NoSync: true, MaxBatch: 2, Callers: &c})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := l.Append(ctx, []byte("first")); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		c.Enter()
	}
	x, y := appendAsync(ctx, l, "x"), appendAsync(ctx, l, "y")
	eventually(t, "x and y queued", func() bool { return l.held.Load() == 2 })
	z := appendAsync(ctx, l, "z") // a group of its own: the first is full
	for _, ch := range []chan appendResult{x, y} {
		if r := <-ch; r.err != nil {
			t.Fatalf("the full group: %v", r.err)
		}
		c.Leave()
	}
	// z's group is held while x and y are in progress, and goes once they left
	if r := <-z; r.err != nil {
		t.Fatalf("z: %v", r.err)
	}
	c.Leave()
}

package wal

import (
	"sync/atomic"
	"time"
)

// Callers counts the calls in progress that may append to a log: the
// requests a server is serving. The log's writer holds a group back for up
// to Options.SyncEvery so that more appends share its fsync. Once every call
// in progress is waiting on that group, no append can join it any more, and
// the writer commits at once: under a closed loop of clients (a proxy's
// connection pool, a load test) the cores would otherwise idle out the rest
// of SyncEvery. The count is a hint, never a condition of correctness: a
// request not counted yet joins the next group.
type Callers struct {
	n   atomic.Int64
	log atomic.Pointer[Log]
}

// Enter counts a call that has begun.
func (c *Callers) Enter() { c.n.Add(1) }

// Leave counts a call that has ended, and lets the writer commit if every
// call left is waiting on the group it holds back.
func (c *Callers) Leave() {
	n := c.n.Add(-1)
	if l := c.log.Load(); l != nil {
		l.nudgeIf(n)
	}
}

// nudgeIf ends the writer's holding back if the calls in progress, n of
// them, are no more than the requests of the group it holds.
func (l *Log) nudgeIf(n int64) {
	if h := l.held.Load(); h > 0 && n <= h {
		l.nudge()
	}
}

// nudge ends the writer's holding back.
func (l *Log) nudge() {
	select {
	case l.early <- struct{}{}:
	default:
	}
}

// holdBack waits up to wait before the writer commits the one queued group,
// so that more appends join it, and less when Options.Callers says that none
// can. It is called and returns with l.mu held.
func (l *Log) holdBack(wait time.Duration) {
	c := l.opts.Callers
	if c == nil {
		l.mu.Unlock()
		time.Sleep(wait)
		l.mu.Lock()
		return
	}
	select {
	case <-l.early: // from a previous group
	default:
	}
	// Stored before the count is read, as Leave decrements before it reads
	// held: one of the two sees the other.
	l.held.Store(int64(len(l.queue[0].reqs)))
	defer l.held.Store(0)
	if c.n.Load() <= l.held.Load() {
		return
	}
	l.mu.Unlock()
	t := time.NewTimer(wait)
	select {
	case <-t.C:
	case <-l.early:
		t.Stop()
	}
	l.mu.Lock()
}

// joined updates the writer's count of the group it holds back after an
// append joined group g (l.mu held).
func (l *Log) joined(g *group) {
	if l.opts.Callers == nil || l.held.Load() == 0 {
		return
	}
	if g != l.queue[0] {
		l.nudge() // the held group is full: waiting gains nothing more
		return
	}
	l.held.Store(int64(len(g.reqs)))
	l.nudgeIf(l.opts.Callers.n.Load())
}

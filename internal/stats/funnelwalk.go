package stats

import (
	"math"
	"slices"
	"time"
)

// funnelWalk takes a funnel query's rows (FunnelQuery), which arrive sorted
// by visitor and key, one visitor at a time, and adds up per step the
// visitors who reached it, their net revenue of the range, and the seconds
// they took from the step before.
//
// A visitor's events are sorted by time (and, within a second, by the steps
// they complete, lowest first). Level k keeps for each position the latest
// start (time of step 1) of a chain that reached step k by then: step k at
// position j extends the latest level-(k-1) start of the positions before j
// when it lies within the window of that start. The latest start is the
// best one to extend, so the deepest level any chain reaches is found in one
// pass per step. The visitor's times are those of the chain from the latest
// start that reached the deepest level, taking each next step at its first
// occurrence after the previous one.
//
// It holds one visitor's events at a time, and a gap a step for each
// visitor who reached it (the medians need them all).
type funnelWalk struct {
	steps  int
	window int64 // seconds

	visitor uint64 // whose rows are being gathered
	started bool   // a visitor's rows are being gathered
	bits    uint64 // the steps the visitor's events complete
	net     int64
	t       []int64 // the visitor's events: times
	m       []uint8 // and the steps each completes, as bits

	a, prev []int64 // the level under way and the one before, per position
	last    []int64 // per level, the latest start that reached it (0: none)

	visitors []int64   // per step
	revenue  []int64   // per step
	gaps     [][]int64 // per step (none for step 1): seconds from the step before
}

func newFunnelWalk(steps int, window time.Duration) *funnelWalk {
	return &funnelWalk{steps: steps, window: int64(window / time.Second), last: make([]int64, steps),
		visitors: make([]int64, steps), revenue: make([]int64, steps), gaps: make([][]int64, steps)}
}

// add takes one row: an event of visitor (e = time × 256 + the bits of the
// steps it completes) or, with e 0, the visitor's net revenue.
func (w *funnelWalk) add(visitor, e uint64, net int64) {
	if !w.started || visitor != w.visitor {
		w.finish()
		w.visitor, w.started = visitor, true
		w.bits, w.net, w.t, w.m = 0, 0, w.t[:0], w.m[:0]
	}
	w.net += net
	if bits := e % 256; bits != 0 {
		w.bits |= bits
		w.t = append(w.t, int64(e/256))
		w.m = append(w.m, uint8(bits))
	}
}

// finish counts the visitor gathered so far, if they did step 1.
func (w *funnelWalk) finish() {
	if !w.started || w.bits&1 == 0 {
		return
	}
	w.visitors[0]++
	w.revenue[0] += w.net
	if w.bits&2 == 0 {
		return // most visitors stop at step 1: no walk
	}
	level := w.levels()
	start := w.last[0]
	if level >= 2 {
		start = w.last[level-1]
	}
	// the chain from start: each step at its first occurrence after the
	// previous one (-1: none, whose time counts as 0)
	at := func(i int) int64 {
		if i < 0 {
			return 0
		}
		return w.t[i]
	}
	i := -1 // step 1 at that time
	for j := range w.t {
		if w.m[j]&1 != 0 && w.t[j] == start {
			i = j
			break
		}
	}
	for k := 1; k < w.steps; k++ {
		next := -1
		for j := i + 1; j < len(w.t); j++ {
			if w.m[j]&(1<<k) != 0 && w.t[j] <= start+w.window {
				next = j
				break
			}
		}
		if level > k {
			w.visitors[k]++
			w.revenue[k] += w.net
			w.gaps[k] = append(w.gaps[k], at(next)-at(i))
		}
		i = next
	}
}

// levels computes w.last for the visitor's events and returns the deepest
// level reached.
func (w *funnelWalk) levels() int {
	n := len(w.t)
	w.a, w.prev = slices.Grow(w.a[:0], n)[:n], slices.Grow(w.prev[:0], n)[:n]
	var latest int64
	for j := range n {
		if w.m[j]&1 != 0 {
			latest = w.t[j]
		}
		w.a[j] = latest
	}
	w.last[0] = latest
	level := 0
	if latest > 0 {
		level = 1
	}
	for k := 1; k < w.steps; k++ {
		w.a, w.prev = w.prev, w.a
		latest = 0
		for j := range n {
			var st int64 // the latest start of level k-1 before j
			if j > 0 {
				st = w.prev[j-1]
			}
			if w.m[j]&(1<<k) != 0 && st > 0 && w.t[j] <= st+w.window {
				latest = st
			}
			w.a[j] = latest
		}
		w.last[k] = latest
		if latest > 0 {
			level = k + 1
		}
	}
	return level
}

// result finishes the last visitor and returns per step: visitors, the
// median seconds from the step before (NaN when nobody reached the step; 0
// for step 1), net revenue.
func (w *funnelWalk) result() []float64 {
	w.finish()
	w.started = false
	out := make([]float64, 0, 3*w.steps)
	for k := range w.steps {
		med := 0.0
		if k > 0 {
			med = median(w.gaps[k])
		}
		out = append(out, float64(w.visitors[k]), med, float64(w.revenue[k]))
	}
	return out
}

// median is the middle value of xs, or the mean of the middle two (NaN for
// none). It sorts xs.
func median(xs []int64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	slices.Sort(xs)
	h := len(xs) / 2
	if len(xs)%2 == 1 {
		return float64(xs[h])
	}
	return float64(xs[h-1]+xs[h]) / 2
}

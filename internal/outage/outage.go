// Package outage logs a failing dependency the way an operator reads an
// outage: the first failure at once, then at most one line per interval
// saying how many failures followed, and one line when it works again —
// never a line per request or per event, which would bury the log (and the
// disk) while ClickHouse, Redis or Postgres is away.
package outage

import (
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultInterval is how often a continuing outage is logged.
const DefaultInterval = 30 * time.Second

// Reporter follows one dependency's failures. Its methods are safe for
// concurrent use.
type Reporter struct {
	log   *slog.Logger
	what  string
	every time.Duration
	now   func() time.Time

	// failing is read without the lock, so that OK costs nothing while
	// all is well; it changes under the lock.
	failing atomic.Bool

	mu       sync.Mutex
	since    time.Time // when the current outage began
	logged   time.Time // when it was last logged
	unlogged int64     // failures since then
	total    int64     // failures of the current outage
}

// New reports failures to log, at most once per every; what says what
// happens while they last ("buffer: ClickHouse unavailable; events wait in
// the write-ahead log"), and the lines that follow add "(continuing)" and,
// at the end, "(over)".
func New(log *slog.Logger, what string, every time.Duration) *Reporter {
	if every <= 0 {
		every = DefaultInterval
	}
	return &Reporter{log: log, what: what, every: every, now: time.Now}
}

// Fail counts n failures with the latest error; attrs describe the state
// (e.g. how much waits). It logs when the outage begins and then once per
// interval.
func (r *Reporter) Fail(n int64, err error, attrs ...any) {
	r.mu.Lock()
	now := r.now()
	r.unlogged += n
	r.total += n
	first := !r.failing.Load()
	if first {
		r.failing.Store(true)
		r.since = now
	}
	if !first && now.Sub(r.logged) < r.every {
		r.mu.Unlock()
		return
	}
	count, since := r.unlogged, r.since
	r.unlogged, r.logged = 0, now
	r.mu.Unlock()
	args := append([]any{"failures", count, "since", since.UTC().Format(time.RFC3339), "err", err}, attrs...)
	if first {
		r.log.Warn(r.what, args...)
	} else {
		r.log.Warn(r.what+" (continuing)", args...)
	}
}

// OK ends an outage, logging how long it lasted and how many failures it
// caused; without an outage it costs one atomic load.
func (r *Reporter) OK() {
	if !r.failing.Load() {
		return
	}
	r.mu.Lock()
	if !r.failing.Load() {
		r.mu.Unlock()
		return
	}
	since, total := r.since, r.total
	r.failing.Store(false)
	r.unlogged, r.total = 0, 0
	r.mu.Unlock()
	r.log.Info(r.what+" (over)", "failures", total, "outage", r.now().Sub(since).Round(time.Millisecond).String())
}

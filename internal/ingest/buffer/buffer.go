// Package buffer is the write buffer between the ingest pipeline and
// ClickHouse, and the place where tally keeps its first promise: an event
// answered 201 reaches ClickHouse exactly once, whatever stops, fails or
// crashes on the way.
//
// Write appends records to a local write-ahead log and returns once they are
// fsync'd (group commit). A flusher takes the log in batches, each a fixed
// run of records, and moves every batch through the same steps: resolve the
// sessions of its events (Redis), insert its events, its session rows and
// its bot events (ClickHouse), record its revenue (Postgres), commit. Before
// any step has an effect outside the process, the flusher records on disk
// what it is about to do (the batch's plan, then a checkpoint per step), so a
// restart knows where the batch stood instead of guessing it from
// ClickHouse; every step can be run again without doubling anything. The
// README's "Exactly once" section draws the protocol.
//
// While ClickHouse is down the log grows up to its disk budget; past it
// Write fails with Unavailable and a Retry-After.
package buffer

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/ingest/session"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/outage"
	"github.com/tally-analytics/tally/internal/wal"
)

// Sink is where batches go: the ClickHouse store. Inserts are named (id),
// so that an insert whose outcome is unknown can be ended for sure
// (EndInsert) before the Existing lookups tell what it stored.
type Sink interface {
	InsertEvents(ctx context.Context, id string, rows []model.EventRow) error
	InsertSessions(ctx context.Context, id string, rows []model.SessionRow) error
	InsertBotEvents(ctx context.Context, id string, rows []model.BotEventRow) error
	InsertEngagements(ctx context.Context, id string, rows []model.EngagementRow) error
	EndInsert(ctx context.Context, id string) error
	ExistingEventIDs(ctx context.Context, table string, span model.Span, ids []string) (map[string]bool, error)
	ExistingSessionRows(ctx context.Context, span model.Span, sessions []uint64) (map[model.SessionRowKey]bool, error)
}

// Sessions resolves the sessions of a batch's events (session.Manager).
type Sessions interface {
	Resolve(ctx context.Context, evs []*model.EventRow, snap *session.Snapshot,
		persist func(*session.Snapshot) error) (session.Outcome, *session.Snapshot, error)
	Compute(evs []*model.EventRow, snap *session.Snapshot) session.Outcome
	// MarkActive shows a resolved batch's visitors in the realtime view
	// (best effort).
	MarkActive(ctx context.Context, out session.Outcome)
	// Forget drops what Redis keeps for the replay of a batch whose
	// outcome is recorded.
	Forget(ctx context.Context, snap *session.Snapshot)
}

// Revenue records the revenue of custom events in the payments ledger (client
// when the tracking script reported it); a repeated event id is recorded once.
type Revenue interface {
	RecordTracked(ctx context.Context, site model.Site, eventID string, at time.Time, visitor uint64, name string,
		amount int64, currency string, hint *model.Touch, client bool) error
}

// Options configure a Buffer.
type Options struct {
	Dir          string        // WAL directory (holds the checkpoint and the plan too)
	MaxBytes     int64         // WAL disk budget; 0 = unlimited
	SegmentBytes int64         // WAL segment size
	Preallocate  bool          // make each WAL segment whole before it is written (wal.Options)
	SyncEvery    time.Duration // least time between two WAL commits (group commit pacing)
	Callers      *wal.Callers  // the requests in progress, which may end the pacing early (wal.Options)
	FlushRows    int           // flush when a batch holds this many records
	FlushEvery   time.Duration // ... or when its oldest record is this old
	// InsertTimeout bounds each ClickHouse insert and lookup. A stop does
	// not cut an insert short: an insert cut short is one whose outcome is
	// unknown.
	InsertTimeout time.Duration
	// DrainTimeout is how long after a stop request the flusher still
	// starts steps; one under way then runs to its own timeout. A stop
	// therefore takes at most DrainTimeout + InsertTimeout.
	DrainTimeout time.Duration
	Log          *slog.Logger
	// Observe, when set, is told how long each step of a batch took
	// ("resolve", "build", "events", "sessions", "bot_events", "revenue",
	// "commit").
	Observe func(step string, d time.Duration)
}

// Buffer is the durable write buffer.
type Buffer struct {
	opts     Options
	log      *wal.Log
	sink     Sink
	sessions Sessions
	revenue  Revenue
	cp       checkpoint
	cpFile   *slotFile
	plans    map[uint64]*plan // the plans found on disk at Open, by batch number
	hooks    hooks

	mu        sync.Mutex
	committed wal.Position // cp.Committed, for other goroutines
	pending   []time.Time  // when the batches read and not committed were started, oldest first

	// outages, logged once per interval
	flushDown, redisDown, pgDown *outage.Reporter

	// counters for /metrics and tests
	written, flushed, flushFailures atomic.Int64
	lastFlush                       atomic.Int64 // unix nanos of the last commit
}

// hooks let tests stop the flusher at a named point, as a crash would.
type hooks struct {
	at     func(point string) error
	mu     sync.Mutex
	halted error // the hook error that stopped a stage
}

// Open opens (or creates) the log in opts.Dir, reads the checkpoint, and
// frees the log segments the checkpoint says ClickHouse already has (a
// smaller disk budget than before then applies at once).
func Open(opts Options, sink Sink, sessions Sessions, revenue Revenue) (*Buffer, error) {
	if opts.FlushRows <= 0 || opts.FlushEvery <= 0 {
		return nil, errors.New("buffer: FlushRows and FlushEvery must be positive (config holds their defaults)")
	}
	if opts.InsertTimeout <= 0 {
		opts.InsertTimeout = 10 * time.Second
	}
	if opts.DrainTimeout <= 0 {
		opts.DrainTimeout = 15 * time.Second
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	l, err := wal.Open(wal.Options{Dir: opts.Dir, MaxBytes: opts.MaxBytes, SegmentBytes: opts.SegmentBytes,
		Preallocate: opts.Preallocate, Logger: opts.Log, SyncEvery: opts.SyncEvery,
		Callers: opts.Callers})
	if err != nil {
		return nil, fmt.Errorf("buffer: %w", err)
	}
	b := &Buffer{opts: opts, log: l, sink: sink, sessions: sessions, revenue: revenue,
		flushDown: outage.New(opts.Log, "buffer: flushing to ClickHouse fails; events wait in the write-ahead log", 0),
		redisDown: outage.New(opts.Log, "buffer: Redis unavailable; sessions wait, or new events are stored without one", 0),
		pgDown:    outage.New(opts.Log, "buffer: Postgres unavailable; the revenue of events waits", 0)}
	if err := b.openCheckpoint(); err != nil {
		l.Close()
		b.cpFile.Close()
		return nil, err
	}
	if err := b.createPlanFiles(); err != nil {
		l.Close()
		b.cpFile.Close()
		return nil, err
	}
	var stale []string
	if b.plans, stale, err = readPlans(opts.Dir, b.cp.Seq); err != nil {
		l.Close()
		b.cpFile.Close()
		return nil, err
	}
	for _, path := range stale {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			opts.Log.Warn("buffer: removing an old plan file", "err", err)
		}
	}
	// A position at the end of a segment becomes the start of the next, so
	// that the segments ClickHouse has are freed now, before the disk budget
	// refuses anything — once the checkpoint says so on disk.
	if committed := l.Normalize(b.cp.Committed); committed != b.cp.Committed {
		cp := b.cp
		cp.Committed = committed
		if err := b.saveCheckpoint(cp); err != nil {
			l.Close()
			b.cpFile.Close()
			return nil, err
		}
	}
	if err := l.TruncateBefore(b.cp.Committed); err != nil {
		opts.Log.Warn("buffer: freeing log segments", "err", err)
	}
	b.committed = b.cp.Committed
	return b, nil
}

// caughtUp reports whether every durable record is committed.
func (b *Buffer) caughtUp() bool {
	b.mu.Lock()
	committed := b.committed
	b.mu.Unlock()
	return !committed.Less(b.log.Durable())
}

// retryAfterFull is what a client is told to wait when the log is full.
const retryAfterFull = 30 * time.Second

// Write stores rec durably; when it returns nil, rec survives a crash and
// will reach ClickHouse.
func (b *Buffer) Write(ctx context.Context, rec model.Record) error {
	return b.WriteMany(ctx, []model.Record{rec})
}

// WriteMany stores recs durably in one commit of the log: when it returns
// nil, all of them survive a crash; otherwise none was acknowledged.
func (b *Buffer) WriteMany(ctx context.Context, recs []model.Record) error {
	// encoded where the log frames them, in one buffer for all
	var f wal.Framed
	f.Grow(330 * len(recs))
	for _, rec := range recs {
		if err := f.Add(func(p []byte) []byte { return model.AppendRecord(p, rec) }); err != nil {
			return fmt.Errorf("buffer: append: %w", err)
		}
	}
	if _, err := b.log.AppendFramed(ctx, &f); err != nil {
		if errors.Is(err, wal.ErrFull) {
			return &errs.Error{Kind: errs.Unavailable, Code: "service_unavailable", RetryAfter: retryAfterFull,
				Message: "the event buffer is full while the database catches up; retry later", Err: err}
		}
		if errors.Is(err, wal.ErrClosed) {
			return &errs.Error{Kind: errs.Unavailable, Code: "service_unavailable", RetryAfter: time.Second,
				Message: "the server is shutting down; retry", Err: err}
		}
		return fmt.Errorf("buffer: append: %w", err)
	}
	b.written.Add(int64(len(recs)))
	return nil
}

// Stats are the buffer's counters.
type Stats struct {
	Written, Flushed, FlushFailures int64
	WALBytes                        int64
	LastFlush                       time.Time
	// Lag is the age of the oldest record read from the log and not yet in
	// ClickHouse; 0 when none waits.
	Lag time.Duration
}

// Stats reports the counters.
func (b *Buffer) Stats() Stats {
	s := Stats{Written: b.written.Load(), Flushed: b.flushed.Load(), FlushFailures: b.flushFailures.Load(),
		WALBytes: b.log.Size()}
	if n := b.lastFlush.Load(); n > 0 {
		s.LastFlush = time.Unix(0, n)
	}
	b.mu.Lock()
	if len(b.pending) > 0 {
		s.Lag = max(0, time.Since(b.pending[0]))
	}
	b.mu.Unlock()
	return s
}

// observe reports the time since start spent on step.
func (b *Buffer) observe(step string, start time.Time) {
	if b.opts.Observe != nil {
		b.opts.Observe(step, time.Since(start))
	}
}

// Close closes the log and the checkpoint. Call it after Run has returned.
func (b *Buffer) Close() error {
	return errors.Join(b.cpFile.Close(), b.log.Close())
}

// Package buffer is the write buffer between the ingest pipeline and
// ClickHouse. Write appends a record to a local write-ahead log and returns
// only once it is fsync'd (group commit), so a 201 is never lost; a flusher
// tails the log, inserts batches into ClickHouse on size or time, and keeps a
// checkpoint so that a restart replays only what is not in ClickHouse yet.
// While ClickHouse is down the log grows up to its disk budget; past it Write
// fails with Unavailable and a Retry-After.
package buffer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/wal"
)

// Sink is where batches go: the ClickHouse store.
type Sink interface {
	InsertEvents(ctx context.Context, rows []model.EventRow) error
	InsertSessions(ctx context.Context, rows []model.SessionRow) error
	InsertBotEvents(ctx context.Context, rows []model.BotEventRow) error
	ExistingEventIDs(ctx context.Context, table string, span model.Span, ids []string) (map[string]bool, error)
	ExistingSessionRows(ctx context.Context, span model.Span, sessions []uint64) (map[model.SessionRowKey]bool, error)
}

// Options configure a Buffer.
type Options struct {
	Dir          string        // WAL directory (holds the checkpoint too)
	MaxBytes     int64         // WAL disk budget; 0 = unlimited
	SegmentBytes int64         // WAL segment size
	FlushRows    int           // flush when a batch holds this many records
	FlushEvery   time.Duration // ... or when its oldest record is this old
	// DrainTimeout bounds the final flush when the flusher stops.
	DrainTimeout time.Duration
	Log          *slog.Logger
}

// Buffer is the durable write buffer.
type Buffer struct {
	opts Options
	log  *wal.Log
	sink Sink
	cp   checkpoint

	// counters for /metrics and tests
	written, flushed, flushFailures atomic.Int64
	lastFlush                       atomic.Int64 // unix nanos of the last successful flush
	oldest                          atomic.Int64 // unix nanos when the oldest unflushed record was read; 0 = none
}

// Open opens (or creates) the log in opts.Dir and reads the checkpoint.
func Open(opts Options, sink Sink) (*Buffer, error) {
	if opts.FlushRows <= 0 {
		opts.FlushRows = 10_000
	}
	if opts.FlushEvery <= 0 {
		opts.FlushEvery = time.Second
	}
	if opts.DrainTimeout <= 0 {
		opts.DrainTimeout = 30 * time.Second
	}
	l, err := wal.Open(wal.Options{Dir: opts.Dir, MaxBytes: opts.MaxBytes, SegmentBytes: opts.SegmentBytes})
	if err != nil {
		return nil, fmt.Errorf("buffer: %w", err)
	}
	b := &Buffer{opts: opts, log: l, sink: sink}
	b.cp, err = loadCheckpoint(b.checkpointPath(), l.First())
	if err != nil {
		l.Close()
		return nil, err
	}
	return b, nil
}

func (b *Buffer) checkpointPath() string { return filepath.Join(b.opts.Dir, "checkpoint.json") }

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
	payloads := make([][]byte, len(recs))
	for i, rec := range recs {
		payloads[i] = model.AppendRecord(nil, rec)
	}
	if _, err := b.log.AppendBatch(ctx, payloads); err != nil {
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
	if n := b.oldest.Load(); n > 0 {
		s.Lag = max(0, time.Since(time.Unix(0, n)))
	}
	return s
}

// Close closes the log. Call it after Run has returned.
func (b *Buffer) Close() error { return b.log.Close() }

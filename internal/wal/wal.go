// Package wal is the write-ahead log behind tally's ingest write buffer: a
// segmented, append-only log of opaque records with group commit.
//
// Every event tally acknowledges must be on disk first, so Append returns only
// after its record has been written and fsync'd. Concurrent appends share one
// write and one fsync: callers queue their records and a single writer
// goroutine commits whatever is queued in one go. A flusher tails the log with
// a Reader, ships batches to ClickHouse, saves its checkpoint with
// WriteFileAtomic and calls TruncateBefore to delete consumed segments; after a
// restart it reads again from the checkpoint.
//
// On disk the log is a directory of segment files named after their number
// (00000000000000000001.wal, ...). Each record is framed as
// [uint32 length][uint32 CRC-32C of the payload][payload], little endian.
package wal

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// MaxPayload is the largest payload a record may carry.
const MaxPayload = 16 << 20

const (
	defaultSegmentBytes = 64 << 20
	defaultMaxBatch     = 1024
	// maxGroupBytes bounds the write buffer of one group commit, whatever
	// MaxBatch allows; a single larger request still forms a group of its own.
	maxGroupBytes = 4 << 20
)

var (
	// ErrFull is returned by Append when the live segments plus the queued
	// records would exceed Options.MaxBytes.
	ErrFull = errors.New("wal: disk budget exceeded")
	// ErrClosed is returned by operations on a closed log or reader.
	ErrClosed = errors.New("wal: closed")
	// ErrCorrupt is returned by Reader.Next for a record whose framing or
	// checksum is wrong.
	ErrCorrupt = errors.New("wal: corrupt record")
	// ErrPayloadSize is returned by Append for an empty payload or one larger
	// than MaxPayload. Empty payloads are refused so that a zero-filled tail
	// left by a crash can never pass for valid records.
	ErrPayloadSize = errors.New("wal: payload must hold 1 byte to 16 MiB")
	// ErrPosition is returned by NewReader for a position that is not in the
	// live log: before its oldest segment (already truncated) or past its end.
	ErrPosition = errors.New("wal: position not in log")
)

// Position addresses a record boundary: a segment number and a byte offset
// within that segment. The zero Position lies before every record.
type Position struct {
	Segment uint64
	Offset  int64
}

// Less reports whether p comes before q in the log.
func (p Position) Less(q Position) bool {
	if p.Segment != q.Segment {
		return p.Segment < q.Segment
	}
	return p.Offset < q.Offset
}

// String formats p as "segment:offset", for logs.
func (p Position) String() string {
	return fmt.Sprintf("%d:%d", p.Segment, p.Offset)
}

// Options configure a Log.
type Options struct {
	// Dir holds the segment files; it is created if missing. One process at a
	// time may open it.
	Dir string
	// SegmentBytes is the size at which the writer starts a new segment: an
	// append goes to a fresh segment when it would make the current one
	// larger. Default 64 MiB.
	SegmentBytes int64
	// MaxBytes is the disk budget for all live segments. Append fails with
	// ErrFull when the live segments plus the queued records would exceed it.
	// Zero means unlimited.
	MaxBytes int64
	// MaxBatch is the largest number of records one group commit writes.
	// Default 1024.
	MaxBatch int
	// SyncEvery is the least time between the starts of two commits: a
	// commit that comes sooner waits, so that more appends join its group
	// (fewer, larger fsyncs, for a little latency). Zero commits at once.
	SyncEvery time.Duration
	// Callers, if set, counts the calls that may append (a server's
	// requests): once each one in progress waits on the group SyncEvery
	// holds back, the writer commits it at once (see Callers).
	Callers *Callers
	// Preallocate makes each segment's file whole (zeros, fsync'd) before
	// it becomes active, in the background while the one before it fills,
	// so that a commit's fdatasync flushes data only and never waits for
	// the file system's metadata (see prealloc.go). The active segment and
	// the next one then take SegmentBytes of disk each from the start,
	// beyond MaxBytes, which counts records. Ignored with NoSync.
	Preallocate bool
	// NoSync skips every fsync. For tests and benchmarks only: with it an
	// acknowledged record can be lost in a crash.
	NoSync bool
	// Logger receives a warning when Open cuts a torn tail off the log.
	// Nil discards.
	Logger *slog.Logger
}

func (o *Options) validate() error {
	switch {
	case o.Dir == "":
		return errors.New("wal: Options.Dir is required")
	case o.SegmentBytes < 0, o.MaxBytes < 0, o.MaxBatch < 0:
		return errors.New("wal: Options sizes must not be negative")
	}
	if o.SegmentBytes == 0 {
		o.SegmentBytes = defaultSegmentBytes
	}
	if o.MaxBatch == 0 {
		o.MaxBatch = defaultMaxBatch
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return nil
}

// Stats are counters since Open, for metrics: Records/Syncs is the number of
// appends that shared one fsync.
type Stats struct {
	Records uint64 // records made durable
	Syncs   uint64 // data fsyncs, one per group commit (counted even with NoSync)
}

// Log is an open write-ahead log. Its methods are safe for concurrent use.
type Log struct {
	opts  Options
	hooks hooks
	lock  io.Closer // holds the directory lock until Close

	mu        sync.Mutex
	wake      sync.Cond // signals the writer: a group was queued or Close began
	queue     []*group  // groups waiting for the writer, oldest first
	segments  []segment // live segments, oldest first; the last is the active one
	durable   Position  // end of the last fsync'd record; zero if the log holds none
	durableCh chan struct{}
	size      int64 // fsync'd bytes of the live segments
	reserved  int64 // size plus the bytes queued or being written, for MaxBytes
	closing   bool  // Close began: no new appends
	closed    bool  // the writer has stopped and the files are closed
	failed    error // set when the log can no longer append safely

	w          writer // owned by the writer goroutine
	writerDone chan struct{}
	closeOnce  sync.Once
	closeErr   error

	records atomic.Uint64
	syncs   atomic.Uint64

	// the writer holding a group back: its requests (0 when none), and
	// the signal that it need not wait any longer (see Callers)
	held  atomic.Int64
	early chan struct{}
}

// hooks let tests interpose on the writer; production code leaves them nil.
type hooks struct {
	beforeSync func() error     // runs before each data fsync; an error stands for a failed write or fsync
	spareMade  func(num uint64) // runs once the spare of segment num is ready (or failed)
}

// segment is a live segment file and the number of its bytes known to be on
// disk. Sealed segments never change; the active one grows after each commit.
type segment struct {
	num  uint64
	size int64
}

// First reports the position of the oldest record still on disk.
func (l *Log) First() Position {
	l.mu.Lock()
	defer l.mu.Unlock()
	return Position{Segment: l.segments[0].num}
}

// Durable reports the end of the last fsync'd record, or the zero Position if
// the log holds no record yet.
func (l *Log) Durable() Position {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.durable
}

// Size reports the bytes of all live segments.
func (l *Log) Size() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.size
}

// Stats reports the counters since Open.
func (l *Log) Stats() Stats {
	return Stats{Records: l.records.Load(), Syncs: l.syncs.Load()}
}

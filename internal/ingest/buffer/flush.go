package buffer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/wal"
)

// batch is a run of records read from the log, split by table.
type batch struct {
	records  int
	events   []model.EventRow
	sessions []model.SessionRow
	bots     []model.BotEventRow
	end      wal.Position // the log position after the last record
	started  time.Time    // when the first record was read

	// which tables already hold this batch (an insert can fail half-way)
	eventsDone, sessionsDone, botsDone bool
}

// reset empties bt for the next run of records, keeping its memory: the
// rows were copied into ClickHouse's columns by the insert.
func (bt *batch) reset() {
	*bt = batch{events: bt.events[:0], sessions: bt.sessions[:0], bots: bt.bots[:0]}
}

func (bt *batch) add(rec model.Record, end wal.Position) {
	if bt.records == 0 {
		bt.started = time.Now()
	}
	bt.records++
	bt.end = end
	if rec.Event != nil {
		bt.events = append(bt.events, *rec.Event)
	}
	if rec.Bot != nil {
		bt.bots = append(bt.bots, *rec.Bot)
	}
	bt.sessions = append(bt.sessions, rec.Sessions...)
}

// Run moves records from the log to ClickHouse until ctx ends, then drains
// what is already durable (for at most DrainTimeout) and returns. What it
// cannot drain stays in the log and is replayed by the next Run.
func (b *Buffer) Run(ctx context.Context) error {
	r, err := b.log.NewReader(b.cp.Committed)
	if err != nil {
		return fmt.Errorf("buffer: reader: %w", err)
	}
	defer r.Close()
	pos := b.cp.Committed
	pending := &batch{}
	pending.events = make([]model.EventRow, 0, b.opts.FlushRows)
	pending.sessions = make([]model.SessionRow, 0, 2*b.opts.FlushRows)

	if b.cp.InFlight != nil {
		// A stop request does not cut the replay short: like the final
		// drain, it may take until DrainTimeout after ctx ends.
		rctx, cancel := b.untilDrained(ctx)
		pos, err = b.recoverInFlight(rctx, r, pos, pending)
		cancel()
		if err != nil {
			return err
		}
		pending.reset()
	}
	for ctx.Err() == nil {
		if pos, err = b.collect(ctx, r, pos, pending); err != nil {
			return err
		}
		if pending.records > 0 && b.due(pending) {
			if err := b.flush(ctx, pending); err != nil {
				break // ctx ended while retrying; the drain tries again
			}
			pending.reset()
		}
	}
	return b.drain(r, pending)
}

func (b *Buffer) due(bt *batch) bool {
	return bt.records >= b.opts.FlushRows || time.Since(bt.started) >= b.opts.FlushEvery
}

// collect reads records into bt until it is due or ctx ends, waiting for new
// appends when caught up.
func (b *Buffer) collect(ctx context.Context, r *wal.Reader, pos wal.Position, bt *batch) (wal.Position, error) {
	for bt.records < b.opts.FlushRows {
		payload, end, err := r.Next()
		if errors.Is(err, io.EOF) {
			if bt.records > 0 && b.due(bt) {
				return pos, nil
			}
			wait := b.opts.FlushEvery
			if bt.records > 0 {
				wait -= time.Since(bt.started)
			}
			wctx, cancel := context.WithTimeout(ctx, wait)
			_ = b.log.Wait(wctx, pos) // wakes on new data, timeout or shutdown
			cancel()
			if ctx.Err() != nil {
				return pos, nil
			}
			continue
		}
		if err != nil {
			return pos, fmt.Errorf("buffer: read log: %w", err)
		}
		pos = end
		b.add(bt, payload, end)
	}
	return pos, nil
}

// add decodes a log record into bt. The log's CRC held, so a record that does
// not decode is of an incompatible version: it is logged and skipped rather
// than allowed to block every later event.
func (b *Buffer) add(bt *batch, payload []byte, end wal.Position) {
	rec, err := model.DecodeRecord(payload)
	if err != nil {
		b.opts.Log.Error("buffer: skipping undecodable log record", "position", end, "err", err)
		return
	}
	bt.add(rec, end)
	if bt.records == 1 {
		b.oldest.CompareAndSwap(0, bt.started.UnixNano())
	}
}

// flush inserts bt, retrying with backoff until it succeeds or ctx ends, then
// commits the checkpoint and frees the log segments it no longer needs.
func (b *Buffer) flush(ctx context.Context, bt *batch) error {
	if err := b.saveCheckpoint(checkpoint{Committed: b.cp.Committed, InFlight: &bt.end}); err != nil {
		return err
	}
	backoff := 100 * time.Millisecond
	var lastLog time.Time
	for {
		err := b.insert(ctx, bt)
		if err == nil {
			break
		}
		b.flushFailures.Add(1)
		if time.Since(lastLog) > 30*time.Second {
			b.opts.Log.Warn("buffer: ClickHouse insert failed; events stay in the log and are retried",
				"records", bt.records, "wal_bytes", b.log.Size(), "err", err)
			lastLog = time.Now()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 5*time.Second)
	}
	if err := b.saveCheckpoint(checkpoint{Committed: bt.end}); err != nil {
		return err
	}
	if err := b.log.TruncateBefore(bt.end); err != nil {
		b.opts.Log.Warn("buffer: freeing log segments", "err", err)
	}
	b.flushed.Add(int64(bt.records))
	b.lastFlush.Store(time.Now().UnixNano())
	b.oldest.Store(0)
	return nil
}

func (b *Buffer) insert(ctx context.Context, bt *batch) error {
	if !bt.eventsDone {
		if err := b.sink.InsertEvents(ctx, bt.events); err != nil {
			return err
		}
		bt.eventsDone = true
	}
	if !bt.sessionsDone {
		if err := b.sink.InsertSessions(ctx, bt.sessions); err != nil {
			return err
		}
		bt.sessionsDone = true
	}
	if !bt.botsDone {
		if err := b.sink.InsertBotEvents(ctx, bt.bots); err != nil {
			return err
		}
		bt.botsDone = true
	}
	return nil
}

// untilDrained returns a context that ends DrainTimeout after ctx ends.
func (b *Buffer) untilDrained(ctx context.Context) (context.Context, context.CancelFunc) {
	dctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, func() {
		t := time.AfterFunc(b.opts.DrainTimeout, cancel)
		context.AfterFunc(dctx, func() { t.Stop() })
	})
	return dctx, func() { stop(); cancel() }
}

// drain flushes what is durable now, within DrainTimeout.
func (b *Buffer) drain(r *wal.Reader, pending *batch) error {
	ctx, cancel := context.WithTimeout(context.Background(), b.opts.DrainTimeout)
	defer cancel()
	for {
		for pending.records < b.opts.FlushRows {
			payload, end, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return fmt.Errorf("buffer: drain: read log: %w", err)
			}
			b.add(pending, payload, end)
		}
		if pending.records == 0 {
			return nil
		}
		if err := b.flush(ctx, pending); err != nil {
			b.opts.Log.Warn("buffer: could not drain before stopping; the rest is replayed at the next start",
				"wal_bytes", b.log.Size(), "err", err)
			return nil
		}
		pending.reset()
	}
}

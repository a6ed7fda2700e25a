package buffer

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/ingest/session"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/outage"
	"github.com/tally-analytics/tally/internal/wal"
)

// UnfinishedStop begins what Run logs when a stop's drain ran out of time
// with records of the log not yet stored (the fault soak watches for it).
const UnfinishedStop = "buffer: stopping with a batch unfinished"

// Run moves batches from the log to ClickHouse until ctx ends, then drains
// what is already in the log: it keeps starting steps for DrainTimeout more
// and returns. A batch it could not finish is finished first by the next
// Run, exactly where it stopped.
//
// Two stages run at once, so that Redis and ClickHouse work side by side:
// one reads, plans and resolves batches, the other stores them, in order,
// one at a time. The first hands a resolved batch to the second only once
// the batch before is committed, so it is at most one batch ahead: a batch's
// plan files are written again only by the batch two numbers on (see
// planSlot), which is planned after the first is committed.
func (b *Buffer) Run(ctx context.Context) error {
	work, cancel := b.untilDrained(ctx)
	defer cancel()
	cp := b.cp
	r, err := b.log.NewReader(cp.Committed)
	if err != nil {
		return fmt.Errorf("buffer: reader: %w", err)
	}
	defer r.Close()
	b.mu.Lock()
	b.pending = b.pending[:0]
	b.mu.Unlock()

	run, abort := context.WithCancel(work)
	defer abort()
	ready := make(chan *batch)
	var prepErr error
	prepared := make(chan struct{})
	go func() {
		defer close(prepared)
		defer close(ready)
		if prepErr = b.prepareAll(ctx, run, r, cp, ready); prepErr != nil {
			abort()
		}
	}()
	storeErr := b.storeAll(run, ready)
	abort()
	<-prepared

	if isHook(storeErr) || (storeErr == nil && isHook(prepErr)) {
		return cmp.Or(storeErr, prepErr)
	}
	// the stage that failed first names the cause: the other one only saw
	// its context cancelled
	err = storeErr
	if err == nil || (errors.Is(err, context.Canceled) && prepErr != nil && !errors.Is(prepErr, context.Canceled)) {
		err = prepErr
	}
	if err != nil {
		if work.Err() != nil && !isHook(err) {
			b.opts.Log.Warn(UnfinishedStop+"; the next start finishes it", "wal_bytes", b.log.Size(), "err", err)
			return nil
		}
		return err
	}
	return nil
}

// prepareAll is the first stage: it takes each batch, resumed or newly
// read, through its sessions and builds its rows, and hands it to the
// second stage. It returns nil once the log is drained after ctx ended.
func (b *Buffer) prepareAll(ctx, run context.Context, r *wal.Reader, cp checkpoint, ready chan<- *batch) error {
	reading, stop := context.WithCancel(ctx) // a stop, or the second stage gone
	defer stop()
	defer context.AfterFunc(run, stop)()
	seq, start := cp.Seq+1, cp.Committed
	for {
		bt, err := b.resume(r, cp, seq, start)
		if err != nil {
			return err
		}
		if bt == nil {
			if bt, err = b.collect(reading, r, seq, start); err != nil || bt == nil {
				return err
			}
		}
		if err := b.prepare(run, bt); err != nil {
			return fmt.Errorf("batch %d, step %s: %w", bt.seq, bt.step, err)
		}
		select {
		case ready <- bt:
		case <-run.Done():
			bt.waitMarked()
			return run.Err()
		}
		seq, start = bt.seq+1, bt.end
	}
}

// storeAll is the second stage: it stores and commits the batches the
// first hands it, in order.
func (b *Buffer) storeAll(ctx context.Context, ready <-chan *batch) error {
	for bt := range ready {
		if err := b.store(ctx, bt); err != nil {
			return fmt.Errorf("batch %d, step %s: %w", bt.seq, bt.step, err)
		}
	}
	return nil
}

// collect reads batch seq from start: up to FlushRows records, or what
// arrived within FlushEvery of the first. Once ctx has ended it only takes
// what the log holds, and returns nil when that is nothing.
func (b *Buffer) collect(ctx context.Context, r *wal.Reader, seq uint64, start wal.Position) (*batch, error) {
	bt := &batch{seq: seq, start: start, end: start}
	for bt.read < b.opts.FlushRows {
		payload, end, err := r.Next()
		if errors.Is(err, io.EOF) {
			if bt.read > 0 && (ctx.Err() != nil || time.Since(bt.started) >= b.opts.FlushEvery) {
				break
			}
			if ctx.Err() != nil {
				return nil, nil
			}
			wait := b.opts.FlushEvery
			if bt.read > 0 {
				wait -= time.Since(bt.started)
			}
			wctx, cancel := context.WithTimeout(ctx, wait)
			_ = b.log.Wait(wctx, bt.end) // wakes on new data, timeout or stop
			cancel()
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("buffer: read log: %w", err)
		}
		b.add(bt, payload, end)
	}
	return bt, nil
}

// resume returns batch seq, which starts at start, read again from the log
// when a stop or a crash interrupted it; nil when it was not begun. The
// checkpoint cp knows the batch being stored once its sessions were
// resolved; before that, and for the batch resolved ahead of it, only their
// plans do (and their session states may be written).
func (b *Buffer) resume(r *wal.Reader, cp checkpoint, seq uint64, start wal.Position) (*batch, error) {
	// A plan belongs to the batch of its number (positions can name one
	// place in two ways, numbers cannot).
	p := b.plans[seq]
	delete(b.plans, seq)
	var bt *batch
	switch {
	case cp.Batch != nil && cp.Batch.Seq == seq:
		bt = &batch{seq: seq, start: start, end: cp.Batch.End, step: cp.Batch.Step, sent: cp.Batch.Sent,
			unsure: cp.Batch.Unsure}
		if p != nil && p.End == bt.end {
			bt.snap = p.Snapshot
		}
	case p != nil:
		bt = &batch{seq: seq, start: start, end: p.End, step: stepResolve, snap: p.Snapshot, planRev: p.Rev}
	default:
		return nil, nil
	}
	if err := b.readTo(r, bt); err != nil {
		return nil, err
	}
	if bt.step > stepResolve && bt.snap == nil {
		if len(bt.sessionEvents()) > 0 {
			return nil, fmt.Errorf("buffer: batch %d resolved its sessions but its plan is missing", bt.seq)
		}
		bt.snap = &session.Snapshot{Degraded: true}
	}
	b.opts.Log.Info("buffer: finishing a batch interrupted by a stop or a crash", "batch", bt.seq,
		"records", bt.read, "step", bt.step.String(), "sent", bt.sent)
	return bt, nil
}

// prepare gives bt its sessions and builds its rows. The realtime view is
// updated alongside the inserts, off the batch's path (bt.marked closes
// once it is).
func (b *Buffer) prepare(ctx context.Context, bt *batch) error {
	resolving := bt.step == stepResolve
	start := time.Now()
	if err := b.resolve(ctx, bt); err != nil {
		return err
	}
	b.observe("resolve", start)
	if resolving {
		marked, out := make(chan struct{}), bt.out
		bt.marked = marked
		go func() {
			defer close(marked)
			mctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), b.opts.InsertTimeout)
			defer cancel()
			b.sessions.MarkActive(mctx, out)
		}()
	}
	start = time.Now()
	bt.build()
	b.observe("build", start)
	return nil
}

// store takes a prepared batch through its remaining steps. It returns nil
// once the batch is committed; an error when ctx ended first (the batch
// stays where the checkpoint says) or a test hook stopped it.
//
// The batch's inserts (events, session rows, bot events, scroll depths) run at once: they
// are independent, and one after the other they were the flusher's limit
// once the rollups' views slowed each insert down (230–330 ms a batch of
// 10,000 events against 130–180 for resolving the next one:
// bench/results/2026-11-27-clickhouse-file-creation.md). Before they start,
// the checkpoint records that any of them may reach ClickHouse (Unsure), so
// that a replay looks up each one's rows before it sends them again.
func (b *Buffer) store(ctx context.Context, bt *batch) error {
	defer bt.waitMarked()
	first := max(bt.step, stepEvents)
	var inDoubt [stepLast + 1]bool
	for s := first; s <= stepLast; s++ {
		inDoubt[s] = (bt.step == s && bt.sent) || bt.unsure
	}
	if !bt.unsure || bt.step != first {
		p := &progress{Seq: bt.seq, End: bt.end, Step: first, Sent: true, Unsure: true}
		err := b.retry(ctx, b.flushDown, bt, func() error {
			return b.saveCheckpoint(checkpoint{Committed: b.cp.Committed, Seq: b.cp.Seq, Batch: p})
		})
		if err != nil {
			return err
		}
		bt.step, bt.sent, bt.unsure = first, true, true
	}
	var wg sync.WaitGroup
	failed := make([]error, stepLast+1)
	for s := first; s <= stepLast; s++ {
		if bt.rows(s) == 0 {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := time.Now()
			if failed[s] = b.insertStep(ctx, bt, s, inDoubt[s]); failed[s] == nil {
				b.observe(s.String(), start)
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(failed...); err != nil {
		return err
	}
	start := time.Now()
	if err := b.recordRevenue(ctx, bt); err != nil {
		return err
	}
	if len(bt.revenue) > 0 {
		b.observe("revenue", start)
	}
	start = time.Now()
	if err := b.commit(ctx, bt); err != nil {
		return err
	}
	b.observe("commit", start)
	return nil
}

// resolve gives the batch's events their sessions. A batch resolved before
// a restart computes the same outcome from its plan, without Redis.
func (b *Buffer) resolve(ctx context.Context, bt *batch) error {
	evs := bt.sessionEvents()
	if bt.step > stepResolve {
		bt.out = b.sessions.Compute(evs, bt.snap)
		return nil
	}
	persist := func(s *session.Snapshot) error {
		if err := b.at("plan"); err != nil {
			return err
		}
		bt.planRev++
		if err := b.writePlan(plan{Seq: bt.seq, Rev: bt.planRev, End: bt.end, Snapshot: s}); err != nil {
			bt.planRev--
			return err
		}
		bt.snap = s
		return b.at("planned")
	}
	err := b.retry(ctx, b.redisDown, bt, func() error {
		// like an insert, resolving is not cut short by a stop: a read cut
		// short would pass for Redis being down
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), b.opts.InsertTimeout)
		defer cancel()
		out, snap, err := b.sessions.Resolve(rctx, evs, bt.snap, persist)
		if err != nil {
			return err
		}
		bt.out, bt.snap = out, snap
		return nil
	})
	if err != nil {
		return err
	}
	if bt.snap.Degraded && len(evs) > 0 {
		b.redisDown.Fail(int64(len(evs)), errors.New("a batch planned without Redis by an earlier release: its events are stored without a session"))
	} else {
		b.redisDown.OK()
	}
	bt.step = stepEvents
	return b.at("resolved")
}

// insertStep inserts the rows of step s, which the checkpoint already
// records as possibly sent. When inDoubt (a replay, or after any failed
// attempt) the rows ClickHouse already holds are looked up and left out
// before the next attempt, so that no row is stored twice and none is
// dropped. An insert runs under its own timeout: a stop does not cut it
// short. It touches only step s's rows, so the steps can run at once.
func (b *Buffer) insertStep(ctx context.Context, bt *batch, s step, inDoubt bool) error {
	id := fmt.Sprintf("tally-%s-%d-%s", b.cp.Instance, bt.seq, s)
	err := b.retry(ctx, b.flushDown, bt, func() error {
		if inDoubt {
			// an attempt may still be running in ClickHouse (its client
			// gave up, or was this process before a restart): end it, so
			// that what the lookup finds is all it stored
			if err := b.sink.EndInsert(ctx, id); err != nil {
				return err
			}
			if err := b.dropStored(ctx, bt, s); err != nil {
				return err
			}
			if bt.rows(s) == 0 {
				return nil
			}
		}
		if err := b.at(s.String()); err != nil {
			return err
		}
		ictx, cancel := context.WithTimeout(context.WithoutCancel(ctx), b.opts.InsertTimeout)
		err := b.insert(ictx, id, bt, s)
		cancel()
		if err != nil {
			inDoubt = true
			return errors.Join(err, b.at(s.String()+":failed"))
		}
		return b.at(s.String() + ":done")
	})
	if err == nil {
		b.flushDown.OK()
	}
	return err
}

func (b *Buffer) insert(ctx context.Context, id string, bt *batch, s step) error {
	switch s {
	case stepEvents:
		return b.sink.InsertEvents(ctx, id, bt.events)
	case stepSessions:
		return b.sink.InsertSessions(ctx, id, bt.sessions)
	case stepBots:
		return b.sink.InsertBotEvents(ctx, id, bt.bots)
	case stepEngagements:
		return b.sink.InsertEngagements(ctx, id, bt.engagements)
	}
	return nil
}

// recordRevenue puts the revenue of the batch's custom events into the
// payments ledger, with the session each happened in as attribution hint.
// The ledger keeps one payment per event id, so this step may run again.
func (b *Buffer) recordRevenue(ctx context.Context, bt *batch) error {
	for _, t := range bt.revenue {
		if err := b.at("revenue"); err != nil {
			return err
		}
		e := t.event
		site := model.Site{ID: e.SiteID, BaseCurrency: t.base}
		err := b.retry(ctx, b.pgDown, bt, func() error {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), b.opts.InsertTimeout)
			defer cancel()
			err := b.revenue.RecordTracked(rctx, site, e.EventID, e.Timestamp, e.VisitorID, e.Name,
				e.RevenueAmount, e.RevenueCurrency, t.session.Touch(), t.client)
			if kind := errs.KindOf(err); err != nil && kind != errs.Internal && kind != errs.Unavailable {
				// no retry can make it count (e.g. the site was deleted)
				b.opts.Log.Warn("buffer: an event's revenue cannot be recorded", "site_id", e.SiteID, "err", err)
				return nil
			}
			return err
		})
		if err != nil {
			return err
		}
		b.pgDown.OK()
	}
	return nil
}

// commit moves the checkpoint past the batch and frees the log segments it
// no longer needs.
func (b *Buffer) commit(ctx context.Context, bt *batch) error {
	if err := b.at("commit"); err != nil {
		return err
	}
	err := b.retry(ctx, b.flushDown, bt, func() error { return b.saveCheckpoint(checkpoint{Committed: bt.end, Seq: bt.seq}) })
	if err != nil {
		return err
	}
	b.mu.Lock()
	b.committed = bt.end
	b.mu.Unlock()
	if err := b.at("committed"); err != nil {
		return err
	}
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), b.opts.InsertTimeout)
	b.sessions.Forget(fctx, bt.snap)
	cancel()
	if err := b.log.TruncateBefore(bt.end); err != nil {
		b.opts.Log.Warn("buffer: freeing log segments", "err", err)
	}
	b.flushed.Add(int64(bt.read))
	b.lastFlush.Store(time.Now().UnixNano())
	b.mu.Lock()
	if len(b.pending) > 0 {
		b.pending = b.pending[1:]
	}
	b.mu.Unlock()
	return nil
}

// retry runs f until it succeeds, backing off between attempts and
// reporting failures to rep (once per interval); the caller says when the
// outage is over. It starts no attempt once ctx has ended (an attempt under
// way runs on: f bounds it), and gives up when a test hook stops the
// flusher.
func (b *Buffer) retry(ctx context.Context, rep *outage.Reporter, bt *batch, f func() error) error {
	backoff := 100 * time.Millisecond
	for {
		if err := ctx.Err(); err != nil {
			return err // the drain is over: no new attempt
		}
		err := f()
		if err == nil {
			return nil
		}
		if isHook(err) {
			return err
		}
		b.flushFailures.Add(1)
		rep.Fail(1, err, "batch", bt.seq, "records", bt.read, "wal_bytes", b.log.Size())
		select {
		case <-ctx.Done():
			return errors.Join(ctx.Err(), err)
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 5*time.Second)
	}
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

// hookError is a test hook's order to stop where the flusher stands.
type hookError struct{ err error }

func (e hookError) Error() string { return "buffer: stopped by a hook: " + e.err.Error() }
func (e hookError) Unwrap() error { return e.err }

func isHook(err error) bool { return errors.As(err, new(hookError)) }

// at runs the test hook of a point of the protocol. Once a hook has stopped
// one stage, every later point of either stage stops too, as a crash stops
// the whole process; hooks run one at a time.
func (b *Buffer) at(point string) error {
	if b.hooks.at == nil {
		return nil
	}
	b.hooks.mu.Lock()
	defer b.hooks.mu.Unlock()
	if b.hooks.halted != nil {
		return b.hooks.halted
	}
	if err := b.hooks.at(point); err != nil {
		b.hooks.halted = hookError{err}
		return b.hooks.halted
	}
	return nil
}

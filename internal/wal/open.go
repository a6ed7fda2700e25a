package wal

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
)

// Open opens the log in opts.Dir, creating the directory if needed.
//
// The newest existing segment is checked record by record and cut at the
// first torn or corrupt record: only a crash in the middle of a commit leaves
// one, and that commit was never acknowledged. Older segments were fsync'd
// whole before the log moved past them. Appends then go to a new segment.
func Open(opts Options) (*Log, error) {
	return open(opts, hooks{})
}

func open(opts Options, h hooks) (*Log, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(opts.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("wal: open: %w", err)
	}
	lock, err := lockDir(opts.Dir)
	if err != nil {
		return nil, err
	}
	l, err := start(opts, h, lock)
	if err != nil {
		lock.Close()
		return nil, err
	}
	return l, nil
}

// start recovers the existing segments, opens a new active one and starts the
// writer.
func start(opts Options, h hooks, lock io.Closer) (*Log, error) {
	if err := removeSpares(opts.Dir); err != nil {
		return nil, err
	}
	segs, err := listSegments(opts.Dir)
	if err != nil {
		return nil, err
	}
	next := uint64(1)
	if len(segs) > 0 {
		last := &segs[len(segs)-1]
		if last.size, err = repairTail(opts, last.num); err != nil {
			return nil, err
		}
		next = last.num + 1
	}
	l := &Log{
		opts:       opts,
		hooks:      h,
		lock:       lock,
		segments:   append(segs, segment{num: next}),
		durableCh:  make(chan struct{}),
		w:          writer{seg: next},
		writerDone: make(chan struct{}),
		early:      make(chan struct{}, 1),
	}
	if l.preallocates() {
		// the first active segment is preallocated too: made now, waited for
		l.w.spare = l.prepareSpare(next)
		<-l.w.spare.done
	}
	if l.w.f, err = l.openSegment(next); err != nil {
		if l.w.spare != nil {
			l.w.spare.discard(opts.Dir, true)
		}
		return nil, err
	}
	l.wake.L = &l.mu
	for _, s := range segs {
		l.size += s.size
		if s.size > 0 {
			l.durable = Position{Segment: s.num, Offset: s.size}
		}
	}
	l.reserved = l.size
	if opts.Callers != nil {
		opts.Callers.log.Store(l)
	}
	go l.run()
	return l, nil
}

// Close stops accepting appends, waits until the queued ones are written and
// fsync'd, and closes the files. Readers keep working up to the final
// Durable position. Close is idempotent; later calls return the first
// call's result.
func (l *Log) Close() error {
	l.closeOnce.Do(func() {
		l.mu.Lock()
		l.closing = true
		l.wake.Broadcast()
		l.mu.Unlock()
		<-l.writerDone

		// Every commit ended with an fsync, so closing loses nothing. A
		// preallocated segment is cut to its records, so that the next Open
		// finds no tail to cut (if it cannot be, that Open cuts it).
		l.seal() //nolint:errcheck // see above
		if l.w.spare != nil {
			l.w.spare.discard(l.opts.Dir, true)
		}
		err := l.w.f.Close()
		if lerr := l.lock.Close(); lerr != nil {
			err = errors.Join(err, lerr)
		}
		if err != nil {
			l.closeErr = fmt.Errorf("wal: close: %w", err)
		}
		l.mu.Lock()
		l.closed = true
		l.notifyLocked()
		l.mu.Unlock()
	})
	return l.closeErr
}

// Wait blocks until Durable() is beyond after, ctx is done, or the log is
// closed (ErrClosed) or has failed.
func (l *Log) Wait(ctx context.Context, after Position) error {
	for {
		l.mu.Lock()
		durable, ch, closed, failed := l.durable, l.durableCh, l.closed, l.failed
		l.mu.Unlock()
		switch {
		case after.Less(durable):
			return nil
		case failed != nil:
			return failed
		case closed:
			return ErrClosed
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// TruncateBefore deletes the segment files numbered below p.Segment, never
// the active one. A flusher passes the end of the last record it has
// consumed: the segment holding p stays, so a reader can always restart from
// p.
func (l *Log) TruncateBefore(p Position) error {
	l.mu.Lock()
	if l.closing {
		l.mu.Unlock()
		return ErrClosed
	}
	k := 0
	for k < len(l.segments)-1 && l.segments[k].num < p.Segment {
		l.size -= l.segments[k].size
		l.reserved -= l.segments[k].size
		k++
	}
	dead := append([]segment(nil), l.segments[:k]...)
	l.segments = l.segments[k:]
	l.mu.Unlock()

	if len(dead) == 0 {
		return nil
	}
	var errs []error
	for _, s := range dead {
		if err := os.Remove(segmentPath(l.opts.Dir, s.num)); err != nil {
			errs = append(errs, err)
		}
	}
	if !l.opts.NoSync {
		errs = append(errs, SyncDir(l.opts.Dir))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("wal: truncate before %v: %w", p, err)
	}
	return nil
}

// Normalize returns the place p names in its canonical form: the end of a
// sealed segment is the start of the next one. A checkpoint saved at the
// end of a segment then lets TruncateBefore free that segment too.
func (l *Log) Normalize(p Position) Position {
	l.mu.Lock()
	defer l.mu.Unlock()
	i, ok := l.indexLocked(p.Segment)
	if ok && i+1 < len(l.segments) && p.Offset == l.segments[i].size {
		return Position{Segment: l.segments[i+1].num}
	}
	return p
}

// notifyLocked wakes everyone waiting for Durable to change or the log to
// close or fail. l.mu must be held.
func (l *Log) notifyLocked() {
	close(l.durableCh)
	l.durableCh = make(chan struct{})
}

// setFailed makes err sticky: from now on appends fail with it.
func (l *Log) setFailed(err error) {
	l.mu.Lock()
	if l.failed == nil {
		l.failed = fmt.Errorf("wal: log failed, reopen it: %w", err)
	}
	l.notifyLocked()
	l.mu.Unlock()
}

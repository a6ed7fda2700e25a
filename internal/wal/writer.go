package wal

import (
	"errors"
	"fmt"
	"os"
	"time"
)

// writer is the state of the writer goroutine: the active segment file, its
// fsync'd length and the buffer of the commit in progress.
type writer struct {
	f     *os.File
	seg   uint64
	off   int64
	buf   []byte
	chunk []*request // requests whose records are in buf
	spare *spare     // the next segment's file, being made (Options.Preallocate)
}

// run is the writer goroutine: it commits the queued groups one by one until
// Close has begun and the queue is empty. While it writes and fsyncs one
// group, new appends gather in the next one: that is the group commit.
func (l *Log) run() {
	defer close(l.writerDone)
	var last time.Time // when the previous commit began
	for {
		l.mu.Lock()
		for len(l.queue) == 0 && !l.closing {
			l.wake.Wait()
		}
		if len(l.queue) == 0 {
			l.mu.Unlock()
			return
		}
		if wait := l.opts.SyncEvery - time.Since(last); wait > 0 && !l.closing && len(l.queue) == 1 {
			// let more appends join the group: fewer, larger fsyncs
			l.holdBack(wait)
		}
		last = time.Now()
		g := l.queue[0]
		l.queue[0] = nil
		l.queue = l.queue[1:]
		failed := l.failed
		l.mu.Unlock()

		if failed != nil {
			l.failPending(g.reqs, failed)
		} else {
			l.commit(g)
		}
		close(g.done)
	}
}

// commit writes the group's records with one write and one fsync per segment
// they land in: a request that would overflow the active segment first
// flushes the records before it and rotates.
func (l *Log) commit(g *group) {
	w := &l.w
	for i, r := range g.reqs {
		if !r.take() {
			continue // cancelled while queued
		}
		if used := w.off + int64(len(w.buf)); used > 0 && used+int64(len(r.data)) > l.opts.SegmentBytes {
			err := l.flush()
			if err == nil {
				err = l.rotate()
			}
			if err != nil {
				l.fail(r, err)
				l.failPending(g.reqs[i+1:], err)
				return
			}
		}
		w.buf = append(w.buf, r.data...)
		r.end = Position{Segment: w.seg, Offset: w.off + int64(len(w.buf))}
		w.chunk = append(w.chunk, r)
	}
	l.flush() // on failure it has already failed the requests
	if cap(w.buf) > 2*maxGroupBytes {
		w.buf = nil // do not pin the memory of one huge batch
	}
}

// flush writes and fsyncs the buffered records and publishes their
// durability. On failure it cuts the segment back to its fsync'd length so
// that the log stays usable (after ENOSPC, say); if even that fails, the log
// fails for good.
func (l *Log) flush() error {
	w := &l.w
	if len(w.buf) == 0 {
		return nil
	}
	chunk := w.chunk
	n := int64(len(w.buf))
	err := l.writeAndSync()
	w.buf, w.chunk = w.buf[:0], w.chunk[:0]
	if err != nil {
		err = fmt.Errorf("wal: commit to segment %d: %w", w.seg, err)
		if uerr := l.undoTail(); uerr != nil {
			l.setFailed(errors.Join(err, uerr))
		}
		for _, r := range chunk {
			l.fail(r, err)
		}
		clear(chunk)
		return err
	}
	w.off += n
	records := 0
	for _, r := range chunk {
		records += r.records
	}
	l.records.Add(uint64(records))
	l.syncs.Add(1)

	l.mu.Lock()
	l.segments[len(l.segments)-1].size = w.off
	l.size += n
	l.durable = chunk[len(chunk)-1].end
	l.notifyLocked()
	l.mu.Unlock()
	clear(chunk) // drop the references to finished requests
	return nil
}

func (l *Log) writeAndSync() error {
	w := &l.w
	if _, err := w.f.WriteAt(w.buf, w.off); err != nil {
		return err
	}
	if l.hooks.beforeSync != nil {
		if err := l.hooks.beforeSync(); err != nil {
			return err
		}
	}
	if l.opts.NoSync {
		return nil
	}
	return syncData(w.f)
}

// undoTail cuts the active segment back to its fsync'd length after a failed
// commit. The cut records were never acknowledged, and after a failed fsync
// the kernel may have dropped their dirty pages, so retrying the fsync would
// prove nothing; the records before them were fsync'd earlier and are intact.
func (l *Log) undoTail() error {
	if err := l.w.f.Truncate(l.w.off); err != nil {
		return err
	}
	if l.opts.NoSync {
		return nil
	}
	return l.w.f.Sync()
}

// rotate seals the active segment, whose records are all fsync'd, and starts
// the next one.
func (l *Log) rotate() error {
	w := &l.w
	next := w.seg + 1
	if err := l.seal(); err != nil {
		return err
	}
	f, err := l.openSegment(next)
	if err != nil {
		return err
	}
	old := w.f
	w.f, w.seg, w.off = f, next, 0
	l.mu.Lock()
	l.segments = append(l.segments, segment{num: next})
	l.mu.Unlock()
	old.Close() // its data is on disk; a close error changes nothing
	return nil
}

// fail reports err to a request the writer took and returns its budget.
func (l *Log) fail(r *request, err error) {
	r.err = err
	l.release(int64(len(r.data)))
}

// failPending fails the requests not cancelled yet.
func (l *Log) failPending(reqs []*request, err error) {
	for _, r := range reqs {
		if r.take() {
			l.fail(r, err)
		}
	}
}

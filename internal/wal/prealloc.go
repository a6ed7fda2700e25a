package wal

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
)

// Preallocated segments (Options.Preallocate).
//
// An fdatasync after an append that grows a file must also make the file's
// new size and blocks durable: its inode and the allocation metadata the
// growth changed. With a journal (ext4, XFS) that is a journal commit, which
// carries every metadata change queued on the file system, whoever made it;
// without one (ext4 can run so) it is synchronous writes of those metadata
// blocks, which the file system shares between files. Either way, on a box
// where ClickHouse creates and deletes the files of parts at every insert,
// the log's commits wait behind that work. A segment whose bytes were all
// written (zeros) and fsync'd before it became active is overwritten in
// place, and an fdatasync of it flushes data only.
//
// So the next segment is made in the background while the active one fills:
// a spare file, zero-filled to SegmentBytes and fsync'd, renamed into place
// when the log rotates. A sealed segment is cut to the length of its records
// before the next one is made, and the active one when the log closes; only
// a crash leaves zeros after a segment's records, the last one's, which Open
// cuts as it cuts a torn tail (zeros can never pass for a record: see
// ErrPayloadSize).

// spareExt ends the name of a spare segment file; listSegments ignores it.
const spareExt = ".spare"

// fillChunk is the size of one zero-filling write; a spare is fsync'd every
// fillSyncEvery bytes, so that making it never queues one large flush ahead
// of the log's commits.
const (
	fillChunk     = 1 << 20
	fillSyncEvery = 8 << 20
)

func sparePath(dir string, num uint64) string { return segmentPath(dir, num) + spareExt }

// spare is the file of a segment to come, zero-filled in the background.
type spare struct {
	num  uint64
	stop atomic.Bool   // set to abandon the filling
	done chan struct{} // closed once f is ready or the filling failed
	f    *os.File      // nil when the filling failed or was abandoned
}

// prepareSpare starts making the spare file of segment num.
func (l *Log) prepareSpare(num uint64) *spare {
	s := &spare{num: num, done: make(chan struct{})}
	go func() {
		defer func() {
			close(s.done)
			if l.hooks.spareMade != nil {
				l.hooks.spareMade(num)
			}
		}()
		path := sparePath(l.opts.Dir, num)
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
		if err == nil {
			err = zeroFill(f, l.opts.SegmentBytes, &s.stop)
			if err != nil {
				f.Close()
				os.Remove(path)
			}
		}
		if err != nil {
			if !s.stop.Load() {
				l.opts.Logger.Warn("wal: cannot preallocate the next segment; it will grow as it is written",
					"segment", num, "err", err)
			}
			return
		}
		s.f = f
	}()
	return s
}

// errStopped ends a zero-filling that was abandoned.
var errStopped = errors.New("wal: preallocation abandoned")

// zeroFill writes size zero bytes to f and fsyncs them.
func zeroFill(f *os.File, size int64, stop *atomic.Bool) error {
	zero := make([]byte, fillChunk)
	for off := int64(0); off < size; {
		if stop.Load() {
			return errStopped
		}
		n := min(int64(len(zero)), size-off)
		if _, err := f.WriteAt(zero[:n], off); err != nil {
			return err
		}
		off += n
		if off%fillSyncEvery == 0 {
			if err := syncData(f); err != nil {
				return err
			}
		}
	}
	return syncData(f)
}

// discard abandons the spare and removes its file, once the filling has
// stopped (in the background unless wait).
func (s *spare) discard(dir string, wait bool) {
	s.stop.Store(true)
	finish := func() {
		<-s.done
		if s.f != nil {
			s.f.Close()
		}
		os.Remove(sparePath(dir, s.num))
	}
	if wait {
		finish()
		return
	}
	go finish()
}

// useSpare makes the ready spare of segment num that segment, durably
// named; it returns nil when there is none (not asked for, not ready yet,
// or failed), and the caller creates an empty segment instead.
func (l *Log) useSpare(num uint64) *os.File {
	s := l.w.spare
	l.w.spare = nil
	if s == nil {
		return nil
	}
	select {
	case <-s.done:
	default:
		// still filling: the log does not wait for it
		s.discard(l.opts.Dir, false)
		return nil
	}
	if s.f == nil {
		return nil // the filling failed and removed its file
	}
	if err := os.Rename(sparePath(l.opts.Dir, num), segmentPath(l.opts.Dir, num)); err != nil {
		s.discard(l.opts.Dir, false)
		return nil
	}
	if err := SyncDir(l.opts.Dir); err != nil {
		// the name may not survive a crash: a segment of that number would
		// then be missing, so this file is not used
		s.f.Close()
		os.Remove(segmentPath(l.opts.Dir, num))
		return nil
	}
	return s.f
}

// openSegment opens segment num as the active one: preallocated when the
// spare is ready, otherwise empty. With Options.Preallocate it then starts
// the spare of the segment after it.
func (l *Log) openSegment(num uint64) (*os.File, error) {
	f := l.useSpare(num)
	if f == nil {
		var err error
		if f, err = createSegment(l.opts.Dir, num, !l.opts.NoSync); err != nil {
			return nil, err
		}
	}
	if l.preallocates() {
		l.w.spare = l.prepareSpare(num + 1)
	}
	return f, nil
}

func (l *Log) preallocates() bool { return l.opts.Preallocate && !l.opts.NoSync }

// seal cuts the active segment to the length of its records (a
// preallocated one holds zeros after them) and makes that durable, before
// the log moves past it or closes: a sealed segment's size is its records'.
func (l *Log) seal() error {
	if !l.preallocates() {
		return nil
	}
	w := &l.w
	if err := w.f.Truncate(w.off); err != nil {
		return err
	}
	return w.f.Sync()
}

// removeSpares deletes the spare files a crash left in dir.
func removeSpares(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("wal: list segments: %w", err)
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), segmentExt+spareExt) {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
				return fmt.Errorf("wal: remove a spare segment: %w", err)
			}
		}
	}
	return nil
}

// allZero reports whether r holds only zero bytes up to its end.
func allZero(r io.Reader) (bool, error) {
	buf := make([]byte, 64<<10)
	for {
		n, err := r.Read(buf)
		for _, c := range buf[:n] {
			if c != 0 {
				return false, nil
			}
		}
		if err == io.EOF {
			return true, nil
		}
		if err != nil {
			return false, err
		}
	}
}

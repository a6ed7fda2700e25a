package wal

import (
	"cmp"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"slices"
)

// readAhead is how much a Reader reads from a segment at a time.
const readAhead = 256 << 10

// Reader reads records in log order, following segment rotation. It returns
// only fsync'd records. A Reader is not safe for concurrent use; it keeps
// working after the Log is closed.
type Reader struct {
	l      *Log
	seg    uint64
	off    int64 // where the next record starts
	f      *os.File
	buf    []byte // bytes of f starting at bufOff, all fsync'd
	bufOff int64
}

// NewReader returns a Reader whose first record is the one starting at from,
// which must be a record boundary, normally the end of a record returned
// earlier. The zero Position starts at First().
func (l *Log) NewReader(from Position) (*Reader, error) {
	l.mu.Lock()
	if from == (Position{}) {
		from = Position{Segment: l.segments[0].num}
	}
	s, ok := l.segmentLocked(from.Segment)
	first, last := l.segments[0].num, l.segments[len(l.segments)-1].num
	l.mu.Unlock()
	if !ok || from.Offset < 0 || from.Offset > s.size {
		return nil, fmt.Errorf("%w: %v (live segments %d to %d)", ErrPosition, from, first, last)
	}
	r := &Reader{l: l}
	if err := r.open(from.Segment); err != nil {
		return nil, err
	}
	r.off = from.Offset
	return r, nil
}

// Next returns the next record's payload, in a slice of its own, and the
// position of the record's end, to be saved as a checkpoint. It returns
// io.EOF when it has caught up with Durable(); call it again after Log.Wait.
// A damaged record yields an error wrapping ErrCorrupt.
func (r *Reader) Next() ([]byte, Position, error) {
	if r.f == nil {
		return nil, Position{}, ErrClosed
	}
	for {
		size, next, ok := r.l.segmentState(r.seg)
		switch {
		case !ok:
			return nil, Position{}, fmt.Errorf("%w: segment %d was truncated while being read", ErrPosition, r.seg)
		case r.off < size:
			return r.record(size)
		case next == 0:
			return nil, Position{}, io.EOF
		}
		if err := r.open(next); err != nil {
			return nil, Position{}, err
		}
	}
}

// Close releases the Reader's file.
func (r *Reader) Close() error {
	if r.f == nil {
		return nil
	}
	err := r.f.Close()
	r.f = nil
	return err
}

// record reads the record at r.off, which lies before limit, the fsync'd
// length of the segment.
func (r *Reader) record(limit int64) ([]byte, Position, error) {
	if limit-r.off < headerSize {
		return nil, Position{}, r.corrupt("truncated header")
	}
	hdr, err := r.window(r.off, headerSize, limit)
	if err != nil {
		return nil, Position{}, err
	}
	n, sum, ok := parseHeader(hdr)
	if !ok || limit-r.off-headerSize < int64(n) {
		return nil, Position{}, r.corrupt("bad length")
	}
	payload := make([]byte, n)
	if n >= readAhead/2 {
		_, err = r.f.ReadAt(payload, r.off+headerSize)
	} else {
		var b []byte
		b, err = r.window(r.off+headerSize, n, limit)
		copy(payload, b)
	}
	if err != nil {
		return nil, Position{}, fmt.Errorf("wal: read segment %d: %w", r.seg, err)
	}
	if crc32.Checksum(payload, castagnoli) != sum {
		return nil, Position{}, r.corrupt("checksum mismatch")
	}
	r.off += int64(headerSize + n)
	return payload, Position{Segment: r.seg, Offset: r.off}, nil
}

// window returns the n bytes of the segment at off, reading ahead up to limit.
func (r *Reader) window(off int64, n int, limit int64) ([]byte, error) {
	if off >= r.bufOff && off+int64(n) <= r.bufOff+int64(len(r.buf)) {
		i := off - r.bufOff
		return r.buf[i : i+int64(n)], nil
	}
	want := min(int64(max(n, readAhead)), limit-off)
	if int64(cap(r.buf)) < want {
		r.buf = make([]byte, want)
	}
	r.buf = r.buf[:want]
	if _, err := r.f.ReadAt(r.buf, off); err != nil {
		r.buf = r.buf[:0]
		return nil, fmt.Errorf("wal: read segment %d: %w", r.seg, err)
	}
	r.bufOff = off
	return r.buf[:n], nil
}

func (r *Reader) corrupt(why string) error {
	return fmt.Errorf("%w: segment %d offset %d: %s", ErrCorrupt, r.seg, r.off, why)
}

// open switches the Reader to the start of segment num.
func (r *Reader) open(num uint64) error {
	f, err := os.Open(segmentPath(r.l.opts.Dir, num))
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: segment %d was truncated", ErrPosition, num)
	}
	if err != nil {
		return fmt.Errorf("wal: read segment %d: %w", num, err)
	}
	if r.f != nil {
		r.f.Close()
	}
	r.f, r.seg, r.off = f, num, 0
	r.buf, r.bufOff = r.buf[:0], 0
	return nil
}

// segmentState reports the fsync'd size of segment num and the number of the
// segment after it, zero if num is the active segment.
func (l *Log) segmentState(num uint64) (size int64, next uint64, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	i, ok := l.indexLocked(num)
	if !ok {
		return 0, 0, false
	}
	if i+1 < len(l.segments) {
		next = l.segments[i+1].num
	}
	return l.segments[i].size, next, true
}

func (l *Log) segmentLocked(num uint64) (segment, bool) {
	i, ok := l.indexLocked(num)
	if !ok {
		return segment{}, false
	}
	return l.segments[i], true
}

func (l *Log) indexLocked(num uint64) (int, bool) {
	return slices.BinarySearchFunc(l.segments, num, func(s segment, num uint64) int {
		return cmp.Compare(s.num, num)
	})
}

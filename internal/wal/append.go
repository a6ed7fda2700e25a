package wal

import (
	"context"
	"encoding/binary"
	"hash/crc32"
	"slices"
	"sync/atomic"
)

// A request is one Append or AppendBatch call. Its records are framed by the
// caller's goroutine, so checksums are computed in parallel and the writer
// never touches the caller's payload slices.
type request struct {
	data    []byte // framed records
	records int
	state   atomic.Int32
	// Set by the writer before it closes the group's done channel.
	end Position
	err error
}

// Request states: the writer takes a pending request to write it, or the
// caller cancels it first and it is never written.
const (
	pending int32 = iota
	taken
	cancelled
)

// result is the outcome of a finished request.
func (r *request) result() (Position, error) {
	if r.err != nil {
		return Position{}, r.err
	}
	return r.end, nil
}

func (r *request) take() bool   { return r.state.CompareAndSwap(pending, taken) }
func (r *request) cancel() bool { return r.state.CompareAndSwap(pending, cancelled) }

// A group is the set of requests one commit writes with one fsync.
type group struct {
	reqs    []*request
	records int
	bytes   int64
	done    chan struct{} // closed when every request has its end or err
}

// Append writes payload as one record and returns once it is fsync'd,
// together with the other records queued at that moment. The returned
// Position is the record's end. The payload is copied before Append returns.
//
// Append fails with ErrPayloadSize, with ErrFull when the disk budget would be
// exceeded, with ErrClosed once Close has begun, and with an I/O error when
// the commit failed (nothing of the record is then in the log). If ctx ends
// first Append returns ctx.Err(): a record still waiting in the queue is
// dropped, but one the writer already took may still be committed, so a
// context error means "not acknowledged", not "not logged".
func (l *Log) Append(ctx context.Context, payload []byte) (Position, error) {
	return l.AppendBatch(ctx, [][]byte{payload})
}

// AppendBatch is Append for several records, which are committed together,
// in order and in one segment; the returned Position is the end of the last
// one. An empty batch returns Durable().
func (l *Log) AppendBatch(ctx context.Context, payloads [][]byte) (Position, error) {
	n := 0
	for _, p := range payloads {
		n += headerSize + len(p)
	}
	f := Framed{data: make([]byte, 0, n)}
	for _, p := range payloads {
		if err := f.Add(func(b []byte) []byte { return append(b, p...) }); err != nil {
			return Position{}, err
		}
	}
	return l.AppendFramed(ctx, &f)
}

// Framed is records framed as the log writes them, each encoded by its
// caller in place, so that AppendFramed commits them without the copy
// AppendBatch makes of its payloads.
type Framed struct {
	data    []byte
	records int
}

// Grow makes room for n more bytes of records and their frames.
func (f *Framed) Grow(n int) { f.data = slices.Grow(f.data, n) }

// Add appends one record, whose payload encode appends to the slice it is
// given. A payload that is empty or over MaxPayload is not added:
// ErrPayloadSize.
func (f *Framed) Add(encode func([]byte) []byte) error {
	start := len(f.data)
	data := encode(append(f.data, make([]byte, headerSize)...))
	payload := data[start+headerSize:]
	if len(payload) == 0 || len(payload) > MaxPayload {
		f.data = data[:start]
		return ErrPayloadSize
	}
	binary.LittleEndian.PutUint32(data[start:], uint32(len(payload)))
	binary.LittleEndian.PutUint32(data[start+4:], crc32.Checksum(payload, castagnoli))
	f.data, f.records = data, f.records+1
	return nil
}

// AppendFramed is AppendBatch for records framed in f. The log keeps f's
// bytes from the call on: f must not be used again.
func (l *Log) AppendFramed(ctx context.Context, f *Framed) (Position, error) {
	if f.records == 0 {
		return l.Durable(), nil
	}
	if err := ctx.Err(); err != nil {
		return Position{}, err
	}
	r := &request{records: f.records, data: f.data}
	*f = Framed{}
	g, err := l.enqueue(r)
	if err != nil {
		return Position{}, err
	}
	select {
	case <-g.done:
		return r.result()
	case <-ctx.Done():
	}
	select {
	case <-g.done: // finished meanwhile: report that
		return r.result()
	default:
	}
	if r.cancel() {
		l.release(int64(len(r.data)))
	}
	return Position{}, ctx.Err()
}

// enqueue adds r to the newest group that has room, or to a new one.
func (l *Log) enqueue(r *request) (*group, error) {
	n := int64(len(r.data))
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.closing:
		return nil, ErrClosed
	case l.failed != nil:
		return nil, l.failed
	case l.opts.MaxBytes > 0 && l.reserved+n > l.opts.MaxBytes:
		return nil, ErrFull
	}
	l.reserved += n
	var g *group
	if k := len(l.queue); k > 0 {
		g = l.queue[k-1]
		if g.records+r.records > l.opts.MaxBatch || g.bytes+n > maxGroupBytes {
			g = nil
		}
	}
	if g == nil {
		g = &group{done: make(chan struct{})}
		l.queue = append(l.queue, g)
	}
	g.reqs = append(g.reqs, r)
	g.records += r.records
	g.bytes += n
	l.joined(g)
	l.wake.Signal()
	return g, nil
}

// release returns the budget of n bytes that will never be written.
func (l *Log) release(n int64) {
	l.mu.Lock()
	l.reserved -= n
	l.mu.Unlock()
}

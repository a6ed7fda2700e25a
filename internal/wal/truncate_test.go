package wal

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func errorsIs(err, target error) bool { return errors.Is(err, target) }

func TestTruncateBefore(t *testing.T) {
	tests := []struct {
		name string
		at   func(recs []record) Position // where the flusher truncates
	}{
		{name: "zero position", at: func([]record) Position { return Position{} }},
		{name: "first record", at: func(recs []record) Position { return recs[0].End }},
		{name: "middle", at: func(recs []record) Position { return recs[len(recs)/2].End }},
		{name: "last record", at: func(recs []record) Position { return recs[len(recs)-1].End }},
		{name: "far beyond", at: func([]record) Position { return Position{Segment: 1 << 60} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			l := openLog(t, Options{Dir: dir, SegmentBytes: 256})
			recs := appendAll(t, l, payloads(0, 60, 40))
			before := segmentNums(t, dir)
			sizeBefore := l.Size()
			p := tt.at(recs)

			if err := l.TruncateBefore(p); err != nil {
				t.Fatalf("TruncateBefore(%v): %v", p, err)
			}
			var want []uint64
			for _, n := range before {
				if n >= p.Segment || n == before[len(before)-1] {
					want = append(want, n)
				}
			}
			if diff := cmp.Diff(want, segmentNums(t, dir)); diff != "" {
				t.Errorf("segments left (-want +got):\n%s", diff)
			}
			if got := l.First(); got != (Position{Segment: want[0]}) {
				t.Errorf("First() = %v, want segment %d", got, want[0])
			}
			if size, disk := l.Size(), dirBytes(t, dir); size != disk || (len(want) < len(before) && size >= sizeBefore) {
				t.Errorf("Size() = %d (was %d), files hold %d", size, sizeBefore, disk)
			}
			// Every record after p is still readable from p.
			var rest []record
			for _, r := range recs {
				if p.Less(r.End) {
					rest = append(rest, r)
				}
			}
			if p.Segment >= want[0] && p.Segment <= want[len(want)-1] {
				if diff := cmp.Diff(rest, readAll(t, l, p)); diff != "" {
					t.Errorf("records after %v (-want +got):\n%s", p, diff)
				}
			}
			if len(want) < len(before) {
				if _, err := l.NewReader(recs[0].End); !errors.Is(err, ErrPosition) {
					t.Errorf("NewReader at a truncated position: %v, want ErrPosition", err)
				}
			}
			// The log goes on.
			more := appendAll(t, l, payloads(100, 3, 40))
			if diff := cmp.Diff(more, readAll(t, l, recs[len(recs)-1].End)); diff != "" {
				t.Errorf("new records (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMaxBytes(t *testing.T) {
	const payloadSize, frame = 100, 100 + headerSize
	dir := t.TempDir()
	l := openLog(t, Options{Dir: dir, SegmentBytes: 2 * frame, MaxBytes: 9 * frame})
	ctx := context.Background()
	recs := appendAll(t, l, payloads(0, 9, payloadSize))
	if _, err := l.Append(ctx, []byte(payload(9, payloadSize))); !errors.Is(err, ErrFull) {
		t.Fatalf("Append over budget: %v, want ErrFull", err)
	}
	if _, err := l.AppendBatch(ctx, [][]byte{[]byte("x")}); !errors.Is(err, ErrFull) {
		t.Fatalf("AppendBatch over budget: %v, want ErrFull", err)
	}
	if got := l.Size(); got != 9*frame {
		t.Errorf("Size() = %d, want %d", got, 9*frame)
	}

	// The flusher consumed everything: all segments but the last go.
	if err := l.TruncateBefore(recs[len(recs)-1].End); err != nil {
		t.Fatal(err)
	}
	if got := l.Size(); got != frame {
		t.Errorf("Size() after truncation = %d, want %d", got, frame)
	}
	more := appendAll(t, l, payloads(10, 8, payloadSize))
	if _, err := l.Append(ctx, []byte(payload(99, payloadSize))); !errors.Is(err, ErrFull) {
		t.Errorf("Append over budget again: %v, want ErrFull", err)
	}
	want := append([]record{recs[len(recs)-1]}, more...)
	if diff := cmp.Diff(want, readAll(t, l, Position{})); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
	if !slices.Equal(segmentNums(t, dir)[:1], []uint64{recs[len(recs)-1].End.Segment}) {
		t.Errorf("segments %v do not start at the kept one", segmentNums(t, dir))
	}
}

// The end of a sealed segment and the start of the next are one place;
// Normalize names it by the latter, so that TruncateBefore can free the
// sealed segment.
func TestNormalize(t *testing.T) {
	dir := t.TempDir()
	l := openLog(t, Options{Dir: dir})
	appendAll(t, l, payloads(0, 3, 100))
	end := l.Durable()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = openLog(t, Options{Dir: dir}) // segment 1 is sealed, 2 is active
	next := Position{Segment: end.Segment + 1}
	if got := l.Normalize(end); got != next {
		t.Errorf("Normalize(end of sealed segment %v) = %v, want %v", end, got, next)
	}
	mid := Position{Segment: end.Segment, Offset: end.Offset - 1}
	if got := l.Normalize(mid); got != mid {
		t.Errorf("Normalize(%v) = %v, want it unchanged", mid, got)
	}
	if got := l.Normalize(next); got != next {
		t.Errorf("Normalize(start of the active segment) = %v, want it unchanged", got)
	}
	if err := l.TruncateBefore(l.Normalize(end)); err != nil {
		t.Fatal(err)
	}
	if nums := segmentNums(t, dir); len(nums) != 1 || nums[0] != next.Segment {
		t.Errorf("segments after truncating before %v: %v, want only %d", next, nums, next.Segment)
	}
	if _, err := l.NewReader(next); err != nil {
		t.Errorf("a reader at %v: %v", next, err)
	}
}

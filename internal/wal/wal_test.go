package wal

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// record is one record as the tests see it.
type record struct {
	Payload string
	End     Position
}

func openLog(t testing.TB, opts Options) *Log {
	t.Helper()
	l, err := Open(opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// payload returns a distinct payload of at least size bytes.
func payload(i, size int) string {
	p := fmt.Sprintf("event-%06d;", i)
	if len(p) < size {
		p += strings.Repeat("x", size-len(p))
	}
	return p
}

// appendAll appends the payloads one by one and returns them with their ends.
func appendAll(t testing.TB, l *Log, payloads []string) []record {
	t.Helper()
	var recs []record
	for _, p := range payloads {
		end, err := l.Append(context.Background(), []byte(p))
		if err != nil {
			t.Fatalf("Append(%.20q): %v", p, err)
		}
		recs = append(recs, record{Payload: p, End: end})
	}
	return recs
}

func payloads(from, n, size int) []string {
	var ps []string
	for i := from; i < from+n; i++ {
		ps = append(ps, payload(i, size))
	}
	return ps
}

// readAll reads every durable record from the position on.
func readAll(t testing.TB, l *Log, from Position) []record {
	t.Helper()
	r, err := l.NewReader(from)
	if err != nil {
		t.Fatalf("NewReader(%v): %v", from, err)
	}
	defer r.Close()
	var recs []record
	for {
		p, end, err := r.Next()
		if errors.Is(err, io.EOF) {
			return recs
		}
		if err != nil {
			t.Fatalf("Next after %d records: %v", len(recs), err)
		}
		recs = append(recs, record{Payload: string(p), End: end})
	}
}

// segmentNums lists the segment files in dir.
func segmentNums(t testing.TB, dir string) []uint64 {
	t.Helper()
	segs, err := listSegments(dir)
	if err != nil {
		t.Fatal(err)
	}
	var nums []uint64
	for _, s := range segs {
		nums = append(nums, s.num)
	}
	return nums
}

// dirBytes sums the sizes of the segment files in dir.
func dirBytes(t testing.TB, dir string) int64 {
	t.Helper()
	segs, err := listSegments(dir)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, s := range segs {
		n += s.size
	}
	return n
}

func TestRoundTrip(t *testing.T) {
	tests := []struct {
		name         string
		segmentBytes int64
		payloads     []string
		batch        int // AppendBatch of this many; 0 uses Append
		minSegments  int
	}{
		{name: "one segment", payloads: payloads(0, 100, 50), minSegments: 1},
		{name: "rotations", segmentBytes: 512, payloads: payloads(0, 200, 40), minSegments: 10},
		{name: "records larger than a segment", segmentBytes: 64, payloads: payloads(0, 10, 200), minSegments: 10},
		{name: "varied sizes", segmentBytes: 4096, payloads: []string{"a", payload(1, 3000), "b", payload(2, 5000), payload(3, 100)}, minSegments: 3},
		{name: "batches", segmentBytes: 1024, payloads: payloads(0, 300, 30), batch: 7, minSegments: 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			l := openLog(t, Options{Dir: dir, SegmentBytes: tt.segmentBytes})
			var want []record
			if tt.batch == 0 {
				want = appendAll(t, l, tt.payloads)
			} else {
				for i := 0; i < len(tt.payloads); i += tt.batch {
					chunk := tt.payloads[i:min(i+tt.batch, len(tt.payloads))]
					var bs [][]byte
					for _, p := range chunk {
						bs = append(bs, []byte(p))
					}
					end, err := l.AppendBatch(context.Background(), bs)
					if err != nil {
						t.Fatalf("AppendBatch: %v", err)
					}
					got := readAll(t, l, Position{})
					if last := got[len(got)-1]; last.End != end {
						t.Fatalf("AppendBatch returned %v, last record ends at %v", end, last.End)
					}
					want = got
				}
			}
			got := readAll(t, l, Position{})
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("records read back (-appended +read):\n%s", diff)
			}
			for i := 1; i < len(got); i++ {
				if !got[i-1].End.Less(got[i].End) {
					t.Errorf("record %d ends at %v, not after %v", i, got[i].End, got[i-1].End)
				}
			}
			if d := l.Durable(); d != got[len(got)-1].End {
				t.Errorf("Durable() = %v, want %v", d, got[len(got)-1].End)
			}
			if n := len(segmentNums(t, dir)); n < tt.minSegments {
				t.Errorf("%d segments, want at least %d", n, tt.minSegments)
			}
			if size, disk := l.Size(), dirBytes(t, dir); size != disk {
				t.Errorf("Size() = %d, files hold %d", size, disk)
			}
		})
	}
}

func TestPayloadSize(t *testing.T) {
	l := openLog(t, Options{Dir: t.TempDir(), NoSync: true})
	tests := []struct {
		name    string
		payload []byte
		wantErr error
	}{
		{name: "empty", payload: nil, wantErr: ErrPayloadSize},
		{name: "too large", payload: make([]byte, MaxPayload+1), wantErr: ErrPayloadSize},
		{name: "largest", payload: make([]byte, MaxPayload)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := l.Append(context.Background(), tt.payload)
			if !errors.Is(err, tt.wantErr) {
				t.Errorf("Append: %v, want %v", err, tt.wantErr)
			}
		})
	}
	if got := readAll(t, l, Position{}); len(got) != 1 || len(got[0].Payload) != MaxPayload {
		t.Errorf("read %d records, want the one of %d bytes", len(got), MaxPayload)
	}
}

func TestReopen(t *testing.T) {
	dir := t.TempDir()
	opts := Options{Dir: dir, SegmentBytes: 300}
	l := openLog(t, opts)
	old := appendAll(t, l, payloads(0, 20, 40))
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	before := segmentNums(t, dir)

	// Reopening twice without appends leaves an empty segment in between.
	for range 2 {
		l = openLog(t, opts)
		if d := l.Durable(); d != old[len(old)-1].End {
			t.Errorf("Durable() after reopen = %v, want %v", d, old[len(old)-1].End)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}
	l = openLog(t, opts)
	after := segmentNums(t, dir)
	if want := before[len(before)-1] + 3; after[len(after)-1] != want {
		t.Errorf("segments after reopening: %v, want the last to be %d", after, want)
	}
	added := appendAll(t, l, payloads(100, 5, 40))
	if got := added[0].End.Segment; got != after[len(after)-1] {
		t.Errorf("first new record went to segment %d, want the new segment %d", got, after[len(after)-1])
	}

	tests := []struct {
		name string
		from Position
		want []record
	}{
		{name: "from the start", from: Position{}, want: append(append([]record{}, old...), added...)},
		{name: "from an old position", from: old[12].End, want: append(append([]record{}, old[13:]...), added...)},
		{name: "from the old end", from: old[len(old)-1].End, want: added},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, readAll(t, l, tt.from)); diff != "" {
				t.Errorf("records (-want +got):\n%s", diff)
			}
		})
	}
}

func TestOpenLocked(t *testing.T) {
	dir := t.TempDir()
	l := openLog(t, Options{Dir: dir})
	if l2, err := Open(Options{Dir: dir}); err == nil {
		l2.Close()
		t.Fatal("second Open of the same directory succeeded")
	}
	l.Close()
	l2 := openLog(t, Options{Dir: dir})
	l2.Close()
}

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "checkpoint")
	for _, data := range []string{"first", "second, longer", "3"} {
		if err := WriteFileAtomic(path, []byte(data)); err != nil {
			t.Fatalf("WriteFileAtomic: %v", err)
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != data {
			t.Errorf("file holds %q, want %q", got, data)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries, want only the checkpoint", len(entries))
	}
	if err := WriteFileAtomic(filepath.Join(dir, "missing", "x"), nil); err == nil {
		t.Error("WriteFileAtomic into a missing directory succeeded")
	}
}

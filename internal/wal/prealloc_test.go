package wal

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return info.Size()
}

// recordsEnd is where the records of segment num end.
func recordsEnd(recs []record, num uint64) int64 {
	var end int64
	for _, r := range recs {
		if r.End.Segment == num {
			end = max(end, r.End.Offset)
		}
	}
	return end
}

// waitMade waits until the spare of segment num is ready.
func waitMade(t *testing.T, made <-chan uint64, num uint64) {
	t.Helper()
	timeout := time.After(5 * time.Second)
	for {
		select {
		case n := <-made:
			if n == num {
				return
			}
		case <-timeout:
			t.Fatalf("the spare of segment %d was never made", num)
		}
	}
}

func spareFiles(t *testing.T, dir string) []string {
	t.Helper()
	found, err := filepath.Glob(filepath.Join(dir, "*"+spareExt))
	if err != nil {
		t.Fatal(err)
	}
	return found
}

func TestPreallocatedSegments(t *testing.T) {
	const segBytes = 64 << 10
	dir := t.TempDir()
	var logs bytes.Buffer
	made := make(chan uint64, 16)
	opts := Options{Dir: dir, SegmentBytes: segBytes, Preallocate: true, Logger: slog.New(slog.NewTextHandler(&logs, nil))}
	l := openHooked(t, opts, hooks{spareMade: func(num uint64) { made <- num }})
	waitMade(t, made, 1)
	if got := fileSize(t, segmentPath(dir, 1)); got != segBytes {
		t.Fatalf("the first segment holds %d bytes after Open, want %d (whole)", got, segBytes)
	}

	// 70 records of ~1 KB overflow a 64 KiB segment: each round reaches the
	// next segment, whose spare is ready by then
	var want []record
	for seg := uint64(2); seg <= 3; seg++ {
		waitMade(t, made, seg)
		want = append(want, appendAll(t, l, payloads(len(want), 70, 1000))...)
		if last := want[len(want)-1].End.Segment; last != seg {
			t.Fatalf("the records reached segment %d, want %d", last, seg)
		}
		if got, end := fileSize(t, segmentPath(dir, seg-1)), recordsEnd(want, seg-1); got != end {
			t.Errorf("sealed segment %d holds %d bytes, want its records' %d", seg-1, got, end)
		}
		if got := fileSize(t, segmentPath(dir, seg)); got != segBytes {
			t.Errorf("active segment %d holds %d bytes, want %d (whole)", seg, got, segBytes)
		}
	}
	if diff := cmp.Diff(want, readAll(t, l, Position{})); diff != "" {
		t.Fatalf("records (-want +got):\n%s", diff)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if got, end := fileSize(t, segmentPath(dir, 3)), recordsEnd(want, 3); got != end {
		t.Errorf("after Close segment 3 holds %d bytes, want its records' %d", got, end)
	}
	if spares := spareFiles(t, dir); len(spares) != 0 {
		t.Errorf("spare files left after Close: %v", spares)
	}

	l = openLog(t, opts)
	if diff := cmp.Diff(want, readAll(t, l, Position{})); diff != "" {
		t.Errorf("records after reopening (-want +got):\n%s", diff)
	}
	if strings.Contains(logs.String(), "cutting") || strings.Contains(logs.String(), "level=WARN") {
		t.Errorf("a clean close and reopen logged:\n%s", logs.String())
	}
}

func TestPreallocatedSegmentAfterCrash(t *testing.T) {
	tests := []struct {
		name    string
		torn    []byte // written over the zeros after the records
		wantLog string
	}{
		{name: "zeros after the records", wantLog: "level=INFO msg=\"wal: cutting the unused zeros off the last segment\""},
		{name: "a torn record in the zeros", torn: appendRecord(nil, []byte("unacknowledged"))[:10],
			wantLog: "level=WARN msg=\"wal: cutting torn tail off the log\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			const segBytes = 1 << 20
			dir := t.TempDir()
			l := openLog(t, Options{Dir: dir, SegmentBytes: segBytes, Preallocate: true})
			want := appendAll(t, l, payloads(0, 20, 100))

			// a crash: the files as they are now, the active segment's zeros
			// still after its records
			crash := t.TempDir()
			for _, num := range segmentNums(t, dir) {
				data, err := os.ReadFile(segmentPath(dir, num))
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(segmentPath(crash, num), data, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			last := segmentPath(crash, 1)
			if got := fileSize(t, last); got != segBytes {
				t.Fatalf("the active segment holds %d bytes, want %d (whole)", got, segBytes)
			}
			if tt.torn != nil {
				f, err := os.OpenFile(last, os.O_WRONLY, 0)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := f.WriteAt(tt.torn, recordsEnd(want, 1)); err != nil {
					t.Fatal(err)
				}
				f.Close()
			}

			var logs bytes.Buffer
			l2 := openLog(t, Options{Dir: crash, SegmentBytes: segBytes, Preallocate: true,
				Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			if diff := cmp.Diff(want, readAll(t, l2, Position{})); diff != "" {
				t.Fatalf("records after the crash (-want +got):\n%s", diff)
			}
			if got, end := fileSize(t, last), recordsEnd(want, 1); got != end {
				t.Errorf("the crashed segment holds %d bytes after Open, want its records' %d", got, end)
			}
			if !strings.Contains(logs.String(), tt.wantLog) {
				t.Errorf("Open logged %q, want %s", logs.String(), tt.wantLog)
			}
			if tt.torn == nil && strings.Contains(logs.String(), "level=WARN") {
				t.Errorf("zeros after the records are no torn tail, but Open warned: %s", logs.String())
			}
			more := appendAll(t, l2, payloads(100, 3, 100))
			if diff := cmp.Diff(append(want, more...), readAll(t, l2, Position{})); diff != "" {
				t.Errorf("records after new appends (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPreallocateLeftovers(t *testing.T) {
	t.Run("a crash's spare file is removed at Open", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.WriteFile(sparePath(dir, 7), make([]byte, 4096), 0o600); err != nil {
			t.Fatal(err)
		}
		l := openLog(t, Options{Dir: dir})
		if spares := spareFiles(t, dir); len(spares) != 0 {
			t.Errorf("spare files after Open: %v", spares)
		}
		if nums := segmentNums(t, dir); len(nums) != 1 || nums[0] != 1 {
			t.Errorf("segments %v, want [1]: a spare is no segment", nums)
		}
		l.Close()
	})
	t.Run("NoSync does not preallocate", func(t *testing.T) {
		dir := t.TempDir()
		l := openLog(t, Options{Dir: dir, SegmentBytes: 1 << 20, Preallocate: true, NoSync: true})
		if got := fileSize(t, segmentPath(dir, 1)); got != 0 {
			t.Errorf("the first segment holds %d bytes, want 0", got)
		}
		if spares := spareFiles(t, dir); len(spares) != 0 {
			t.Errorf("spare files: %v", spares)
		}
		l.Close()
	})
}

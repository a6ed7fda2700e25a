package wal

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"
)

func TestConcurrentAppends(t *testing.T) {
	tests := []struct {
		name         string
		goroutines   int
		perGoroutine int
		segmentBytes int64
		maxBatch     int
	}{
		{name: "one segment", goroutines: 64, perGoroutine: 100},
		{name: "rotating", goroutines: 64, perGoroutine: 100, segmentBytes: 16 << 10},
		{name: "small batches", goroutines: 32, perGoroutine: 100, maxBatch: 8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := openLog(t, Options{Dir: t.TempDir(), SegmentBytes: tt.segmentBytes, MaxBatch: tt.maxBatch})
			ends := make([][]Position, tt.goroutines)
			var wg sync.WaitGroup
			for g := range tt.goroutines {
				wg.Go(func() {
					for i := range tt.perGoroutine {
						end, err := l.Append(context.Background(), []byte(fmt.Sprintf("g%03d-%05d", g, i)))
						if err != nil {
							t.Errorf("Append: %v", err)
							return
						}
						ends[g] = append(ends[g], end)
					}
				})
			}
			wg.Wait()

			total := tt.goroutines * tt.perGoroutine
			got := readAll(t, l, Position{})
			if len(got) != total {
				t.Fatalf("read %d records, want %d", len(got), total)
			}
			seen := make(map[string]Position, total)
			for i, rec := range got {
				if _, dup := seen[rec.Payload]; dup {
					t.Errorf("record %q read twice", rec.Payload)
				}
				seen[rec.Payload] = rec.End
				if i > 0 && !got[i-1].End.Less(rec.End) {
					t.Errorf("record %d ends at %v, not after %v", i, rec.End, got[i-1].End)
				}
			}
			for g := range tt.goroutines {
				for i, end := range ends[g] {
					p := fmt.Sprintf("g%03d-%05d", g, i)
					if seen[p] != end {
						t.Errorf("%s: Append returned %v, read back at %v", p, end, seen[p])
					}
					if i > 0 && !ends[g][i-1].Less(end) {
						t.Errorf("%s: ends at %v, not after the goroutine's previous %v", p, end, ends[g][i-1])
					}
				}
			}

			st := l.Stats()
			if st.Records != uint64(total) {
				t.Errorf("Stats().Records = %d, want %d", st.Records, total)
			}
			// Group commit: with 32+ goroutines waiting on each fsync, commits
			// carry several records each.
			if st.Syncs*4 > st.Records {
				t.Errorf("%d fsyncs for %d appends: group commit is not batching", st.Syncs, st.Records)
			}
			t.Logf("%d appends, %d fsyncs (%.1f appends/fsync)", st.Records, st.Syncs, float64(st.Records)/float64(st.Syncs))
		})
	}
}

// With SyncEvery, appends arriving while the writer waits share one
// commit. 64 appends, one every millisecond, after a first commit: without
// the wait each would find the writer idle and commit alone (about 64
// commits); with it they gather into the one commit due 200 ms after the
// first.
func TestSyncEveryGroupsCommits(t *testing.T) {
	for _, every := range []time.Duration{0, 200 * time.Millisecond} {
		l, err := Open(Options{Dir: t.TempDir(), SyncEvery: every})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.Append(context.Background(), []byte("first")); err != nil {
			t.Fatal(err)
		}
		before := l.syncs.Load()
		var wg sync.WaitGroup
		for i := range 64 {
			wg.Go(func() {
				time.Sleep(time.Duration(i) * time.Millisecond)
				if _, err := l.Append(context.Background(), []byte(fmt.Sprint("record ", i))); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		n := l.syncs.Load() - before
		l.Close()
		t.Logf("SyncEvery %v: 64 appends in %d commits", every, n)
		if every > 0 && n > 2 {
			t.Errorf("SyncEvery %v: 64 appends within it took %d commits, want 1 or 2", every, n)
		}
		if every == 0 && n < 8 {
			t.Errorf("without SyncEvery, 64 appends a millisecond apart took only %d commits: the test cannot tell", n)
		}
	}
}

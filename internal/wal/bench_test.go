package wal

import (
	"context"
	"testing"
)

func BenchmarkAppendParallel(b *testing.B)       { benchmarkAppend(b, false) }
func BenchmarkAppendParallelNoSync(b *testing.B) { benchmarkAppend(b, true) }

// benchmarkAppend appends 300-byte payloads from 64 goroutines per CPU, as an
// ingest server with many requests in flight would.
func benchmarkAppend(b *testing.B, noSync bool) {
	l, err := Open(Options{Dir: b.TempDir(), NoSync: noSync})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	payload := []byte(payload(0, 300))
	ctx := context.Background()
	b.SetBytes(int64(len(payload)))
	b.SetParallelism(64)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := l.Append(ctx, payload); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	st := l.Stats()
	b.ReportMetric(float64(st.Records)/float64(max(st.Syncs, 1)), "appends/fsync")
}

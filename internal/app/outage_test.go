package app_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tally-analytics/tally/internal/chstore"
	"github.com/tally-analytics/tally/internal/testenv"
)

// With ClickHouse stopped, ingestion keeps answering 201; once it is back,
// every event arrives, exactly once.
func TestClickHouseOutage(t *testing.T) {
	server := testenv.StartClickHouse(t)
	cfg := testenv.Config(t)
	cfg.ClickHouseAddr = server.Addr
	cfg.ClickHouseTimeout = 5 * time.Second
	opts := testenv.ClickHouseOptions(t, cfg.ClickHouseDatabase)
	opts.Addr = server.Addr
	st, err := chstore.Open(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	st.Close()
	h := newHarnessWith(t, cfg)
	h.clock.Set(time.Now().UTC())
	c := h.client(h.key)
	ctx := context.Background()

	var accepted atomic.Int64
	send := func(from, to int) {
		var wg sync.WaitGroup
		for w := range 8 {
			wg.Go(func() {
				for i := from + w; i < to; i += 8 {
					req := pageview(h, fmt.Sprintf("https://example.com/outage/%d", i))
					req.VisitorID = fmt.Sprint("v", i%37)
					if _, err := c.Pageview(ctx, req); err != nil {
						t.Errorf("event %d: %v", i, err)
						continue
					}
					accepted.Add(1)
				}
			})
		}
		wg.Wait()
	}
	send(0, 200)
	h.waitCount(200, "SELECT count() FROM events")
	// a flush inserts events, then sessions: stop only once all of it is in
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if st := h.app.Buffer.Stats(); st.Flushed == st.Written {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("the first 200 events never finished flushing: %+v", st)
		}
	}

	server.Stop()
	start := time.Now()
	send(200, 700)
	t.Logf("500 events accepted in %v with ClickHouse down", time.Since(start))
	time.Sleep(500 * time.Millisecond) // let the flusher fail a few times
	if st := h.app.Buffer.Stats(); st.FlushFailures == 0 || st.Written-st.Flushed != 500 {
		t.Errorf("while down: %+v; want failures and 500 events waiting", st)
	}

	server.Start()
	h.waitCount(700, "SELECT count() FROM events")
	if n := h.count("SELECT uniqExact(event_id) FROM events"); n != 700 || accepted.Load() != 700 {
		t.Errorf("%d distinct events stored, %d accepted; want 700 and 700", n, accepted.Load())
	}
	h.waitCount(700, "SELECT toUInt64(sum(sign * pageviews)) FROM sessions")
}

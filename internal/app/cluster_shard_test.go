package app_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/tally-analytics/tally/pkg/client"
)

// A whole shard stopped (both replicas of shard 2): ingestion keeps
// answering 201 while the write-ahead log holds the batches the flusher
// cannot insert; a report answers 503 service_unavailable with a
// Retry-After rather than the numbers of one shard's visitors (no partial
// answers); and once the shard is back the flusher's retries store every
// acknowledged pageview exactly once, on both replicas of its shard.
func TestClusterShardDown(t *testing.T) {
	nodes := onCluster(t)
	h := newHarness(t)
	db := h.cfg.ClickHouseDatabase
	ctx := context.Background()
	clusterTraffic(t, h, 0, 28)
	h.waitCount(28, "SELECT count() FROM events")
	checkOverview(t, h, 28, "all nodes up")

	node(t, "stop", "s2r1")
	node(t, "stop", "s2r2")
	failures := h.app.Buffer.Stats().FlushFailures
	// visitors v0…v6 live on both shards (TestClusterShardsByVisitorAndDeletes):
	// every batch of these has rows for the stopped shard
	clusterTraffic(t, h, 28, 56) // each one acknowledged, or the test stops
	waitFor(t, "the flusher to fail on the stopped shard", func() bool {
		st := h.app.Buffer.Stats()
		return st.FlushFailures > failures && st.Flushed < st.Written
	})
	_, err := h.client(h.key).Overview(ctx, statsParams(h))
	var e *client.Error
	if !errors.As(err, &e) || e.Status != http.StatusServiceUnavailable || e.Code != "service_unavailable" || e.RetryAfter <= 0 {
		t.Errorf("overview with shard 2 down: %v; want 503 service_unavailable with a Retry-After", err)
	}

	node(t, "start", "s2r1")
	node(t, "start", "s2r2")
	waitFor(t, "the flusher to store the held batches", func() bool {
		st := h.app.Buffer.Stats()
		return st.Flushed >= st.Written && countOr(h, "SELECT count() FROM events") == 56
	})
	for _, table := range []string{"events", "sessions"} {
		if err := h.ch.SyncReplicas(ctx, table); err != nil {
			t.Fatal(err)
		}
	}
	got := localCounts(t, nodes, db, "events", "count()")
	if got["s1r1"] != got["s1r2"] || got["s2r1"] != got["s2r2"] || got["s1r1"]+got["s2r1"] != 56 || got["s2r1"] == 0 {
		t.Errorf("events per node %v: want the replicas equal, both shards used, 56 in all", got)
	}
	if n, distinct := h.count("SELECT count() FROM events"), h.count("SELECT uniqExact(event_id) FROM events"); n != 56 || distinct != 56 {
		t.Errorf("%d events, %d distinct: want the 56 acknowledged, each once", n, distinct)
	}
	if n := h.count("SELECT toUInt64(sum(sign)) FROM sessions"); n != 7 {
		t.Errorf("%d sessions, want 7", n)
	}
	checkOverview(t, h, 56, "shard 2 back")
}

// waitFor polls cond until it holds, for at most two minutes (a shard's
// servers restarting and the flusher's backoff, up to 5 s, included).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// countOr runs a count query, -1 when it fails (a shard still starting).
func countOr(h *harness, query string) int64 {
	var n uint64
	if err := h.ch.QueryRow(context.Background(), query).Scan(&n); err != nil {
		return -1
	}
	return int64(n)
}

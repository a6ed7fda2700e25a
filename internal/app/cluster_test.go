package app_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/tally-analytics/tally/internal/chstore"
	"github.com/tally-analytics/tally/internal/ingest"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/testenv"
	"github.com/tally-analytics/tally/pkg/api"
)

// The tests of this file need the local ClickHouse cluster (`go tool task
// test:cluster`: 2 shards × 2 replicas, nodes s1r1, s1r2, s2r1, s2r2 in the
// order of TALLY_CLICKHOUSE_ADDR); elsewhere they skip.

var clusterNodes = []string{"s1r1", "s1r2", "s2r1", "s2r2"}

// onCluster skips the test unless it runs on the local cluster, and
// returns the nodes' addresses by name.
func onCluster(t *testing.T) map[string]string {
	t.Helper()
	if os.Getenv("TALLY_CLICKHOUSE_CLUSTER") == "" || os.Getenv("TALLY_TEST_STACK") == "" {
		t.Skip("not on the local ClickHouse cluster; run `go tool task test:cluster`")
	}
	addrs := strings.Split(os.Getenv("TALLY_CLICKHOUSE_ADDR"), ",")
	if len(addrs) != len(clusterNodes) {
		t.Fatalf("TALLY_CLICKHOUSE_ADDR lists %d nodes, want %d", len(addrs), len(clusterNodes))
	}
	nodes := map[string]string{}
	for i, n := range clusterNodes {
		nodes[n] = addrs[i]
	}
	return nodes
}

// node stops or starts one ClickHouse server of the cluster; a node the
// test stopped is started again when it ends.
func node(t *testing.T, action, name string) {
	t.Helper()
	out, err := exec.Command(os.Getenv("TALLY_TEST_STACK"), "node", action, name).CombinedOutput()
	if err != nil {
		t.Fatalf("stack.sh node %s %s: %v\n%s", action, name, err, out)
	}
	if action == "stop" {
		t.Cleanup(func() { _ = exec.Command(os.Getenv("TALLY_TEST_STACK"), "node", "start", name).Run() })
	}
}

// localCounts computes agg (a count) over table's local table on each node.
func localCounts(t *testing.T, nodes map[string]string, db, table, agg string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for name, addr := range nodes {
		s, err := chstore.New(chstore.Options{Addr: addr, Database: db, User: "default", Timeout: 30 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		var n uint64
		err = s.QueryRow(context.Background(), "SELECT toUInt64("+agg+") FROM "+table+"_local").Scan(&n)
		s.Close()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out[name] = int64(n)
	}
	return out
}

// clusterTraffic sends pageviews [from, to): pageview i at 09:00 + i
// minutes of 2026-05-04, by visitor i % 7, to page /p/i; every one must be
// acknowledged.
func clusterTraffic(t *testing.T, h *harness, from, to int) {
	t.Helper()
	c := h.client(h.key)
	t0 := time.Date(2026, 5, 4, 9, 0, 0, 0, time.UTC)
	visitors := clusterVisitors(h.siteID)
	for i := from; i < to; i++ {
		h.clock.Set(t0.Add(time.Duration(i) * time.Minute))
		_, err := c.Pageview(context.Background(), api.PageviewRequest{SiteID: string(h.siteID),
			URL: fmt.Sprintf("https://example.com/p/%d", i), VisitorID: visitors[i%7],
			UserAgent: "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36"})
		if err != nil {
			t.Fatalf("pageview %d: %v", i, err)
		}
	}
}

// clusterVisitors are the client ids of clusterTraffic's 7 visitors: "v0"
// to "v6", unless all seven would live on one shard, then the last is the
// first "w<n>" on the other. A row's shard is its visitor id modulo 2 (the
// Distributed tables' sharding key over two shards of equal weight), and a
// visitor id hashes the site's id, which each test draws anew: 1 run in 64
// would otherwise leave a shard without visitors.
func clusterVisitors(site model.SiteID) []string {
	var ids []string
	for v := range 7 {
		ids = append(ids, fmt.Sprint("v", v))
	}
	shard := func(id string) uint64 { return ingest.FromClientID(site, id) % 2 }
	for _, id := range ids[1:] {
		if shard(id) != shard(ids[0]) {
			return ids
		}
	}
	for n := 0; ; n++ {
		if id := fmt.Sprint("w", n); shard(id) != shard(ids[0]) {
			ids[6] = id
			return ids
		}
	}
}

// clusterMetrics are the overview's figures for the first n pageviews of
// clusterTraffic, worked out by hand: 7 visitors of one session each (a
// pageview every 7 minutes), none a bounce once n >= 14, each session
// lasting 7 minutes per pageview after its first.
func clusterMetrics(n int) api.Metrics {
	var duration int
	for v := range 7 {
		pageviews := (n - v + 6) / 7
		duration += (pageviews - 1) * 7 * 60
	}
	// the 7 sessions hold the n pageviews: n / 7 a visit, two decimals
	return api.Metrics{Visitors: 7, Visits: 7, Pageviews: int64(n), ViewsPerVisit: math.Round(float64(n)/7*100) / 100,
		BounceRate: 0, VisitDuration: float64(duration) / 7}
}

func checkOverview(t *testing.T, h *harness, n int, when string) {
	t.Helper()
	got, err := h.client(h.key).Overview(context.Background(), statsParams(h))
	if err != nil {
		t.Fatalf("%s: overview: %v", when, err)
	}
	want := clusterMetrics(n)
	want.VisitDuration = float64(int(want.VisitDuration*10+0.5)) / 10
	if got.Data.Metrics != want {
		t.Errorf("%s: overview %+v, want %+v", when, got.Data.Metrics, want)
	}
}

// The cluster's tables: Replicated local tables on every node, Distributed
// tables over them, the same versions recorded on every node.
func TestClusterLayout(t *testing.T) {
	nodes := onCluster(t)
	s, opts := testenv.ClickHouse(t)
	ctx := context.Background()
	var engine string
	if err := s.QueryRow(ctx, "SELECT engine FROM system.tables WHERE database = ? AND name = 'events'", opts.Database).Scan(&engine); err != nil ||
		engine != "Distributed" {
		t.Errorf("events: engine %q, %v; want Distributed", engine, err)
	}
	for name, addr := range nodes {
		n, err := chstore.New(chstore.Options{Addr: addr, Database: opts.Database, User: "default", Timeout: 30 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		var local, versions string
		err = n.QueryRow(ctx, "SELECT arrayStringConcat(groupArray(concat(name, ':', engine)), ' ') FROM "+
			"(SELECT name, engine FROM system.tables WHERE database = ? AND name IN ('events_local', 'sessions_local', 'payments_local') ORDER BY name)",
			opts.Database).Scan(&local)
		if err == nil {
			err = n.QueryRow(ctx, "SELECT arrayStringConcat(arrayMap(v -> toString(v), groupArray(version)), ',') FROM "+
				"(SELECT version FROM schema_migrations ORDER BY version)").Scan(&versions)
		}
		n.Close()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if want := "events_local:ReplicatedMergeTree payments_local:ReplicatedReplacingMergeTree sessions_local:ReplicatedVersionedCollapsingMergeTree"; local != want {
			t.Errorf("%s: local tables %q, want %q", name, local, want)
		}
		if !strings.HasPrefix(versions, "1,2,3,4,5,6,7") {
			t.Errorf("%s: versions %q, want all of them", name, versions)
		}
	}
}

// A visitor's events and sessions live on one shard; deleting a site
// removes its rows from every node.
func TestClusterShardsByVisitorAndDeletes(t *testing.T) {
	nodes := onCluster(t)
	h := newHarness(t)
	clusterTraffic(t, h, 0, 70)
	h.waitCount(70, "SELECT count() FROM events")
	checkOverview(t, h, 70, "all nodes up")
	h.waitCount(7, "SELECT toUInt64(sum(sign)) FROM sessions")
	for _, table := range []string{"events", "sessions"} {
		if err := h.ch.SyncReplicas(context.Background(), table); err != nil {
			t.Fatal(err)
		}
		// each shard's distinct visitors add up to all 7: no visitor on both
		visitors := localCounts(t, nodes, h.cfg.ClickHouseDatabase, table, "uniqExact(visitor_id)")
		if visitors["s1r1"]+visitors["s2r1"] != 7 || visitors["s1r1"] != visitors["s1r2"] || visitors["s2r1"] != visitors["s2r2"] {
			t.Errorf("%s: visitors per node %v, want each of the 7 on one shard", table, visitors)
		}
	}
	got := localCounts(t, nodes, h.cfg.ClickHouseDatabase, "events", "count()")
	if got["s1r1"] != got["s1r2"] || got["s2r1"] != got["s2r2"] || got["s1r1"]+got["s2r1"] != 70 || got["s1r1"] == 0 || got["s2r1"] == 0 {
		t.Errorf("events per node %v: want both shards used, replicas equal, 70 in all", got)
	}
	if err := h.ch.DeleteSite(context.Background(), h.siteID); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		got := localCounts(t, nodes, h.cfg.ClickHouseDatabase, "events", "count()")
		if got["s1r1"]+got["s1r2"]+got["s2r1"]+got["s2r2"] == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("events per node after deleting the site: %v", got)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// One replica of each shard stopped: ingestion keeps answering 201, reports
// give the numbers worked out by hand, and the replica catches up when it
// returns — first the second replicas, then the first ones (among them the
// node tally talks to first).
func TestClusterReplicasDown(t *testing.T) {
	nodes := onCluster(t)
	h := newHarness(t)
	db := h.cfg.ClickHouseDatabase
	clusterTraffic(t, h, 0, 40)
	h.waitCount(40, "SELECT count() FROM events")
	checkOverview(t, h, 40, "all nodes up")

	for _, down := range [][2]string{{"s1r2", "s2r2"}, {"s1r1", "s2r1"}} {
		n := h.count("SELECT count() FROM events")
		node(t, "stop", down[0])
		node(t, "stop", down[1])
		clusterTraffic(t, h, int(n), int(n)+40)
		h.waitCount(n+40, "SELECT count() FROM events")
		h.waitCount(7, "SELECT toUInt64(sum(sign)) FROM sessions")
		checkOverview(t, h, int(n)+40, fmt.Sprintf("%s and %s down", down[0], down[1]))
		node(t, "start", down[0])
		node(t, "start", down[1])
		for _, table := range []string{"events", "sessions"} {
			if err := h.ch.SyncReplicas(context.Background(), table); err != nil {
				t.Fatal(err)
			}
		}
		got := localCounts(t, nodes, db, "events", "count()")
		if got["s1r1"] != got["s1r2"] || got["s2r1"] != got["s2r2"] || got["s1r1"]+got["s2r1"] != n+40 {
			t.Errorf("after %v returned, events per node %v: want the replicas equal, %d in all", down, got, n+40)
		}
		checkOverview(t, h, int(n)+40, fmt.Sprintf("%s and %s back", down[0], down[1]))
	}
	if got, distinct := h.count("SELECT count() FROM events"), h.count("SELECT uniqExact(event_id) FROM events"); got != 120 || distinct != 120 {
		t.Errorf("%d events, %d distinct: want 120 acknowledged, each once", got, distinct)
	}
}

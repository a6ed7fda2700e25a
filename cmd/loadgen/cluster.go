package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// clusterResult is what the cluster phase measured: the ingest, batch and
// queries phases on the local cluster, and the queries phase on one node
// over as many events.
type clusterResult struct {
	events           int
	cluster, oneNode report
}

// clusterRuns starts the local cluster (scripts/stack.sh up cluster: 2
// shards × 2 replicas and ZooKeeper, on this machine) and runs the ingest,
// batch and queries phases on a server set up for it, with the bench's
// Postgres and Redis; then the queries phase on one node over as many
// events, to set beside them.
func clusterRuns(ctx context.Context, o options) (*clusterResult, error) {
	logf("cluster: starting the local ClickHouse cluster (scripts/stack.sh up cluster)")
	up := exec.CommandContext(ctx, "./scripts/stack.sh", "up", "cluster")
	up.Stdout, up.Stderr = os.Stderr, os.Stderr
	if err := up.Run(); err != nil {
		return nil, fmt.Errorf("scripts/stack.sh up cluster: %w", err)
	}
	benchEnv, err := readEnvFile(o.envFile)
	if err != nil {
		return nil, err
	}
	co := o
	co.envFile, co.workDir = o.clusterEnvFile, filepath.Join(o.workDir, "cluster")
	co.addr, co.pprofAddr = "127.0.0.1:18082", "127.0.0.1:18083"
	co.duration, co.batchDuration, co.queryEvents = o.clusterDuration, o.clusterDuration, o.clusterEvents
	co.profile, co.trace = false, false
	co.phases = map[string]bool{"ingest": true, "batch": true, "queries": true}
	if err := os.MkdirAll(co.workDir, 0o755); err != nil {
		return nil, err
	}
	logf("cluster: ingest, batch and queries on the cluster")
	cb, err := measure(ctx, co, map[string]string{
		// the cluster's own database, and the bench's account
		"TALLY_CLICKHOUSE_DATABASE": "tally_bench",
		"TALLY_POSTGRES_URL":        lookupEnv(benchEnv, "TALLY_POSTGRES_URL"),
		"TALLY_REDIS_URL":           lookupEnv(benchEnv, "TALLY_REDIS_URL"),
		"TALLY_ENV":                 lookupEnv(benchEnv, "TALLY_ENV"),
	})
	if err != nil {
		return nil, err
	}
	no := o
	no.queryEvents, no.profile, no.trace = o.clusterEvents, false, false
	no.phases = map[string]bool{"queries": true}
	logf("cluster: the queries on one node over %d events, beside them", o.clusterEvents)
	nb, err := measure(ctx, no, nil)
	if err != nil {
		return nil, err
	}
	return &clusterResult{events: o.clusterEvents, cluster: cb.report, oneNode: nb.report}, nil
}

// writeCluster sets the cluster's figures beside one node's.
func (b *bench) writeCluster(p func(format string, args ...any)) {
	c, r := b.report.cluster, b.report
	writeFailure(p, "On a ClickHouse cluster", "cluster", r.clusterErr)
	if c == nil {
		return
	}
	p("## On a ClickHouse cluster (2 shards × 2 replicas, all on this machine)")
	p("")
	p("The same phases with `TALLY_CLICKHOUSE_CLUSTER` set, against the local cluster of `scripts/stack.sh up cluster`:")
	p("four ClickHouse 18.16 servers and ZooKeeper on the same two cores as everything else. Every insert is written")
	p("to two shards and replicated to the two other servers, and every query runs on both shards and is merged, so")
	p("these figures show what the cluster mode costs on one box, not what a cluster of machines gains:")
	p("informative only. The cluster's ingest phases ran %s each (one node's: %s and %s).", b.o.clusterDuration,
		b.o.duration, b.o.batchDuration)
	p("")
	p("| phase | one node: events/s | cluster: events/s | one node: p99 | cluster: p99 | cluster: rows stored / acknowledged | cluster: tally CPU µs/event |")
	p("|---|---|---|---|---|---|---|")
	if one, cl := r.ingest, c.cluster.ingest; cl != nil {
		p("| single-event ingest | %s | %.0f | %s | %s | %d / %d | %.0f |", rateCell(one, func(ph *phase) float64 { return ph.load.okRate() }),
			cl.load.okRate(), p99Cell(one), ms(cl.load.percentile(99)), cl.stored, cl.load.OK, cl.cost.cpuPer(cl.events()))
	}
	if one, cl := r.batch, c.cluster.batch; cl != nil {
		p("| batch ingest, sustained into ClickHouse | %s | %.0f | %s | %s | %d / %d | %.0f |", rateCell(one, (*phase).sustained),
			cl.sustained(), p99Cell(one), ms(cl.load.percentile(99)), cl.stored, cl.accepted, cl.cost.cpuPer(cl.events()))
	}
	p("")
	if len(c.cluster.queries) == 0 {
		return
	}
	p("Stats endpoints over %d demo events over 30 days, %d calls each, one at a time:", c.events, b.o.queryRuns)
	p("")
	p("| endpoint | one node: 7 days p50 | cluster: 7 days p50 | one node: 30 days p50 | cluster: 30 days p50 |")
	p("|---|---|---|---|---|")
	for _, q7 := range c.cluster.queries {
		if q7.Range != "7d" {
			continue
		}
		p50 := func(q queryResult) string { return q.latency(q.P50) }
		p("| %s | %s | %s | %s | %s |", q7.Endpoint, p50(find(c.oneNode.queries, q7.Endpoint, "7d")), p50(q7),
			p50(find(c.oneNode.queries, q7.Endpoint, "30d")), p50(find(c.cluster.queries, q7.Endpoint, "30d")))
	}
	p("")
}

func rateCell(ph *phase, rate func(*phase) float64) string {
	if ph == nil {
		return "–"
	}
	return fmt.Sprintf("%.0f", rate(ph))
}

func p99Cell(ph *phase) string {
	if ph == nil {
		return "–"
	}
	return ms(ph.load.percentile(99))
}

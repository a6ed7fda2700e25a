// Command faults is tally's fault soak. It runs "tally serve" under mixed
// load (single pageviews and custom events through the Events API, the
// tracker's /e, batches of 1,000) on loopback, and breaks it again and
// again: kill -9 timed at the steps of a flush, SIGTERM under load, kill -9
// during a ClickHouse outage, ClickHouse, Redis and Postgres outages, a
// small write-ahead-log budget. After each run it stops tally cleanly and
// counts, event by event, what was acknowledged, refused, stored, missing
// and duplicated, and whether every session still adds up. The report is a
// Markdown file; the exit status is 1 when any run broke the promise.
//
//	go tool task faults                 (starts the test stack, builds, runs this)
//	go tool task faults:cluster         (the same on the local ClickHouse cluster: --cluster)
//	go run ./cmd/faults --help
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

type options struct {
	tally, out, workDir string
	runs, killRuns      int
	only                map[string]bool
	load                time.Duration
	// cluster runs tally on the local ClickHouse cluster of .data/env.cluster
	cluster bool
}

func parseFlags() options {
	var o options
	var only string
	fs := flag.CommandLine
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), `faults breaks a running tally on purpose and counts what became of every event.

It needs the local test stack (scripts/stack.sh up test, whose environment
.data/env.test names the servers: TALLY_TEST_POSTGRES_ADMIN_URL,
TALLY_CLICKHOUSE_ADDR, TALLY_REDIS_URL) and a built tally binary; "go tool task
faults" does both and then runs it. With --cluster it runs on the local
ClickHouse cluster instead (scripts/stack.sh up cluster, .data/env.cluster,
which adds TALLY_CLICKHOUSE_CLUSTER and lists the four nodes; "go tool task
faults:cluster"). Each scenario gets fresh databases and reaches ClickHouse
(each node of a cluster), Postgres and Redis through loopback proxies that can
take them away; a ClickHouse outage takes every node away. Everything stays on
127.0.0.1, and every run is bounded in time.

Scenarios (--only, comma-separated; all by default):
%s
Flags:
`, scenarioList())
		fs.PrintDefaults()
	}
	fs.StringVar(&o.tally, "tally", ".data/bin/tally", "the tally binary")
	fs.StringVar(&o.out, "out", "", "where the report goes (default bench/results/<date>-faults.md, -faults-cluster.md with --cluster)")
	fs.StringVar(&o.workDir, "work", ".data/faults", "where the runs keep their write-ahead logs and tally's logs")
	fs.IntVar(&o.runs, "runs", 5, "runs of each scenario")
	fs.IntVar(&o.killRuns, "kill-runs", 20, "runs of the kill-at-flush scenario")
	fs.DurationVar(&o.load, "load", 1500*time.Millisecond, "how long each phase of load lasts")
	fs.StringVar(&only, "only", "", "run only these scenarios")
	fs.BoolVar(&o.cluster, "cluster", false, "run on the local ClickHouse cluster (the environment of .data/env.cluster)")
	flag.Parse()
	if o.out == "" {
		o.out = "bench/results/" + time.Now().Format("2006-01-02") + "-faults.md"
		if o.cluster {
			o.out = strings.TrimSuffix(o.out, ".md") + "-cluster.md"
		}
	}
	if only != "" {
		o.only = map[string]bool{}
		for _, n := range strings.Split(only, ",") {
			o.only[strings.TrimSpace(n)] = true
		}
	}
	return o
}

func main() {
	o := parseFlags()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := soakAll(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "faults:", err)
		os.Exit(1)
	}
}

func soakAll(ctx context.Context, o options) error {
	stack, err := stackFromEnv(o.cluster)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(o.workDir, 0o755); err != nil {
		return err
	}
	rep := &report{started: time.Now(), opts: o}
	for _, sc := range scenarios(o) {
		if o.only != nil && !o.only[sc.name] {
			continue
		}
		res, err := runScenario(ctx, o, stack, sc)
		if err != nil {
			return fmt.Errorf("%s: %w", sc.name, err)
		}
		rep.results = append(rep.results, res)
	}
	rep.finished = time.Now()
	if err := os.MkdirAll(filepath.Dir(o.out), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(o.out, []byte(rep.markdown()), 0o644); err != nil {
		return err
	}
	fmt.Printf("\n%s\nfaults: report written to %s\n", rep.summary(), o.out)
	if !rep.ok() {
		return fmt.Errorf("the promise broke in some runs: see %s", o.out)
	}
	return nil
}

// stack is where the test stack's servers are: chAddr lists a cluster's
// nodes, comma-separated, when cluster names it.
type stack struct {
	pgAdmin, chAddr, redisURL string
	cluster                   string
}

func stackFromEnv(cluster bool) (stack, error) {
	s := stack{pgAdmin: os.Getenv("TALLY_TEST_POSTGRES_ADMIN_URL"), chAddr: os.Getenv("TALLY_CLICKHOUSE_ADDR"),
		redisURL: os.Getenv("TALLY_REDIS_URL"), cluster: os.Getenv("TALLY_CLICKHOUSE_CLUSTER")}
	if s.pgAdmin == "" || s.chAddr == "" || s.redisURL == "" {
		return s, fmt.Errorf("TALLY_TEST_POSTGRES_ADMIN_URL, TALLY_CLICKHOUSE_ADDR and TALLY_REDIS_URL must be set " +
			"(source .data/env.test after scripts/stack.sh up test, or run go tool task faults)")
	}
	switch {
	case cluster && s.cluster == "":
		return s, fmt.Errorf("--cluster needs TALLY_CLICKHOUSE_CLUSTER " +
			"(source .data/env.cluster after scripts/stack.sh up cluster, or run go tool task faults:cluster)")
	case !cluster && s.cluster != "":
		return s, fmt.Errorf("the environment names the ClickHouse cluster %q: pass --cluster", s.cluster)
	}
	return s, nil
}

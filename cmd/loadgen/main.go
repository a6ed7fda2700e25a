// Command loadgen is tally's benchmark: it starts a tally server on the
// local stack's bench databases and measures, in one run on one machine so
// that the ratios are fair, the request-handling ceiling (GET /health), single
// and batch event ingestion (with an exact count of the rows that reached
// ClickHouse), the raw ClickHouse insert rate of the same rows, the server's
// CPU and memory during ingestion, its CPU time and Redis commands per event,
// and the latency of every stats endpoint over millions of events. It writes
// a Markdown report.
//
//	go tool task bench            (starts the stack, builds, runs this)
//	go run ./cmd/loadgen --help
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/tally-analytics/tally/internal/chstore"
	"github.com/tally-analytics/tally/internal/stats"
	"github.com/tally-analytics/tally/pkg/api"
	"github.com/tally-analytics/tally/pkg/client"
)

type options struct {
	tally, envFile, addr, pprofAddr, workDir, outDir string
	phases                                           map[string]bool
	conns, batchConns, batchSize                     int
	duration, batchDuration                          time.Duration
	queryEvents, queryRuns, rawLimit                 int
	exportEvents                                     int
	profile, trace                                   bool
	clusterEnvFile                                   string
	clusterDuration                                  time.Duration
	clusterEvents                                    int
	// fresh: measure starts from an empty database (the noviews phase's);
	// dropViews: it then drops the rollups' views once it is migrated
	fresh, dropViews bool
}

var allPhases = []string{"baseline", "ingest", "batch", "raw", "queries", "dashboard", "export", "noviews", "cluster"}

func parseFlags() options {
	var o options
	var phases string
	fs := flag.CommandLine
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), `loadgen benchmarks tally on this machine and writes a Markdown report.

It needs the local stack's bench profile (scripts/stack.sh up bench) and a
built tally binary; "go tool task bench" does both and then runs it. It starts
its own "tally serve" on --addr with the bench databases, a fresh WAL and limits
high enough not to interfere, and stops it (SIGTERM) at the end.

Phases (--phases, in this order):
  baseline  GET /health, --conns keep-alive connections, --duration: the ceiling
  ingest    POST /api/v1/events/pageview, varied realistic bodies, same settings;
            then the rows in ClickHouse are counted against the 201s
  batch     POST /api/v1/events/batch, --batch-size events a request,
            --batch-conns connections, --batch-duration; rows counted as well
  raw       the batch phase's rows inserted again straight into ClickHouse
            (tally's own clickhouse-go batch code, 10,000 rows a batch)
  queries   --query-events demo events over 30 days (loaded once with
            "tally demo", kept for later runs), then every stats endpoint
            --query-runs times for the last 7 and 30 days
  dashboard the same site's dashboard, logged in as the bench account: the
            page and each card --query-runs times, one at a time, then all
            cards as the page's script loads them (three at a time), then
            the nine statistics cards alone (all but funnels and health)
  export    --export-events demo events over 30 days (loaded once, kept), then
            GET /api/v1/export/events of all of them as NDJSON, gzipped NDJSON
            and gzipped CSV, each read to its end and checked record by record
            against the stored count, with the server's RSS sampled meanwhile
  noviews   what the rollups' materialised views cost tally's ingest, in the
            same run: the ingest and batch phases (those of --phases) four
            times more, each on a server of its own over a fresh scratch
            ClickHouse database, with the views, without them, without,
            with (the order cancels a drift of the machine's speed)
  cluster   the ingest, batch and queries phases again on the local ClickHouse
            cluster (scripts/stack.sh up cluster, started by this phase: 2
            shards x 2 replicas on this machine), --cluster-duration each and
            --cluster-events for the queries, next to the queries on one node
            over as many events; informative only, one machine

Flags:
`)
		fs.PrintDefaults()
	}
	fs.StringVar(&o.tally, "tally", ".data/bin/tally", "the tally binary")
	fs.StringVar(&o.envFile, "env", ".data/env.bench", "environment file of the stack's bench profile")
	fs.StringVar(&o.addr, "addr", "127.0.0.1:18080", "listen address of the tally server under test")
	fs.StringVar(&o.pprofAddr, "pprof-addr", "127.0.0.1:18081", "the server's profiling address (with --profile)")
	fs.StringVar(&o.workDir, "work", ".data/bench", "working directory (WAL, server log, profiles)")
	fs.StringVar(&o.outDir, "out", "bench/results", "where the report goes (<date>.md)")
	fs.StringVar(&phases, "phases", strings.Join(allPhases, ","), "comma-separated phases to run")
	fs.IntVar(&o.conns, "conns", 64, "connections of the baseline and ingest phases")
	fs.DurationVar(&o.duration, "duration", 60*time.Second, "duration of the baseline and ingest phases")
	fs.IntVar(&o.batchConns, "batch-conns", 4, "connections of the batch phase")
	fs.IntVar(&o.batchSize, "batch-size", 1000, "events per batch request")
	fs.DurationVar(&o.batchDuration, "batch-duration", 30*time.Second, "duration of the batch phase")
	fs.IntVar(&o.rawLimit, "raw-rows", 1_000_000, "at most this many rows in the raw insert phase")
	fs.IntVar(&o.queryEvents, "query-events", 10_000_000, "events of the queries phase's site")
	fs.IntVar(&o.queryRuns, "query-runs", 20, "calls of each stats endpoint per range")
	fs.IntVar(&o.exportEvents, "export-events", 1_000_000, "events of the export phase's site")
	fs.BoolVar(&o.profile, "profile", false, "take a 20 s CPU profile of the server in the ingest and batch phases")
	fs.BoolVar(&o.trace, "trace", false, "take a 3 s execution trace of the server in the ingest and batch phases, and report "+
		"where its goroutines waited: blocked, in system calls, runnable")
	fs.StringVar(&o.clusterEnvFile, "cluster-env", ".data/env.cluster", "environment file of the stack's cluster profile")
	fs.DurationVar(&o.clusterDuration, "cluster-duration", 20*time.Second, "duration of the cluster's ingest and batch phases")
	fs.IntVar(&o.clusterEvents, "cluster-events", 1_000_000, "events of the queries site on the cluster (and on one node beside it)")
	flag.Parse()
	o.phases = map[string]bool{}
	for _, p := range strings.Split(phases, ",") {
		if p = strings.TrimSpace(p); !slices.Contains(allPhases, p) {
			fmt.Fprintf(os.Stderr, "loadgen: unknown phase %q (phases: %s)\n", p, strings.Join(allPhases, ", "))
			os.Exit(2)
		}
		o.phases[p] = true
	}
	return o
}

func main() {
	o := parseFlags()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(1)
	}
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s  "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}

// bench is one benchmark run.
type bench struct {
	o      options
	srv    *server
	chOpts chstore.Options
	ch     *chstore.Store
	redis  *redisCounter // nil when the bench's Redis could not be reached
	key    string
	report report
}

func run(ctx context.Context, o options) error {
	b, err := measure(ctx, o, nil)
	if err != nil {
		return err
	}
	if o.phases["noviews"] {
		// the other phases' figures stand without it
		if b.report.views, err = viewsRounds(ctx, o); err != nil {
			logf("noviews: %v", err)
			b.report.viewsErr = err
		}
	}
	if o.phases["cluster"] {
		// the other phases' figures stand without it
		if b.report.cluster, err = clusterRuns(ctx, o); err != nil {
			logf("cluster: %v", err)
			b.report.clusterErr = err
		}
	}
	return b.write()
}

// measure runs o's phases (but the cluster's) on a server of its own, with
// the environment of o.envFile and set, and returns their report.
func measure(ctx context.Context, o options, set map[string]string) (*bench, error) {
	env, err := readEnvFile(o.envFile)
	if err != nil {
		return nil, fmt.Errorf("%w (run: scripts/stack.sh up bench)", err)
	}
	wal := filepath.Join(o.workDir, "wal")
	if err := os.RemoveAll(wal); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(wal, 0o755); err != nil {
		return nil, err
	}
	env = withEnv(env, map[string]string{
		"TALLY_HTTP_ADDR": o.addr, "TALLY_WAL_DIR": wal, "TALLY_LOG_LEVEL": "warn",
		"TALLY_ENTERPRISE_EVENTS_PER_HOUR": "2000000000", "TALLY_STATS_PER_HOUR": "1000000", "TALLY_EXPORTS_PER_HOUR": "1000",
		"TALLY_PPROF_ADDR": o.pprofAddr,
	})
	env = withEnv(env, set)
	b := &bench{o: o, srv: &server{Bin: o.tally, Env: env, URL: "http://" + o.addr}}
	b.chOpts = chstore.Options{Addr: lookupEnv(env, "TALLY_CLICKHOUSE_ADDR"), Database: lookupEnv(env, "TALLY_CLICKHOUSE_DATABASE"),
		Cluster: lookupEnv(env, "TALLY_CLICKHOUSE_CLUSTER"), User: "default", Timeout: 5 * time.Minute}
	b.report.machine = append(describeMachine(), dataDisk(filepath.Join(filepath.Dir(o.envFile), "clickhouse")))
	b.report.started = time.Now()
	for _, name := range []string{"TALLY_SAMPLE_ABOVE_EVENTS", "TALLY_FUNNEL_SAMPLE_ABOVE_EVENTS", "TALLY_FLUSH_ROWS", "TALLY_FLUSH_INTERVAL", "GOMEMLIMIT"} {
		if v := os.Getenv(name); v != "" {
			b.report.settings = append(b.report.settings, name+"="+v)
		}
	}

	if o.fresh {
		if err := chstore.DropDatabase(ctx, b.chOpts, b.chOpts.Database); err != nil {
			return nil, err
		}
	}
	logf("migrating the bench databases")
	if err := b.srv.CLI(ctx, nil, "migrate"); err != nil {
		return nil, err
	}
	if b.ch, err = chstore.Open(ctx, b.chOpts); err != nil {
		return nil, err
	}
	defer b.ch.Close()
	if o.dropViews {
		if err := b.ch.DropRollupViews(ctx); err != nil {
			return nil, err
		}
	}
	var chVersion string
	if err := b.ch.QueryRow(ctx, "SELECT version()").Scan(&chVersion); err == nil {
		b.report.machine = append(b.report.machine, "ClickHouse "+chVersion)
	}
	if b.redis, err = newRedisCounter(ctx, lookupEnv(env, "TALLY_REDIS_URL")); err != nil {
		logf("%v: the report will have no Redis command counts", err)
	} else {
		defer b.redis.Close()
	}
	ingestSite, err := b.setup(ctx)
	if err != nil {
		return nil, err
	}
	logf("starting tally serve on %s (log: %s)", o.addr, filepath.Join(o.workDir, "server.log"))
	if err := b.srv.Start(ctx, filepath.Join(o.workDir, "server.log")); err != nil {
		return nil, err
	}
	stopped := false
	defer func() {
		if !stopped {
			b.srv.Stop()
		}
	}()

	if o.phases["baseline"] {
		b.baseline(ctx)
	}
	if o.phases["ingest"] {
		if err := b.ingest(ctx, ingestSite); err != nil {
			return nil, err
		}
	}
	batchSite := ""
	if o.phases["batch"] {
		if batchSite, err = b.batch(ctx); err != nil {
			return nil, err
		}
	}
	if o.phases["raw"] && batchSite != "" {
		logf("raw: inserting the batch phase's rows straight into ClickHouse")
		raw, err := rawInsert(ctx, b.chOpts, batchSite, o.rawLimit)
		if err != nil {
			return nil, err
		}
		b.report.raw = &raw
	}
	// The demo sites are found or loaded only now: right after loading them,
	// ClickHouse took twice the CPU an ingested event (24.4 µs against 10.8
	// in a run that reused them), which the ingest phases must not pay.
	querySite, exportSite := "", ""
	if o.phases["queries"] || o.phases["dashboard"] {
		if querySite, err = b.querySite(ctx); err != nil {
			return nil, err
		}
	}
	if o.phases["export"] {
		if exportSite, err = b.exportSite(ctx); err != nil {
			return nil, err
		}
	}
	if o.phases["queries"] {
		if err := b.queries(ctx, querySite); err != nil {
			return nil, err
		}
	}
	if o.phases["dashboard"] {
		res, err := dashboardLatencies(ctx, b.srv.URL, querySite, o.queryRuns, func(what string) { logf("dashboard: %s", what) })
		if err != nil {
			return nil, err
		}
		b.report.dashboard = res
	}
	if o.phases["export"] {
		if err := b.exports(ctx, exportSite); err != nil {
			return nil, err
		}
	}
	if err := b.srv.Stop(); err != nil {
		return nil, fmt.Errorf("stopping tally: %w", err)
	}
	stopped = true
	return b, nil
}

// benchEmail is the bench account, kept between runs with its queries site.
const (
	benchEmail    = "bench@bench.local"
	benchPassword = "bench-password"
)

// setup makes sure the bench account exists (enterprise plan, no practical
// limit), and creates this run's ingest site and key.
func (b *bench) setup(ctx context.Context) (ingestSite string, err error) {
	err = b.srv.CLI(ctx, nil, "user", "create", "--email", benchEmail, "--password", benchPassword,
		"--name", "Bench", "--plan", "enterprise", "--events-per-hour", "2000000000")
	if err != nil && !strings.Contains(err.Error(), "exists") {
		return "", err
	}
	if ingestSite, err = b.newSite(ctx, "ingest.bench.example.com"); err != nil {
		return "", err
	}
	var key struct {
		Key string `json:"key"`
	}
	if err := b.srv.CLI(ctx, &key, "key", "create", "--owner", benchEmail, "--name", "bench "+time.Now().Format(time.RFC3339)); err != nil {
		return "", err
	}
	b.key = key.Key
	return ingestSite, nil
}

func (b *bench) newSite(ctx context.Context, domain string) (string, error) {
	var site struct {
		SiteID string `json:"site_id"`
	}
	err := b.srv.CLI(ctx, &site, "site", "create", "--owner", benchEmail, "--domain", domain)
	return site.SiteID, err
}

// querySite is the site holding --query-events demo events: the one of an
// earlier run when it holds as many, else a new one loaded with "tally demo".
func (b *bench) querySite(ctx context.Context) (string, error) {
	stateFile := filepath.Join(b.o.workDir, fmt.Sprintf("query-site-%d.json", b.o.queryEvents))
	var st struct {
		SiteID string `json:"site_id"`
	}
	if data, err := os.ReadFile(stateFile); err == nil && json.Unmarshal(data, &st) == nil && st.SiteID != "" {
		var n uint64
		if err := b.ch.QueryRow(ctx, "SELECT count() FROM events WHERE site_id = ?", st.SiteID).Scan(&n); err == nil &&
			int(n) >= b.o.queryEvents {
			logf("queries: reusing site %s with %d events", st.SiteID, n)
			return st.SiteID, nil
		}
	}
	site, err := b.newSite(ctx, "query.bench.example.com")
	if err != nil {
		return "", err
	}
	logf("queries: loading %d demo events over 30 days into site %s", b.o.queryEvents, site)
	cmd := exec.CommandContext(ctx, b.srv.Bin, "demo", "--events", strconv.Itoa(b.o.queryEvents), "--site", site, "--days", "30")
	cmd.Env, cmd.Stdout, cmd.Stderr = b.srv.Env, os.Stderr, os.Stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("tally demo: %w", err)
	}
	b.report.demoLoad = fmt.Sprintf("%d events loaded in %s (%.0f events/s)", b.o.queryEvents,
		time.Since(start).Round(time.Second), float64(b.o.queryEvents)/time.Since(start).Seconds())
	data, _ := json.Marshal(map[string]string{"site_id": site})
	return site, os.WriteFile(stateFile, data, 0o644)
}

func (b *bench) baseline(ctx context.Context) {
	settled := b.settle(ctx, "baseline")
	logf("baseline: GET /health, %d connections, %s", b.o.conns, b.o.duration)
	w := b.openWindow(ctx)
	m := startMonitor(b.srv.PID())
	res := load{method: http.MethodGet, url: b.srv.URL + "/health", conns: b.o.conns, duration: b.o.duration,
		wantStatus: http.StatusOK}.run(ctx)
	b.report.baseline = &phase{load: res, usage: m.stop(), cost: w.close(ctx), settled: settled}
	logf("baseline: %.0f requests/s, p50 %s, p99 %s", res.okRate(), res.percentile(50), res.percentile(99))
}

func (b *bench) ingest(ctx context.Context, site string) error {
	warm, err := b.newSite(ctx, "warmup.bench.example.com")
	if err != nil {
		return err
	}
	t := newTraffic(warm, 1)
	logf("ingest: warming the server's user-agent cache (one event per distinct user agent, not measured)")
	load{method: http.MethodPost, url: b.srv.URL + "/api/v1/events/pageview", header: b.header(), bodies: t.warmupBodies(),
		once: true, conns: b.o.conns, duration: time.Minute, wantStatus: http.StatusCreated}.run(ctx)
	logf("ingest: preparing 200,000 varied pageview bodies")
	t.site = site
	bodies := t.pageviewBodies(200_000)
	// the warm-up's flush belongs to no phase
	if err := b.waitFlushed(ctx); err != nil {
		logf("ingest: %v", err)
	}
	settled := b.settle(ctx, "ingest")
	logf("ingest: POST /api/v1/events/pageview, %d connections, %s", b.o.conns, b.o.duration)
	w := b.openWindow(ctx)
	m := startMonitor(b.srv.PID())
	prof, trace := b.startCapture(ctx, "ingest", cpuProfile), b.startCapture(ctx, "ingest", execTrace)
	res := load{method: http.MethodPost, url: b.srv.URL + "/api/v1/events/pageview", header: b.header(),
		bodies: bodies, conns: b.o.conns, duration: b.o.duration, wantStatus: http.StatusCreated}.run(ctx)
	p := &phase{load: res, usage: m.stop(), settled: settled}
	logf("ingest: %.0f events/s, p50 %s, p99 %s, %d errors; counting rows", res.okRate(), res.percentile(50),
		res.percentile(99), res.Errors)
	p.stored, p.drain = b.waitRows(ctx, site, res.OK)
	p.cost = b.closeWindow(ctx, "ingest", w, res.OK)
	p.profile, p.trace = prof.wait(), trace.wait()
	b.report.ingest = p
	return nil
}

func (b *bench) batch(ctx context.Context) (string, error) {
	// a site of its own, so that the raw phase re-inserts exactly its rows
	site, err := b.newSite(ctx, "batch.bench.example.com")
	if err != nil {
		return "", err
	}
	logf("batch: preparing 300 varied batches of %d events", b.o.batchSize)
	bodies := newTraffic(site, 2).batchBodies(300, b.o.batchSize)
	var accepted, rejected atomic.Int64
	onBody := func(body []byte) {
		var r api.BatchResponse
		if json.Unmarshal(body, &r) == nil {
			accepted.Add(int64(r.Accepted))
			rejected.Add(int64(r.Rejected))
		}
	}
	settled := b.settle(ctx, "batch")
	logf("batch: POST /api/v1/events/batch, %d connections, %s", b.o.batchConns, b.o.batchDuration)
	w := b.openWindow(ctx)
	m := startMonitor(b.srv.PID())
	prof, trace := b.startCapture(ctx, "batch", cpuProfile), b.startCapture(ctx, "batch", execTrace)
	res := load{method: http.MethodPost, url: b.srv.URL + "/api/v1/events/batch", header: b.header(), bodies: bodies,
		conns: b.o.batchConns, duration: b.o.batchDuration, wantStatus: http.StatusOK, onBody: onBody}.run(ctx)
	p := &phase{load: res, usage: m.stop(), accepted: accepted.Load(), rejected: rejected.Load(), settled: settled}
	logf("batch: %.0f events/s acknowledged, p50 %s, p99 %s per request; counting rows",
		float64(p.accepted)/res.Elapsed.Seconds(), res.percentile(50), res.percentile(99))
	p.stored, p.drain = b.waitRows(ctx, site, p.accepted)
	p.cost = b.closeWindow(ctx, "batch", w, p.accepted)
	p.profile, p.trace = prof.wait(), trace.wait()
	b.report.batch = p
	return site, nil
}

// settle waits for ClickHouse's merges (and the writes they left) before a
// phase's load (the demo events loaded just before, or the previous phase's
// parts, would otherwise take the cores from it) and logs the wait.
func (b *bench) settle(ctx context.Context, name string) time.Duration {
	d := settle(ctx, b.ch)
	if d > 0 {
		logf("%s: waited %s for ClickHouse's merges and the dirty pages", name, d)
	}
	return d
}

// closeWindow ends an ingest phase's window once the server has committed
// every event, so that the flusher's work for them counts, and logs the
// cost per event.
func (b *bench) closeWindow(ctx context.Context, name string, w *window, events int64) cost {
	if err := b.waitFlushed(ctx); err != nil {
		logf("%s: %v", name, err)
	}
	c := w.close(ctx)
	// ClickHouse's merges of the phase's parts go on after it: their CPU
	// counts too (the next phase would wait for them anyway)
	before := cpuOf(w.groups["clickhouse"])
	b.settle(ctx, name+" (after its load)")
	c.merges = cpuOf(w.groups["clickhouse"]) - before
	logf("%s: tally CPU %.0f µs/event", name, c.cpuPer(events))
	if c.commands != nil {
		logf("%s: %d Redis commands, %.1f per 1,000 events: %s", name, c.totalCommands(), c.per1k(events), c.topCommands(6))
	}
	return c
}

func (b *bench) header() http.Header {
	return http.Header{"Authorization": {"Bearer " + b.key}, "Content-Type": {"application/json"}}
}

// waitRows waits until ClickHouse holds want rows (events plus bot events)
// for site, or they stop growing for 30 s, and returns the count and how
// long the drain took after the load ended. It counts by the tables' key
// (site_key) four times a second: counted by site_id twenty times a second,
// the count compared millions of strings each time, about a tenth of
// ClickHouse's CPU during the drain it measures.
func (b *bench) waitRows(ctx context.Context, site string, want int64) (int64, time.Duration) {
	start := time.Now()
	var last int64 = -1
	lastChange := time.Now()
	for {
		var events, bots uint64
		err := b.ch.QueryRow(ctx, "SELECT (SELECT count() FROM events WHERE site_key = cityHash64(?)),"+
			" (SELECT count() FROM bot_events WHERE site_key = cityHash64(?))", site, site).Scan(&events, &bots)
		n := int64(events + bots)
		if err == nil && n >= want {
			return n, time.Since(start)
		}
		if n != last {
			last, lastChange = n, time.Now()
		}
		if time.Since(lastChange) > 30*time.Second || ctx.Err() != nil {
			return n, time.Since(start)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func (b *bench) queries(ctx context.Context, site string) error {
	if err := b.compactRollups(ctx); err != nil {
		return err
	}
	c := client.New(b.srv.URL, b.key)
	for _, days := range []int{7, 30} {
		res := queryLatencies(ctx, c, site, days, b.o.queryRuns, func(what string) { logf("queries: %s", what) })
		b.report.queries = append(b.report.queries, res...)
	}
	return nil
}

// compactRollups merges each rollup's parts into one a partition (OPTIMIZE
// FINAL) before the reports are timed. Live traffic writes a day's rows
// during that day, so merges leave a closed day in one part: a rollup row a
// day and value. "tally demo" writes the 30 days in the order of its
// visitors, every insert holding rows of every day, which leaves a day's
// rows spread over every part of the month until ClickHouse's merges catch
// up (on 100M events, ~4 rows a day and event name in event_days), and
// reports merge each visitor state that many times.
func (b *bench) compactRollups(ctx context.Context) error {
	start := time.Now()
	for _, table := range stats.RollupTables() {
		if err := b.ch.OptimizeFinal(ctx, table); err != nil {
			return err
		}
	}
	b.report.compacted = time.Since(start)
	logf("queries: rollups compacted in %s", b.report.compacted.Round(time.Millisecond))
	return nil
}

// capture is a profile or trace being taken of the server.
type capture struct{ done chan string }

func (c *capture) wait() string {
	if c == nil {
		return ""
	}
	return <-c.done
}

// captureKind is what startCapture takes of the server, and how it reads it.
type captureKind struct {
	on        func(options) bool
	file, url string // the file's suffix; the server's /debug/pprof path and query
	summarize func(bin, path string) (string, error)
}

// cpuProfile is a 20 s CPU profile (--profile), read as the top functions,
// cumulative.
var cpuProfile = captureKind{on: func(o options) bool { return o.profile }, file: ".cpu.pprof",
	url: "/debug/pprof/profile?seconds=20", summarize: func(bin, path string) (string, error) {
		out, err := exec.Command("go", "tool", "pprof", "-top", "-cum", "-nodecount=40", bin, path).Output()
		return string(out), err
	}}

// execTrace is a 3 s execution trace (--trace), read as where the
// goroutines waited: blocked on channels and locks, in system calls, and
// runnable with no core free.
var execTrace = captureKind{on: func(o options) bool { return o.trace }, file: ".trace",
	url: "/debug/pprof/trace?seconds=3", summarize: func(_, path string) (string, error) {
		var b strings.Builder
		for _, kind := range []struct{ name, title string }{{"sync", "blocked (channels, locks, selects)"},
			{"syscall", "in system calls"}, {"sched", "runnable, waiting for a core (by the stack that woke them)"}} {
			prof := path + "." + kind.name + ".pprof"
			out, err := exec.Command("go", "tool", "trace", "-pprof="+kind.name, path).Output()
			if err == nil {
				err = os.WriteFile(prof, out, 0o644)
			}
			if err != nil {
				return "", err
			}
			top, err := exec.Command("go", "tool", "pprof", "-top", "-nodecount=12", prof).Output()
			if err != nil {
				return "", err
			}
			fmt.Fprintf(&b, "# %s\n%s\n", kind.title, strings.TrimSpace(string(top)))
		}
		return b.String(), nil
	}}

// startCapture takes k of the server 10 s into a phase, when its flag is
// on, and returns its summary as text.
func (b *bench) startCapture(ctx context.Context, name string, k captureKind) *capture {
	if !k.on(b.o) {
		return nil
	}
	c := &capture{done: make(chan string, 1)}
	go func() {
		select {
		case <-ctx.Done():
			c.done <- ""
			return
		case <-time.After(10 * time.Second):
		}
		path := filepath.Join(b.o.workDir, name+k.file)
		resp, err := http.Get("http://" + b.o.pprofAddr + k.url)
		if err != nil {
			c.done <- "capture failed: " + err.Error()
			return
		}
		defer resp.Body.Close()
		f, err := os.Create(path)
		if err == nil {
			_, err = io.Copy(f, resp.Body)
			f.Close()
		}
		if err != nil {
			c.done <- "capture failed: " + err.Error()
			return
		}
		out, err := k.summarize(b.o.tally, path)
		if err != nil {
			c.done <- "reading it failed: " + err.Error()
			return
		}
		c.done <- out
	}()
	return c
}

// readEnvFile reads the stack's env file (lines `export NAME='value'`).
func readEnvFile(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	env := os.Environ()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "export ")
		if !ok {
			continue
		}
		name, value, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		env = withEnv(env, map[string]string{name: unquoteShell(value)})
	}
	return env, sc.Err()
}

// unquoteShell undoes the shell single quoting of the env file's values.
func unquoteShell(s string) string {
	var b strings.Builder
	quoted := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\'':
			quoted = !quoted
		case c == '\\' && !quoted && i+1 < len(s):
			i++
			b.WriteByte(s[i])
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func withEnv(env []string, set map[string]string) []string {
	out := env[:0:0]
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if _, ok := set[name]; !ok {
			out = append(out, kv)
		}
	}
	for k, v := range set {
		out = append(out, k+"="+v)
	}
	return out
}

func lookupEnv(env []string, name string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			return v
		}
	}
	return ""
}

// describeMachine lists the facts that make figures comparable.
func describeMachine() []string {
	out := []string{fmt.Sprintf("%d CPUs (%s), Go %s, %s/%s", runtime.NumCPU(), cpuModel(), runtime.Version(), runtime.GOOS, runtime.GOARCH)}
	if data, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "MemTotal:" {
				kb, _ := strconv.ParseFloat(f[1], 64)
				out = append(out, fmt.Sprintf("%.1f GiB memory", kb/(1<<20)))
			}
		}
	}
	if data, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		out = append(out, "Linux "+strings.TrimSpace(string(data)))
	}
	return out
}

// dataDisk names the file system of dir, ClickHouse's data directory of the
// local stack, and whether it keeps a journal: on ext4 without one, every
// file ClickHouse creates costs more as files are deleted (scripts/stack.sh
// mounts an image with a journal there).
func dataDisk(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "ClickHouse's data: unknown file system"
	}
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return "ClickHouse's data: unknown file system"
	}
	var point, fstype, source string
	for _, line := range strings.Split(string(data), "\n") {
		// id parent dev root mountpoint options [optional...] - fstype source superoptions
		fields := strings.Fields(line)
		sep := slices.Index(fields, "-")
		if len(fields) < 5 || sep < 0 || sep+2 >= len(fields) {
			continue
		}
		mp := fields[4]
		under := abs == mp || mp == "/" || strings.HasPrefix(abs, mp+"/")
		if under && len(mp) >= len(point) {
			point, fstype, source = mp, fields[sep+1], fields[sep+2]
		}
	}
	desc := fmt.Sprintf("ClickHouse's data on %s (%s at %s)", fstype, source, point)
	if fstype == "ext4" {
		task, err := os.ReadFile("/sys/fs/ext4/" + filepath.Base(source) + "/journal_task")
		switch {
		case err != nil:
		case strings.TrimSpace(string(task)) == "<none>":
			desc += " without a journal"
		default:
			desc += " with a journal"
		}
	}
	return desc
}

func cpuModel() string {
	data, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	for _, line := range strings.Split(string(data), "\n") {
		if name, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(name) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}

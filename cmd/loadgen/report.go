package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// phase is what one load phase measured.
type phase struct {
	load  loadResult
	usage usage
	// profile and trace summarise the server's CPU profile and execution
	// trace (--profile, --trace)
	profile, trace string
	// stored is the number of rows (events + bot events) ClickHouse held
	// for the phase's site once drained; drain is how long that took after
	// the load ended.
	stored int64
	drain  time.Duration
	// accepted and rejected count the events of batch answers.
	accepted, rejected int64
	// cost is what the server spent from the first request until it had
	// committed every event (for the baseline: until the load ended).
	cost cost
	// settled is how long the phase waited for ClickHouse's merges to
	// finish before its load began.
	settled time.Duration
}

// events is the number the phase's costs are divided by: accepted events,
// or for the baseline answered requests.
func (ph *phase) events() int64 {
	if ph.accepted > 0 {
		return ph.accepted
	}
	return ph.load.OK
}

type report struct {
	started                 time.Time
	machine                 []string
	settings                []string // server settings the run changed from their defaults
	baseline, ingest, batch *phase
	raw                     *rawResult
	demoLoad                string
	compacted               time.Duration // the rollups' OPTIMIZE FINAL before the queries
	queries                 []queryResult
	dashboard               []dashboardResult
	exports                 []exportResult
	cluster                 *clusterResult
	clusterErr              error // why the cluster phase has no figures
	// views holds the noviews phase's runs, with the rollups' views and
	// without them (viewsRounds)
	views    []viewsRun
	viewsErr error // why the noviews phase has no figures
}

// settledWaits lists how long each load phase waited for ClickHouse's
// merges ("baseline 42s, single-event 0s, batch 1.5s"); empty without a
// load phase.
func (r *report) settledWaits() string {
	var parts []string
	for _, ph := range []struct {
		name string
		p    *phase
	}{{"baseline", r.baseline}, {"single-event", r.ingest}, {"batch", r.batch}} {
		if ph.p != nil {
			parts = append(parts, ph.name+" "+ph.p.settled.String())
		}
	}
	return strings.Join(parts, ", ")
}

// Targets of the benchmark: ingest ≥ 0.7 × baseline, p99 ≤ 25 ms, zero
// loss; batch ≥ 0.75 × raw insert; stats p50 ≤ 150 ms at 10M events over 30
// days; server RSS ≤ 300 MB. The throughput ratios are the long-term targets;
// the near-term ones (0.4 and 0.5) come with a Redis budget per event.
const (
	targetIngestRatio     = 0.7
	targetIngestRatioNear = 0.4
	targetIngestP99       = 25 * time.Millisecond
	targetBatchRatio      = 0.75
	targetBatchRatioNear  = 0.5
	targetRedisPer1k      = 20
	targetStatsP50        = 150 * time.Millisecond // up to 10M events
	targetStatsP50Large   = 300 * time.Millisecond // beyond (100M)
	targetRSS             = 300 << 20
	targetDashboard       = 300 * time.Millisecond
	targetDashboardCards  = 600 * time.Millisecond // the cards together, as the page loads them
)

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }

func check(ok bool) string {
	if ok {
		return "met"
	}
	return "**missed**"
}

func (b *bench) write() error {
	r, o := b.report, b.o
	var w strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&w, format+"\n", args...) }
	p("# tally benchmark, %s", r.started.Format("2006-01-02 15:04 MST"))
	p("")
	p("Machine: %s. ClickHouse, PostgreSQL, Redis, tally and the load generator all run on it.", strings.Join(r.machine, ", "))
	p("")
	p("Command: `go tool task bench` (`go run ./cmd/loadgen %s`).", strings.Join(os.Args[1:], " "))
	p("")
	if len(r.settings) > 0 {
		p("Server settings changed for this run: `%s`.", strings.Join(r.settings, "`, `"))
		p("")
	}

	p("## Targets")
	p("")
	p("| target | measured | |")
	p("|---|---|---|")
	if r.baseline != nil && r.ingest != nil {
		ratio := r.ingest.load.okRate() / r.baseline.load.okRate()
		for _, t := range []struct {
			term   string
			target float64
		}{{"near-term", targetIngestRatioNear}, {"long-term", targetIngestRatio}} {
			p("| single-event ingest ≥ %.2f × baseline (%s) | %.2f (%.0f / %.0f requests/s) | %s |", t.target, t.term, ratio,
				r.ingest.load.okRate(), r.baseline.load.okRate(), check(ratio >= t.target))
		}
	}
	if r.ingest != nil {
		p99 := r.ingest.load.percentile(99)
		p("| single-event ingest p99 ≤ %s | %s | %s |", ms(targetIngestP99), ms(p99), check(p99 <= targetIngestP99))
		p("| zero loss: rows in ClickHouse = 201s | %d rows, %d × 201 | %s |", r.ingest.stored, r.ingest.load.OK,
			check(r.ingest.stored == r.ingest.load.OK))
	}
	if r.batch != nil && r.raw != nil {
		ratio := r.batch.sustained() / r.raw.eventsRate()
		for _, t := range []struct {
			term   string
			target float64
		}{{"near-term", targetBatchRatioNear}, {"long-term", targetBatchRatio}} {
			p("| batch ingest ≥ %.2f × raw insert (%s) | %.2f (%.0f / %.0f events/s) | %s |", t.target, t.term, ratio,
				r.batch.sustained(), r.raw.eventsRate(), check(ratio >= t.target))
		}
	}
	b.viewsTargets(p)
	for _, ph := range []struct {
		name string
		p    *phase
	}{{"single", r.ingest}, {"batch", r.batch}} {
		if ph.p == nil || ph.p.cost.commands == nil {
			continue
		}
		per1k, shared := ph.p.cost.per1k(ph.p.events()), ""
		if len(ph.p.cost.others) > 0 {
			shared = ", with other databases' commands"
		}
		p("| ≤ %d Redis commands per 1,000 accepted events (%s) | %.1f (%d commands, %d events%s) | %s |", targetRedisPer1k,
			ph.name, per1k, ph.p.cost.totalCommands(), ph.p.events(), shared, check(per1k <= targetRedisPer1k))
	}
	if r.batch != nil {
		p("| zero loss (batch): rows in ClickHouse = accepted events | %d rows, %d accepted | %s |", r.batch.stored,
			r.batch.accepted, check(r.batch.stored == r.batch.accepted))
	}
	if peak := max(rss(r.ingest), rss(r.batch)); peak > 0 {
		p("| server RSS ≤ %d MB at peak ingest | %.0f MB | %s |", targetRSS>>20, float64(peak)/(1<<20), check(peak <= targetRSS))
	}
	if slow := slowest(r.queries, "30d"); slow.Endpoint != "" {
		target := targetStatsP50
		if o.queryEvents > 10_000_000 {
			target = targetStatsP50Large
		}
		p("| every stats endpoint p50 ≤ %s (%d events, 30 days) | slowest: %s %s | %s |", ms(target), o.queryEvents,
			slow.Endpoint, slow.latency(slow.P50), check(slow.P50 <= target && slow.Err == ""))
	}
	var slowDash dashboardResult
	for _, d := range r.dashboard {
		if d.Range == "30d" && d.Cards == 0 && d.P50 > slowDash.P50 {
			slowDash = d
		}
	}
	for _, d := range r.dashboard {
		if d.Range == "30d" && d.Cards > 0 {
			p("| the dashboard's cards together ≤ %s (%d events, 30 days, p50): %s | %s | %s |", ms(targetDashboardCards),
				o.queryEvents, d.What, ms(d.P50), check(d.P50 <= targetDashboardCards))
		}
	}
	if slowDash.What != "" {
		p("| no dashboard request over %s (%d events, 30 days, p50) | slowest: %s %s | %s |", ms(targetDashboard), o.queryEvents,
			slowDash.What, ms(slowDash.P50), check(slowDash.P50 <= targetDashboard))
	}
	if peak := exportPeak(r); peak > 0 {
		p("| server RSS ≤ %d MB while exporting %d events | %.0f MB | %s |", targetRSS>>20, r.exports[0].Stored, mb(peak),
			check(peak <= targetRSS))
		p("| every export's records = stored events, each once, in order | %d records, %d stored | %s |", r.exports[0].Records,
			r.exports[0].Stored, check(exportsExact(r)))
	}
	p("")

	if r.baseline != nil || r.ingest != nil || r.batch != nil {
		p("## Ingestion")
		p("")
		p("Closed loop: each connection sends its next request when the previous one is answered. CPU is the share of")
		p("one core used during the phase (200%% = both cores of a 2-core machine).")
		if waits := r.settledWaits(); waits != "" {
			p("Each phase's load began once ClickHouse ran no merge and was idle, and the kernel had written the dirty pages left (sync),")
			p("so that the merges and writes of what was loaded or inserted before it did not take the cores from it")
			p("(waited: %s).", waits)
		}
		p("")
		ingestTable(p, []ingestRow{
			{"baseline: GET /health", o.conns, r.baseline, false},
			{"single-event ingest: POST /api/v1/events/pageview", o.conns, r.ingest, true},
			{fmt.Sprintf("batch ingest: POST /api/v1/events/batch (%d events)", o.batchSize), o.batchConns, r.batch, true},
		})
		p("")
		if ph := r.ingest; ph != nil {
			p("Single-event ingest: %d answered 201 in %s; ClickHouse then held %d rows for the site (events + bot events),",
				ph.load.OK, ph.load.Elapsed.Round(time.Millisecond), ph.stored)
			p("all of them %s after the load ended. Statuses: %v.", ph.drain.Round(time.Millisecond), ph.load.Statuses)
			p("")
		}
		if ph := r.batch; ph != nil {
			p("Batch ingest: %d events accepted (%d refused) in %s; ClickHouse held %d rows %s after the load ended, so",
				ph.accepted, ph.rejected, ph.load.Elapsed.Round(time.Millisecond), ph.stored, ph.drain.Round(time.Millisecond))
			p("%.0f events/s acknowledged and %.0f events/s sustained into ClickHouse (acknowledged ÷ (load + drain)).",
				float64(ph.accepted)/ph.load.Elapsed.Seconds(), ph.sustained())
			p("")
		}
		b.writeCosts(p)
	}
	if raw := r.raw; raw != nil {
		p("## Raw ClickHouse insert (the batch phase's rows, %d a batch)", rawBatch)
		p("")
		p("Each timing starts once ClickHouse runs no merge and is idle, and the dirty pages are written (waited: %s).", joinDurations(raw.Settled))
		p("")
		p("| rows | took | rows/s |")
		p("|---|---|---|")
		p("| %d events | %s | %.0f |", raw.Events, raw.EventsTook.Round(time.Millisecond), raw.eventsRate())
		p("| %d events + the %d session rows left of them | %s | %.0f events/s |", raw.Events,
			raw.Sessions, raw.BothTook.Round(time.Millisecond), raw.bothRate())
		if raw.BothNoViewsTook > 0 {
			p("| the same without the rollups' views | %s | %.0f events/s |", raw.BothNoViewsTook.Round(time.Millisecond),
				raw.bothNoViewsRate())
			p("")
			p("With the rollups' views ClickHouse alone inserts at %.2f× the rate without them: what the views' own work",
				raw.bothRate()/raw.bothNoViewsRate())
			p("adds to each insert, informative. The target is tally's ingest rate with the views against without them (the")
			p("noviews rows of the Targets table), where the flusher's other work overlaps ClickHouse's. The rollups (and")
			p("the funnels' events_by_path) take %.1f MB per million events once merged (the events themselves: %.1f MB per million).",
				raw.rollupBytesPerMillion()/1e6, float64(raw.EventBytes)/float64(max(1, raw.Events)))
		}
		p("")
		if raw.EventsCPU > 0 {
			perEvent := per(raw.EventsCPU, int64(raw.Events))
			p("ClickHouse's CPU for the events alone (the first line), their views and the merges they left: %.1f µs an"+
				" event. At half the rate of that line, that is %.2f cores before tally, Redis, session rows or the load"+
				" generator take any.", perEvent, perEvent*targetBatchRatioNear*raw.eventsRate()/1e6)
			p("")
		}
		p("tally's flusher writes one or two session rows per event (a new state, and a cancel row for the previous")
		p("one); ClickHouse's collapsing merges have removed most pairs by the time the rows are read back, so the")
		p("second line inserts fewer session rows than the flusher did.")
		p("")
	}
	b.writeNoViews(p)
	if len(r.queries) > 0 {
		p("## Stats endpoints (%d demo events over 30 days, %d calls each, one at a time)", o.queryEvents, o.queryRuns)
		p("")
		if r.compacted > 0 {
			p("Before timing, the rollups were merged to one part a partition (OPTIMIZE FINAL, %s), where live traffic's merges"+
				" leave closed days: `tally demo` writes every day in every insert.", r.compacted.Round(time.Second))
			p("")
		}
		if r.demoLoad != "" {
			p("Loaded with `tally demo`: %s.", r.demoLoad)
			p("")
		}
		p("| endpoint | 7 days p50 | 7 days p95 | 30 days p50 | 30 days p95 | sampled |")
		p("|---|---|---|---|---|---|")
		for _, q7 := range r.queries {
			if q7.Range != "7d" {
				continue
			}
			q30 := find(r.queries, q7.Endpoint, "30d")
			p("| %s | %s | %s | %s | %s | %v |", q7.Endpoint, q7.latency(q7.P50), q7.latency(q7.P95), q30.latency(q30.P50),
				q30.latency(q30.P95), q30.Sampled)
		}
		p("")
		for _, q := range r.queries {
			if q.Err != "" {
				p("- %s, %s: %s", q.Endpoint, q.Range, q.Err)
			}
		}
	}
	if len(r.dashboard) > 0 {
		p("## Dashboard (the same site, logged in; %d requests each, one at a time, measured by the client over loopback)", o.queryRuns)
		p("")
		p("The page itself is one site lookup; each card is a fragment the page's script loads on its own.")
		p("")
		p("| request | 7 days p50 | 7 days p95 | 30 days p50 | 30 days p95 |")
		p("|---|---|---|---|---|")
		for _, d7 := range r.dashboard {
			if d7.Range != "7d" {
				continue
			}
			var d30 dashboardResult
			for _, d := range r.dashboard {
				if d.What == d7.What && d.Range == "30d" {
					d30 = d
				}
			}
			p("| %s | %s | %s | %s | %s |", d7.What, ms(d7.P50), ms(d7.P95), ms(d30.P50), ms(d30.P95))
		}
		p("")
	}
	b.writeExports(p)
	b.writeCluster(p)
	for _, ph := range []struct {
		name string
		p    *phase
	}{{"single-event ingest", r.ingest}, {"batch ingest", r.batch}} {
		if ph.p == nil {
			continue
		}
		for _, c := range []struct{ title, text string }{
			{"CPU profile of the server: %s (20 s, cumulative)", ph.p.profile},
			{"Where the server's goroutines waited: %s (an execution trace of 3 s, summed over goroutines)", ph.p.trace},
		} {
			if c.text != "" {
				p("## "+c.title, ph.name)
				p("")
				p("```")
				p("%s", strings.TrimSpace(c.text))
				p("```")
				p("")
			}
		}
	}
	text := w.String()
	fmt.Print(text)
	if err := os.MkdirAll(o.outDir, 0o755); err != nil {
		return err
	}
	path := filepath.Join(o.outDir, r.started.Format("2006-01-02")+".md")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		return err
	}
	logf("report written to %s", path)
	return nil
}

// writeCosts explains the Redis and CPU columns and lists each phase's Redis
// commands.
func (b *bench) writeCosts(p func(format string, args ...any)) {
	r := b.report
	p("Redis commands and tally CPU µs are per accepted event (the baseline: per 1,000 requests and per request),")
	p("counted from a phase's first request until tally's write buffer had committed every event of it: the load, then")
	p("the drain until ClickHouse held every row and the flusher was done with their sessions (the baseline: its load).")
	p("CPU is tally's user + system time (/proc). Redis counts are the growth of `INFO commandstats` over that window,")
	p("less loadgen's own INFO and CLIENT LIST: all that tally sent, request path and flusher alike, and the commands its")
	p("Lua scripts ran, which Redis counts besides the script call itself (evalsha). Calls over each window:")
	p("")
	for _, ph := range []struct {
		name, unit string
		p          *phase
	}{{"baseline", "requests", r.baseline}, {"single-event ingest", "events", r.ingest}, {"batch ingest", "events", r.batch}} {
		if ph.p == nil {
			continue
		}
		c := ph.p.cost
		if c.commands == nil {
			p("- %s: Redis could not be read.", ph.name)
			continue
		}
		p("- %s (%s, %d %s): %d commands: %s.", ph.name, c.span.Round(time.Millisecond), ph.p.events(), ph.unit,
			c.totalCommands(), c.topCommands(10))
		if len(c.others) > 0 {
			p("  Redis also served clients of other databases meanwhile (%s): their commands are in this count.",
				strings.Join(c.others, ", "))
		}
	}
	p("")
	b.writeMachineCosts(p)
	var flush []string
	for _, ph := range []struct {
		name string
		p    *phase
	}{{"single-event ingest", r.ingest}, {"batch ingest", r.batch}} {
		if ph.p != nil && ph.p.cost.flush != "" {
			flush = append(flush, fmt.Sprintf("- %s: %s.", ph.name, ph.p.cost.flush))
		}
	}
	if len(flush) > 0 {
		p("Where the flusher's time went over the same windows (`tally_flush_step_duration_seconds`): one stage")
		p("resolves a batch's sessions in Redis and builds its rows while the other stores the batch before it")
		p("(inserts, their lookups and retries included) and commits it, so a batch takes about the larger of the two.")
		p("")
		for _, line := range flush {
			p("%s", line)
		}
		p("")
	}
}

// writeMachineCosts writes where the machine's CPU went over each phase's
// window, per event, and what the two ingest targets would allow.
func (b *bench) writeMachineCosts(p func(format string, args ...any)) {
	r := b.report
	rows := []struct {
		name string
		p    *phase
	}{{"baseline (per request)", r.baseline}, {"single-event ingest", r.ingest}, {"batch ingest", r.batch}}
	measured := false
	for _, row := range rows {
		measured = measured || (row.p != nil && row.p.cost.capacity > 0)
	}
	if !measured {
		return
	}
	p("Where the machine's CPU went over the same windows, in µs per accepted event (the baseline: per request): each")
	p("process's user + system time, and the machine's busy time on all cores (`/proc/stat`: the kernel's work for the")
	p("network and the disks included, which no process is charged for). ClickHouse's merges of a phase's parts go on")
	p("after its window; the bench waits for them before it goes on, and \"merges after\" is ClickHouse's CPU meanwhile.")
	p("The bench runs alone: the machine's busy time is these processes' and the kernel's.")
	p("")
	p("| phase | tally | ClickHouse | merges after | Redis | PostgreSQL | loadgen | the machine, busy | busy share of its cores |")
	p("|---|---|---|---|---|---|---|---|---|")
	for _, row := range rows {
		if row.p == nil || row.p.cost.capacity == 0 {
			continue
		}
		c, n := row.p.cost, row.p.events()
		p("| %s | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.0f%% |", row.name, per(c.procs["tally"], n),
			per(c.procs["clickhouse"], n), per(c.merges, n), per(c.procs["redis"], n), per(c.procs["postgres"], n),
			per(c.procs["loadgen"], n), per(c.busy, n), 100*float64(c.busy)/float64(c.capacity))
	}
	p("")
	cores := float64(runtime.NumCPU())
	budget := func(what string, ph *phase, rate float64) {
		if ph == nil || ph.cost.capacity == 0 || rate <= 0 {
			return
		}
		n := ph.events()
		spent := per(ph.cost.busy+ph.cost.merges, n)
		p("- %s: at %.0f events/s the machine's %.0f cores give %.1f µs an event; this run's events took %.1f (the"+
			" machine's busy time and the merges after), ClickHouse and Redis alone %.1f.", what, rate, cores, cores*1e6/rate, spent,
			per(ph.cost.procs["clickhouse"]+ph.cost.merges+ph.cost.procs["redis"], n))
	}
	if r.baseline != nil && r.ingest != nil {
		budget(fmt.Sprintf("Single-event ingest at its near-term target (%.2f × `/health`)", targetIngestRatioNear),
			r.ingest, targetIngestRatioNear*r.baseline.load.okRate())
	}
	if r.batch != nil && r.raw != nil {
		budget(fmt.Sprintf("Batch ingest at its near-term target (%.2f × the raw insert, sustained)", targetBatchRatioNear),
			r.batch, targetBatchRatioNear*r.raw.eventsRate())
	}
	p("")
}

// sustained is the batch phase's rate into ClickHouse: accepted events over
// the load and the drain that followed.
func (ph *phase) sustained() float64 {
	return float64(ph.accepted) / (ph.load.Elapsed + ph.drain).Seconds()
}

// ingestRow is a row of an ingestion table: a phase (nil: no row), the
// connections it ran with, and whether it carried events (not the
// baseline's requests).
type ingestRow struct {
	name   string
	conns  int
	ph     *phase
	events bool
}

// ingestTable writes the ingestion table of rows: rate, latency, and what
// each process spent.
func ingestTable(p func(format string, args ...any), rows []ingestRow) {
	p("| phase | connections | requests/s | events/s | p50 | p99 | errors | Redis cmds / 1k events | tally CPU µs/event | tally CPU | ClickHouse CPU | Redis CPU | PostgreSQL CPU | loadgen CPU | tally peak RSS |")
	p("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, row := range rows {
		ph := row.ph
		if ph == nil {
			continue
		}
		u, n := ph.usage.CPU, ph.events()
		redisCell, events := "–", 0.0
		if ph.cost.commands != nil && n > 0 {
			redisCell = fmt.Sprintf("%.1f", ph.cost.per1k(n))
		}
		if row.events {
			events = ph.eventRate()
		}
		p("| %s | %d | %.0f | %s | %s | %s | %d | %s | %.0f | %.0f%% | %.0f%% | %.0f%% | %.0f%% | %.0f%% | %.0f MB |", row.name, row.conns,
			ph.load.okRate(), eventsCell(events), ms(ph.load.percentile(50)), ms(ph.load.percentile(99)), ph.load.Errors,
			redisCell, ph.cost.cpuPer(n), u["tally"], u["clickhouse"], u["redis"], u["postgres"], u["loadgen"],
			float64(ph.usage.PeakRSS)/(1<<20))
	}
}

// eventRate is the events acknowledged a second: a batch phase's accepted
// events, or the answered requests of a phase of single events.
func (ph *phase) eventRate() float64 {
	if ph.accepted > 0 {
		return float64(ph.accepted) / ph.load.Elapsed.Seconds()
	}
	return ph.load.okRate()
}

// writeFailure writes, when err is set, a section saying that phase failed
// and why: the other phases' figures stand without it.
func writeFailure(p func(format string, args ...any), heading, phase string, err error) {
	if err == nil {
		return
	}
	p("## %s", heading)
	p("")
	p("The %s phase failed: %v.", phase, err)
	p("")
}

func eventsCell(v float64) string {
	if v == 0 {
		return "–"
	}
	return fmt.Sprintf("%.0f", v)
}

func rss(ph *phase) int64 {
	if ph == nil {
		return 0
	}
	return ph.usage.PeakRSS
}

// slowest is the endpoint of rng with the highest p50; one that failed
// counts as slower than any that answered.
func slowest(qs []queryResult, rng string) queryResult {
	var out queryResult
	slower := func(a, b queryResult) bool {
		if (a.Err != "") != (b.Err != "") {
			return a.Err != ""
		}
		return a.P50 > b.P50
	}
	for _, q := range qs {
		if q.Range == rng && slower(q, out) {
			out = q
		}
	}
	return out
}

func find(qs []queryResult, endpoint, rng string) queryResult {
	for _, q := range qs {
		if q.Endpoint == endpoint && q.Range == rng {
			return q
		}
	}
	return queryResult{}
}

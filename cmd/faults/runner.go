package main

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tally-analytics/tally/internal/chstore"
	"github.com/tally-analytics/tally/internal/faultproxy"
	"github.com/tally-analytics/tally/internal/ingest/buffer"
	"github.com/tally-analytics/tally/internal/pgstore"
	"github.com/tally-analytics/tally/internal/soak"
	"github.com/tally-analytics/tally/internal/tallyproc"
	"github.com/tally-analytics/tally/pkg/client"
)

// scenario is one way of breaking tally, repeated runs times.
type scenario struct {
	name, what string
	runs       int
	env        []string // tally settings of its own
	run        func(r *run) error
}

// run is one run of a scenario: a site of its own, a tally process with a
// write-ahead log of its own, and the proxies of the scenario.
type run struct {
	o       options
	srv     *tallyproc.Server
	ch      proxyGroup
	pg      *faultproxy.Proxy
	redis   *faultproxy.Proxy
	sender  *soak.Sender
	walDir  string
	logPath string
	// exits records SIGTERM exits that were not status 0
	exits []string
	// killedAt says where the flusher stood at a timed kill
	killedAt string
	// drains counts the starts finish needed beyond the one it always makes
	drains int
}

func (r *run) start() error { return r.srv.Start(context.Background(), r.logPath) }

func (r *run) kill() error { return r.srv.Kill() }

// term stops tally with SIGTERM, noting an exit status other than 0.
func (r *run) term() error {
	if err := r.srv.Stop(); err != nil {
		r.exits = append(r.exits, err.Error())
	}
	return nil
}

// visitors is how many visitors send single events (batches come from
// another 100): each has a session that batch after batch continues.
const visitors = 500

// load sends mixed traffic for d.
func (r *run) load(d time.Duration) { r.sender.For(d, 6, visitors) }

// whileLoaded runs f after wait with traffic flowing, and stops the
// traffic once f returned.
func (r *run) whileLoaded(wait time.Duration, f func() error) error {
	ctx, cancel := context.WithCancel(context.Background())
	wg := r.sender.Run(ctx, 6, visitors)
	time.Sleep(wait)
	err := f()
	cancel()
	wg.Wait()
	return err
}

// again starts tally anew and sends traffic for d.
func (r *run) again(d time.Duration) error {
	if err := r.start(); err != nil {
		return err
	}
	r.load(d)
	return nil
}

// killAtFlush kills tally at a random point of a flush: after the k-th
// write of the flush protocol's files (a batch writes its plan, then a
// checkpoint before each insert and at its commit), k from 1 to 4, and a
// further random delay of up to 3 ms.
func (r *run) killAtFlush() error {
	files := []string{filepath.Join(r.walDir, "plan"), filepath.Join(r.walDir, "checkpoint")}
	mtimes := func() [2]time.Time {
		var m [2]time.Time
		for i, f := range files {
			if st, err := os.Stat(f); err == nil {
				m[i] = st.ModTime()
			}
		}
		return m
	}
	k, delay := 1+rand.IntN(4), time.Duration(rand.IntN(3000))*time.Microsecond
	last, writes := mtimes(), 0
	deadline := time.Now().Add(10 * time.Second)
	for writes < k {
		if time.Now().After(deadline) {
			return fmt.Errorf("no flush seen within 10 s")
		}
		time.Sleep(100 * time.Microsecond)
		if now := mtimes(); now != last {
			last, writes = now, writes+1
		}
	}
	time.Sleep(delay)
	if err := r.kill(); err != nil {
		return err
	}
	where, err := buffer.Where(r.walDir)
	if err != nil {
		return err
	}
	r.killedAt = where
	return nil
}

// runResult is what one run came to.
type runResult struct {
	counts   soak.Counts
	exits    []string
	killedAt string
	drains   int
	took     time.Duration
	err      error
}

func (rr runResult) ok() bool { return rr.err == nil && len(rr.exits) == 0 && rr.counts.OK() }

type scenarioResult struct {
	sc   scenario
	runs []runResult
}

// runScenario gives the scenario fresh databases and proxies, an account,
// and runs it.
func runScenario(ctx context.Context, o options, st stack, sc scenario) (scenarioResult, error) {
	res := scenarioResult{sc: sc}
	suffix := make([]byte, 4)
	crand.Read(suffix) //nolint:errcheck // never fails
	db := "faults_" + strings.ReplaceAll(sc.name, "-", "_") + "_" + hex.EncodeToString(suffix)
	if err := pgstore.CreateDatabase(ctx, st.pgAdmin, db); err != nil {
		return res, err
	}
	defer pgstore.DropDatabase(context.Background(), st.pgAdmin, db) //nolint:errcheck // best effort
	pgURL, err := url.Parse(st.pgAdmin)
	if err != nil {
		return res, err
	}
	pgURL.Path = "/" + db
	redisURL, err := url.Parse(st.redisURL)
	if err != nil {
		return res, err
	}
	proxies := map[string]*faultproxy.Proxy{}
	for name, target := range map[string]string{"pg": pgURL.Host, "redis": redisURL.Host} {
		p, err := faultproxy.Start(target)
		if err != nil {
			return res, err
		}
		defer p.Close()
		proxies[name] = p
	}
	var chProxies proxyGroup // a proxy for each node of a cluster
	for _, target := range strings.Split(st.chAddr, ",") {
		p, err := faultproxy.Start(strings.TrimSpace(target))
		if err != nil {
			return res, err
		}
		defer p.Close()
		chProxies = append(chProxies, p)
	}
	direct := map[string]string{"TALLY_POSTGRES_URL": pgURL.String(), "TALLY_CLICKHOUSE_ADDR": st.chAddr,
		"TALLY_REDIS_URL": redisURL.String()}
	viaProxy := map[string]string{"TALLY_CLICKHOUSE_ADDR": chProxies.addr()}
	pgURL.Host, redisURL.Host = proxies["pg"].Addr, proxies["redis"].Addr
	viaProxy["TALLY_POSTGRES_URL"], viaProxy["TALLY_REDIS_URL"] = pgURL.String(), redisURL.String()

	addr, err := freeAddr()
	if err != nil {
		return res, err
	}
	base := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "TALLY_ENV=test", "TALLY_HTTP_ADDR=" + addr,
		"TALLY_CLICKHOUSE_DATABASE=" + db, "TALLY_REDIS_PREFIX=" + db + ":", "TALLY_JWT_SECRET=faults-secret-faults-secret-faults-secret",
		"TALLY_FLUSH_INTERVAL=250ms", "TALLY_PRO_EVENTS_PER_HOUR=1000000000", "TALLY_TRACKER_PER_MINUTE=1000000000",
		"TALLY_CLICKHOUSE_TIMEOUT=10s", "TALLY_LOG_LEVEL=info"}
	if st.cluster != "" {
		base = append(base, "TALLY_CLICKHOUSE_CLUSTER="+st.cluster)
	}
	cli := &tallyproc.Server{Bin: o.tally, Env: withVars(base, direct, "TALLY_WAL_DIR="+filepath.Join(o.workDir, "cli-wal"))}
	if err := cli.CLI(ctx, nil, "migrate"); err != nil {
		return res, err
	}
	email := db + "@faults.local"
	if err := cli.CLI(ctx, nil, "user", "create", "--email", email, "--password", "faults-password", "--name", "Faults", "--plan", "pro"); err != nil {
		return res, err
	}
	var key struct{ Key string }
	if err := cli.CLI(ctx, &key, "key", "create", "--owner", email, "--name", "faults", "--scopes", "events:write"); err != nil {
		return res, err
	}
	chOpts := chstore.Options{Addr: st.chAddr, Database: db, Cluster: st.cluster, User: "default", Timeout: 60 * time.Second}
	ch, err := chstore.Open(ctx, chOpts)
	if err != nil {
		return res, err
	}
	defer ch.Close()
	defer chstore.DropDatabase(context.Background(), chOpts, db) //nolint:errcheck // best effort
	pg, err := pgstore.Open(ctx, direct["TALLY_POSTGRES_URL"])
	if err != nil {
		return res, err
	}
	defer pg.Close()

	hc := &http.Client{Timeout: 15 * time.Second}
	for i := range sc.runs {
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
		domain := fmt.Sprintf("run%d.example.com", i+1)
		var site struct {
			SiteID string `json:"site_id"`
		}
		if err := cli.CLI(ctx, &site, "site", "create", "--owner", email, "--domain", domain); err != nil {
			return res, err
		}
		walDir := filepath.Join(o.workDir, db, fmt.Sprint("run", i+1))
		r := &run{o: o, ch: chProxies, pg: proxies["pg"], redis: proxies["redis"], walDir: walDir,
			logPath: filepath.Join(o.workDir, fmt.Sprintf("%s-run%d.log", sc.name, i+1)),
			srv: &tallyproc.Server{Bin: o.tally, URL: "http://" + addr,
				Env: withVars(append(base, sc.env...), viaProxy, "TALLY_WAL_DIR="+walDir)},
			sender: &soak.Sender{Client: client.New("http://"+addr, key.Key, client.WithHTTPClient(hc)), HTTP: hc,
				BaseURL: "http://" + addr, Site: site.SiteID, Domain: domain, Prefix: "/p", Ledger: &soak.Ledger{}}}
		os.Remove(r.logPath)
		started := time.Now()
		rr := runResult{}
		if rr.err = sc.run(r); rr.err == nil {
			rr.err = r.finish()
		}
		for _, p := range proxies { // whatever the run left broken
			p.Up()
		}
		chProxies.Up()
		if rr.err == nil {
			rr.counts, rr.err = soak.Verify(ctx, ch, pg, site.SiteID, r.sender.Ledger)
		}
		rr.exits, rr.killedAt, rr.drains, rr.took = r.exits, r.killedAt, r.drains, time.Since(started)
		res.runs = append(res.runs, rr)
		status := "ok"
		if !rr.ok() {
			status = "BROKEN"
		}
		fmt.Printf("faults: %s run %d/%d: %s in %v: %v %v %s\n", sc.name, i+1, sc.runs, status, rr.took.Round(time.Millisecond),
			rr.counts, rr.err, rr.killedAt)
	}
	return res, nil
}

// maxDrains bounds the further starts finish makes to drain the log.
const maxDrains = 12

// finish stops tally cleanly with every store up, then starts and stops it
// once more: whatever the first drain could not finish, the next start
// does (and a clean restart must change nothing). When that drain too ran
// out of time (the buffer says so in the log) — a backlog larger than one
// drain stores, as on the local cluster, whose inserts on a small machine
// fall behind the load — it starts and stops tally again, until a drain
// ends with the log stored, at most maxDrains more times.
func (r *run) finish() error {
	r.ch.Up()
	r.pg.Up()
	r.redis.Up()
	r.term()
	for {
		mark := fileSize(r.logPath)
		if err := r.start(); err != nil {
			return err
		}
		r.term()
		unfinished, err := logSince(r.logPath, mark, buffer.UnfinishedStop)
		if err != nil || !unfinished {
			return err
		}
		if r.drains == maxDrains {
			return fmt.Errorf("the write-ahead log was not drained after %d more starts", maxDrains)
		}
		r.drains++
	}
}

// fileSize is the size of the file at path, 0 when there is none.
func fileSize(path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return st.Size()
}

// logSince reports whether the log at path holds text past offset.
func logSince(path string, offset int64, text string) (bool, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return false, err
	}
	return strings.Contains(string(data[min(offset, int64(len(data))):]), text), nil
}

// proxyGroup takes the nodes of ClickHouse (one, or each of a cluster) away
// and back together.
type proxyGroup []*faultproxy.Proxy

func (g proxyGroup) Down() {
	for _, p := range g {
		p.Down()
	}
}

func (g proxyGroup) Up() {
	for _, p := range g {
		p.Up()
	}
}

// addr is the proxies' addresses as TALLY_CLICKHOUSE_ADDR lists them.
func (g proxyGroup) addr() string {
	addrs := make([]string, len(g))
	for i, p := range g {
		addrs[i] = p.Addr
	}
	return strings.Join(addrs, ",")
}

// withVars is env with the variables of vars and extra.
func withVars(env []string, vars map[string]string, extra ...string) []string {
	out := append([]string(nil), env...)
	for k, v := range vars {
		out = append(out, k+"="+v)
	}
	return append(out, extra...)
}

func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

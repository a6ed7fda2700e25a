package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tally-analytics/tally/internal/app"
	"github.com/tally-analytics/tally/internal/chstore"
	"github.com/tally-analytics/tally/internal/config"
	"github.com/tally-analytics/tally/internal/faultproxy"
	"github.com/tally-analytics/tally/internal/ingest/buffer"
	"github.com/tally-analytics/tally/internal/pgstore"
	"github.com/tally-analytics/tally/internal/soak"
	"github.com/tally-analytics/tally/internal/testenv"
	"github.com/tally-analytics/tally/pkg/client"
)

// The write path's promise, held against real processes: an event answered
// 201 is stored exactly once, an event refused is not stored, and every
// session's rows add up to one live state holding the pageviews stored with
// its id — through kills, stops and outages. Each test breaks the path the
// way a fault report found it broken; ClickHouse is reached through a proxy
// that can take it away or keep its answers from tally.

// unlimited lifts the events allowances, so that the load is not refused.
var unlimited = []string{"TALLY_PRO_EVENTS_PER_HOUR=100000000", "TALLY_TRACKER_PER_MINUTE=10000000"}

// withEnv is unlimited and more.
func withEnv(extra ...string) []string { return append(slices.Clone(unlimited), extra...) }

// check holds what ClickHouse and Postgres (reached directly, not through
// a proxy) have of the ledger's events to the promise, once whatever the
// write-ahead log still holds is stored.
func check(t *testing.T, cfg *config.Config, chAddr string, s *soak.Sender) {
	pgURL := cfg.PostgresURL
	t.Helper()
	finish(t, cfg)
	opts := app.CHOptions(cfg)
	opts.Addr = chAddr
	ch, err := chstore.Open(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Close()
	pg, err := pgstore.Open(context.Background(), pgURL)
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	c, err := soak.Verify(context.Background(), ch, pg, s.Site, s.Ledger)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(c)
	if !c.OK() {
		t.Error("the write path broke its promise (see the counts above)")
	}
	if c.Acknowledged < 100 {
		t.Errorf("only %d events were acknowledged: the test did not test much", c.Acknowledged)
	}
}

// finish starts and stops servers until one stop drains the write-ahead log
// completely. A stop's drain is bounded (TALLY_SHUTDOWN_TIMEOUT): with a
// backlog larger than it stores in that time, the rest waits in the log for
// the next start, which is not a loss.
func finish(t *testing.T, cfg *config.Config) {
	t.Helper()
	for range 10 {
		srv := startServer(t, cfg, unlimited...)
		srv.stop(t)
		if !strings.Contains(srv.logs.String(), buffer.UnfinishedStop) {
			return
		}
	}
	t.Fatal("ten starts did not drain the write-ahead log")
}

// stop sends SIGTERM and expects a clean exit.
func (s *server) stop(t *testing.T) {
	t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := s.wait(t); err != nil {
		t.Fatalf("after SIGTERM the server exited with %v, want 0\n%s", err, s.logs.String())
	}
}

// kill sends SIGKILL.
func (s *server) kill(t *testing.T) {
	t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	s.wait(t)
}

// faultSetup is a test's configuration with ClickHouse behind a proxy; it
// returns a sender of the site's events and ClickHouse's real address.
func faultSetup(t *testing.T) (*config.Config, *faultproxy.Proxy, *soak.Sender, string) {
	cfg := testenv.Config(t)
	cfg.HTTPAddr = fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
	cfg.FlushInterval = 200 * time.Millisecond
	siteID, key := setup(t, cfg)
	direct := cfg.ClickHouseAddr
	proxy := testenv.NewProxy(t, direct)
	cfg.ClickHouseAddr = proxy.Addr
	hc := &http.Client{Timeout: 10 * time.Second}
	s := &soak.Sender{Client: client.New("http://"+cfg.HTTPAddr, key, client.WithHTTPClient(hc)), HTTP: hc,
		BaseURL: "http://" + cfg.HTTPAddr, Site: siteID, Domain: "example.com", Prefix: "/f", Ledger: &soak.Ledger{}}
	return cfg, proxy, s, direct
}

// holdUnderLoad sends traffic until tally sends an insert whose query holds
// pattern, lets ClickHouse store it while its answer is held back, and
// returns what stops the traffic.
func holdUnderLoad(t *testing.T, ch *faultproxy.Proxy, s *soak.Sender, pattern string, workers, visitors int) (stop func()) {
	t.Helper()
	held := ch.Hold(pattern)
	ctx, cancel := context.WithCancel(context.Background())
	wg := s.Run(ctx, workers, visitors)
	select {
	case <-held:
	case <-time.After(20 * time.Second):
		cancel()
		t.Fatalf("no insert holding %q was held", pattern)
	}
	time.Sleep(300 * time.Millisecond) // ClickHouse stores what it received
	return func() { cancel(); wg.Wait() }
}

// Killed while ClickHouse is down (a batch in flight, its outcome unknown),
// restarted while it is still down: nothing acknowledged is lost.
func TestKillDuringClickHouseOutage(t *testing.T) {
	cfg, ch, s, direct := faultSetup(t)
	srv := startServer(t, cfg, unlimited...)
	s.For(time.Second, 8, 50)
	ch.Down()
	ctx, cancel := context.WithCancel(context.Background())
	wg := s.Run(ctx, 8, 50)
	time.Sleep(1500 * time.Millisecond)
	srv.kill(t)
	cancel()
	wg.Wait()

	srv = startServer(t, cfg, unlimited...) // the replay starts with ClickHouse down
	s.For(time.Second, 8, 50)
	time.Sleep(time.Second)
	ch.Up()
	srv.stop(t)
	check(t, cfg, direct, s)
}

// SIGTERM while ClickHouse has stored an insert and its answer is still on
// the way: the stop does not cancel the insert, nothing is sent twice, and
// the drain loses nothing.
func TestStopWhileAnInsertIsUnanswered(t *testing.T) {
	cfg, ch, s, direct := faultSetup(t)
	srv := startServer(t, cfg, unlimited...)
	stopLoad := holdUnderLoad(t, ch, s, "INSERT INTO events", 8, 50)
	if err := srv.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	stopLoad()
	ch.Release()
	if err := srv.wait(t); err != nil {
		t.Fatalf("exit: %v\n%s", err, srv.logs.String())
	}
	check(t, cfg, direct, s)
}

// Killed after ClickHouse stored a batch's session rows but before tally
// heard of it; the collapsing merge then removes the cancel rows with the
// states they cancel before tally restarts. The replay must not write them
// again.
func TestKillAfterSessionsStoredThenMerged(t *testing.T) {
	cfg, ch, s, direct := faultSetup(t)
	srv := startServer(t, cfg, unlimited...)
	s.For(time.Second, 4, 20) // sessions to continue
	time.Sleep(time.Second)   // flushed
	stopLoad := holdUnderLoad(t, ch, s, "INSERT INTO sessions", 4, 20)
	srv.kill(t)
	stopLoad()
	ch.Drop()
	opts := app.CHOptions(cfg)
	opts.Addr = direct
	st, err := chstore.Open(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.OptimizeFinal(context.Background(), "sessions"); err != nil {
		t.Fatal(err)
	}
	st.Close()
	check(t, cfg, direct, s)
}

// With ClickHouse down the write-ahead log fills its (small) budget: a
// batch is then answered 503 with Retry-After (not 200 with every event
// refused), refused events leave no trace (a visitor whose first events
// were refused gets one session, not a cancelled one), and the refusals are
// logged once per interval, not once per event.
func TestFullBufferRefusesCleanly(t *testing.T) {
	cfg, ch, s, direct := faultSetup(t)
	ch.Down()
	srv := startServer(t, cfg, withEnv("TALLY_WAL_MAX_BYTES=2097152", "TALLY_WAL_SEGMENT_BYTES=1048576")...)
	ctx := context.Background()
	var refusal *client.Error
	for i := 0; i < 40 && s.Ledger.Refused() == 0; i++ {
		err := s.Batch(ctx, 1000)
		if !errors.As(err, &refusal) && err != nil {
			t.Fatalf("batch %d: %v", i, err)
		}
	}
	switch {
	case refusal == nil:
		t.Errorf("a batch past the budget: 200 with %d events refused, want 503", s.Ledger.Refused())
	case refusal.Status != http.StatusServiceUnavailable || refusal.Code != "service_unavailable" || refusal.RetryAfter <= 0:
		t.Errorf("a batch past the budget: %v (Retry-After %v), want 503 service_unavailable with Retry-After", refusal, refusal.RetryAfter)
	}
	for s.Pageview(ctx, "fill") == nil {
		// until the log's last bytes are taken
	}
	s.Prefix = "/late/" + strings.Repeat("z", 100) // larger than what no longer fit
	for range 200 {
		if err := s.Pageview(ctx, "late"); !errors.As(err, &refusal) || refusal.Status != http.StatusServiceUnavailable {
			t.Fatalf("a pageview past the budget: %v, want 503", err)
		}
	}
	// once ClickHouse is back, visitor "late" sends pageviews: its session
	// holds those, as one live state
	ch.Up()
	deadline := time.Now().Add(30 * time.Second)
	for s.Pageview(ctx, "late") != nil { // accepted once the log has room again
		if time.Now().After(deadline) {
			t.Fatal("the log never made room after ClickHouse came back")
		}
		time.Sleep(100 * time.Millisecond)
	}
	s.Pageview(ctx, "late")
	srv.stop(t)
	if n := strings.Count(srv.logs.String(), "level=ERROR") + strings.Count(srv.logs.String(), "level=WARN"); n > 12 {
		t.Errorf("%d warnings and errors logged for one outage:\n%s", n, srv.logs.String())
	}
	check(t, cfg, direct, s)
}

// A restart with a smaller disk budget than the log already holds (all of
// it in ClickHouse) accepts events at once instead of answering 503 for ever.
func TestRestartWithASmallerBudget(t *testing.T) {
	cfg, _, s, direct := faultSetup(t)
	srv := startServer(t, cfg, unlimited...) // 64 MiB segments: everything lands in one
	s.Prefix = "/big/" + strings.Repeat("y", 1000)
	for i := range 5 { // ~6 MB of log
		if err := s.Batch(context.Background(), 1000); err != nil {
			t.Fatalf("batch %d: %v", i, err)
		}
	}
	srv.stop(t)
	srv = startServer(t, cfg, withEnv("TALLY_WAL_MAX_BYTES=2097152", "TALLY_WAL_SEGMENT_BYTES=1048576")...)
	if err := s.Pageview(context.Background(), "after"); err != nil {
		t.Errorf("after a restart with a 2 MiB budget: %v, want 201", err)
	}
	srv.stop(t)
	check(t, cfg, direct, s)
}

// SIGTERM with ClickHouse down: the drain gives up within
// TALLY_SHUTDOWN_TIMEOUT and exits 0; the next start stores everything.
func TestStopWithClickHouseDown(t *testing.T) {
	cfg, ch, s, direct := faultSetup(t)
	ch.Down()
	srv := startServer(t, cfg, withEnv("TALLY_SHUTDOWN_TIMEOUT=6s")...)
	s.For(time.Second, 4, 20)
	start := time.Now()
	srv.stop(t)
	if took := time.Since(start); took > 6*time.Second+3*time.Second {
		t.Errorf("the stop took %v with TALLY_SHUTDOWN_TIMEOUT=6s", took)
	}
	ch.Up()
	check(t, cfg, direct, s)
}

// A Redis outage under load is logged once per interval, not once per event.
func TestRedisOutageLogsOnce(t *testing.T) {
	cfg, _, s, direct := faultSetup(t)
	opts, err := redis.ParseURL(cfg.RedisURL)
	if err != nil {
		t.Fatal(err)
	}
	rp := testenv.NewProxy(t, opts.Addr)
	cfg.RedisURL = strings.Replace(cfg.RedisURL, opts.Addr, rp.Addr, 1)
	srv := startServer(t, cfg, unlimited...)
	rp.Down()
	s.For(2*time.Second, 8, 50)
	rp.Up()
	s.For(500*time.Millisecond, 8, 50)
	srv.stop(t)
	logs := srv.logs.String()
	if n := strings.Count(logs, "level=ERROR") + strings.Count(logs, "level=WARN"); n > 12 {
		t.Errorf("%d warnings and errors logged for %d events during one Redis outage:\n%s", n, s.Ledger.Acked(), logs)
	}
	check(t, cfg, direct, s)
}

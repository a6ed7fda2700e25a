package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/tally-analytics/tally/internal/app"
	"github.com/tally-analytics/tally/internal/chstore"
	"github.com/tally-analytics/tally/internal/config"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/testenv"
	"github.com/tally-analytics/tally/pkg/api"
	"github.com/tally-analytics/tally/pkg/client"
)

// The write path's promise, held against real processes: an event answered
// 201 is stored exactly once, an event refused is not stored, and every
// session's rows add up to one live state holding the pageviews stored with
// its id — through kills, stops and outages. Each test breaks the path the
// way a fault report found it broken; ClickHouse is reached through a proxy
// that can take it away or keep its answers from tally.

// unlimited lifts the events allowance, so that the load is not refused.
const unlimited = "TALLY_PRO_EVENTS_PER_HOUR=100000000"

// traffic sends pageviews and remembers what became of each: acknowledged
// (with its event id), refused (503: not stored), or cut off without an
// answer (stored or not, but never twice). Every path is unique.
type traffic struct {
	t       *testing.T
	site    string
	mu      sync.Mutex
	acked   map[string]string // path → event id
	refused []string
	cut     []string
	seq     atomic.Int64
	pad     string // appended to the paths of the next pageviews
}

func newTraffic(t *testing.T, site string) *traffic {
	return &traffic{t: t, site: site, acked: map[string]string{}}
}

// send sends one pageview of visitor from c.
func (tr *traffic) send(c *client.Client, visitor string) error {
	path := fmt.Sprintf("/f/%d%s", tr.seq.Add(1), tr.pad)
	res, err := c.Pageview(context.Background(), api.PageviewRequest{SiteID: tr.site, URL: "https://example.com" + path,
		VisitorID: visitor, UserAgent: "Mozilla/5.0 (X11; Linux x86_64; rv:121.0) Gecko/20100101 Firefox/121.0"})
	tr.mu.Lock()
	defer tr.mu.Unlock()
	var apiErr *client.Error
	switch {
	case err == nil:
		tr.acked[path] = res.EventID
	case errors.As(err, &apiErr) && apiErr.Status == http.StatusServiceUnavailable:
		tr.refused = append(tr.refused, path)
	case errors.As(err, &apiErr):
		tr.t.Errorf("pageview %s: %v", path, err)
	default:
		tr.cut = append(tr.cut, path)
	}
	return err
}

// run sends from workers workers, as visitors v0..v{visitors-1}, until ctx
// ends.
func (tr *traffic) run(ctx context.Context, c *client.Client, workers, visitors int) *sync.WaitGroup {
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; ctx.Err() == nil; i += workers {
				if err := tr.send(c, fmt.Sprint("v", i%visitors)); err != nil && !errors.As(err, new(*client.Error)) {
					time.Sleep(10 * time.Millisecond) // the server is away
				}
			}
		})
	}
	return &wg
}

// for sends traffic for d.
func (tr *traffic) forDuration(c *client.Client, workers, visitors int, d time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	tr.run(ctx, c, workers, visitors).Wait()
}

// check opens the store directly (not through a proxy) and holds it to the
// promise.
func (tr *traffic) check(cfg *config.Config, chAddr string) {
	t := tr.t
	t.Helper()
	opts := app.CHOptions(cfg)
	opts.Addr = chAddr
	ch, err := chstore.Open(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Close()
	count := func(q string, args ...any) int64 {
		t.Helper()
		var n int64
		if err := ch.QueryRow(context.Background(), "SELECT toInt64(n) FROM ("+q+")", args...).Scan(&n); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return n
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	ids := make([]string, 0, len(tr.acked))
	for _, id := range tr.acked {
		ids = append(ids, id)
	}
	span := model.Span{Sites: []model.SiteID{model.SiteID(tr.site)}, From: time.Now().Add(-time.Hour), To: time.Now().Add(time.Hour)}
	found, err := ch.ExistingEventIDs(context.Background(), "events", span, ids)
	if err != nil {
		t.Fatal(err)
	}
	missing := len(ids) - len(found)
	doubled := count("SELECT count() AS n FROM (SELECT event_id FROM events WHERE site_id = ? GROUP BY event_id HAVING count() > 1)", tr.site)
	stored := func(paths []string) int64 { // in chunks: paths bind into the query's text
		n := int64(0)
		for chunk := range slices.Chunk(paths, 100) {
			n += count("SELECT count() AS n FROM events WHERE has(?, pathname)", chunk)
		}
		return n
	}
	storedRefused, landed := stored(tr.refused), stored(tr.cut)
	total := count("SELECT count() AS n FROM events WHERE site_id = ?", tr.site)
	// every session: one live state (sum(sign) = 1) whose pageviews are
	// those stored with its id
	badSign := count("SELECT countIf(s != 1) AS n FROM (SELECT session_id, sum(sign) s FROM sessions WHERE site_id = ? GROUP BY session_id) "+
		"ALL FULL OUTER JOIN (SELECT DISTINCT session_id FROM events WHERE site_id = ? AND session_id != 0) USING session_id", tr.site, tr.site)
	badViews := count("SELECT countIf(pv != epv) AS n FROM (SELECT session_id, toInt64(sum(sign * pageviews)) pv FROM sessions WHERE site_id = ? GROUP BY session_id) "+
		"ALL FULL OUTER JOIN (SELECT session_id, toInt64(countIf(name = 'pageview')) epv FROM events WHERE site_id = ? AND session_id != 0 GROUP BY session_id) "+
		"USING session_id", tr.site, tr.site)
	t.Logf("%d acknowledged, %d refused, %d cut off (%d of them stored); %d events stored; %d missing, %d doubled, %d refused but stored; "+
		"sessions: %d not at sum(sign) 1, %d with other pageviews than their events",
		len(ids), len(tr.refused), len(tr.cut), landed, total, missing, doubled, storedRefused, badSign, badViews)
	if missing != 0 || doubled != 0 || storedRefused != 0 || total != int64(len(ids))+landed || badSign != 0 || badViews != 0 {
		t.Error("the write path broke its promise (see the counts above)")
	}
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
// returns the site, a key, the client and ClickHouse's real address.
func faultSetup(t *testing.T) (*config.Config, *testenv.Proxy, string, *client.Client, string) {
	cfg := testenv.Config(t)
	cfg.HTTPAddr = fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
	cfg.FlushInterval = 200 * time.Millisecond
	siteID, key := setup(t, cfg)
	direct := cfg.ClickHouseAddr
	proxy := testenv.NewProxy(t, direct)
	cfg.ClickHouseAddr = proxy.Addr
	c := client.New("http://"+cfg.HTTPAddr, key, client.WithHTTPClient(&http.Client{Timeout: 10 * time.Second}))
	return cfg, proxy, siteID, c, direct
}

// Killed while ClickHouse is down (a batch in flight, its outcome unknown),
// restarted while it is still down: nothing acknowledged is lost.
func TestKillDuringClickHouseOutage(t *testing.T) {
	cfg, ch, site, c, direct := faultSetup(t)
	srv := startServer(t, cfg, unlimited)
	tr := newTraffic(t, site)
	tr.forDuration(c, 8, 50, time.Second)
	ch.Down()
	ctx, cancel := context.WithCancel(context.Background())
	wg := tr.run(ctx, c, 8, 50)
	time.Sleep(1500 * time.Millisecond)
	srv.kill(t)
	cancel()
	wg.Wait()

	srv = startServer(t, cfg, unlimited) // the replay starts with ClickHouse down
	tr.forDuration(c, 8, 50, time.Second)
	time.Sleep(time.Second)
	ch.Up()
	srv.stop(t)
	tr.check(cfg, direct)
}

// SIGTERM while ClickHouse has stored an insert and its answer is still on
// the way: the stop does not cancel the insert, nothing is sent twice, and
// the drain loses nothing.
func TestStopWhileAnInsertIsUnanswered(t *testing.T) {
	cfg, ch, site, c, direct := faultSetup(t)
	srv := startServer(t, cfg, unlimited)
	tr := newTraffic(t, site)
	held := ch.Hold("INSERT INTO events")
	ctx, cancel := context.WithCancel(context.Background())
	wg := tr.run(ctx, c, 8, 50)
	select {
	case <-held:
	case <-time.After(20 * time.Second):
		t.Fatal("no events insert was held")
	}
	time.Sleep(300 * time.Millisecond) // ClickHouse stores what it received
	if err := srv.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	cancel()
	wg.Wait()
	ch.Release()
	if err := srv.wait(t); err != nil {
		t.Fatalf("exit: %v\n%s", err, srv.logs.String())
	}
	startServer(t, cfg, unlimited).stop(t) // whatever is left
	tr.check(cfg, direct)
}

// Killed after ClickHouse stored a batch's session rows but before tally
// heard of it; the collapsing merge then removes the cancel rows with the
// states they cancel before tally restarts. The replay must not write them
// again.
func TestKillAfterSessionsStoredThenMerged(t *testing.T) {
	cfg, ch, site, c, direct := faultSetup(t)
	srv := startServer(t, cfg, unlimited)
	tr := newTraffic(t, site)
	tr.forDuration(c, 4, 20, time.Second) // sessions to continue
	time.Sleep(time.Second)               // flushed
	held := ch.Hold("INSERT INTO sessions")
	ctx, cancel := context.WithCancel(context.Background())
	wg := tr.run(ctx, c, 4, 20)
	select {
	case <-held:
	case <-time.After(20 * time.Second):
		t.Fatal("no sessions insert was held")
	}
	time.Sleep(300 * time.Millisecond)
	srv.kill(t)
	cancel()
	wg.Wait()
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
	startServer(t, cfg, unlimited).stop(t)
	tr.check(cfg, direct)
}

// With ClickHouse down the write-ahead log fills its (small) budget: a
// batch is then answered 503 with Retry-After (not 200 with every event
// refused), refused events leave no trace (a visitor whose first events
// were refused gets one session, not a cancelled one), and the refusals are
// logged once per interval, not once per event.
func TestFullBufferRefusesCleanly(t *testing.T) {
	cfg, ch, site, c, direct := faultSetup(t)
	ch.Down()
	srv := startServer(t, cfg, unlimited, "TALLY_WAL_MAX_BYTES=2097152", "TALLY_WAL_SEGMENT_BYTES=1048576")
	tr := newTraffic(t, site)
	long := strings.Repeat("x", 1800)
	var refusal *client.Error
	for i := 0; i < 20; i++ {
		batch := make([]api.CustomEventRequest, 500)
		for k := range batch {
			batch[k].PageviewRequest = api.PageviewRequest{SiteID: site, URL: fmt.Sprintf("https://example.com/fill/%d/%d/%s", i, k, long),
				VisitorID: fmt.Sprint("fill", k%20)}
		}
		res, err := c.Batch(context.Background(), batch)
		if errors.As(err, &refusal) {
			tr.mu.Lock()
			for k := range batch {
				tr.refused = append(tr.refused, fmt.Sprintf("/fill/%d/%d/%s", i, k, long))
			}
			tr.mu.Unlock()
			break
		}
		if err != nil {
			t.Fatalf("batch %d: %v", i, err)
		}
		tr.mu.Lock()
		for k, r := range res.Results {
			if path := fmt.Sprintf("/fill/%d/%d/%s", i, k, long); r.Success {
				tr.acked[path] = r.EventID
			} else {
				tr.refused = append(tr.refused, path)
			}
		}
		tr.mu.Unlock()
		if res.Accepted < 500 {
			t.Errorf("batch %d past the budget: 200 with %d of 500 events refused, want 503", i, res.Rejected)
			break
		}
	}
	if refusal != nil && (refusal.Status != http.StatusServiceUnavailable || refusal.Code != "service_unavailable" || refusal.RetryAfter <= 0) {
		t.Errorf("a batch past the budget: %v (Retry-After %v), want 503 service_unavailable with Retry-After", refusal, refusal.RetryAfter)
	}
	for tr.send(c, "fill") == nil {
		// until the log's last bytes are taken
	}
	tr.pad = "/" + strings.Repeat("z", 100) // larger than what no longer fit
	for range 200 {
		if err := tr.send(c, "late"); !errors.As(err, &refusal) || refusal.Status != http.StatusServiceUnavailable {
			t.Fatalf("a pageview past the budget: %v, want 503", err)
		}
	}
	// once ClickHouse is back, visitor "late" sends two pageviews: its
	// session must hold those two, as one live state
	ch.Up()
	deadline := time.Now().Add(30 * time.Second)
	for tr.send(c, "late") != nil { // accepted once the log has room again
		if time.Now().After(deadline) {
			t.Fatal("the log never made room after ClickHouse came back")
		}
		time.Sleep(100 * time.Millisecond)
	}
	tr.send(c, "late")
	srv.stop(t)
	if n := strings.Count(srv.logs.String(), "level=ERROR") + strings.Count(srv.logs.String(), "level=WARN"); n > 12 {
		t.Errorf("%d warnings and errors logged for one outage:\n%s", n, srv.logs.String())
	}
	tr.check(cfg, direct)
}

// A restart with a smaller disk budget than the log already holds (all of
// it in ClickHouse) accepts events at once instead of answering 503 for ever.
func TestRestartWithASmallerBudget(t *testing.T) {
	cfg, _, site, c, direct := faultSetup(t)
	srv := startServer(t, cfg, unlimited) // 64 MiB segments: everything lands in one
	tr := newTraffic(t, site)
	long := strings.Repeat("y", 1800)
	for i := range 5 { // ~5 MB of log
		batch := make([]api.CustomEventRequest, 500)
		for k := range batch {
			batch[k].PageviewRequest = api.PageviewRequest{SiteID: site, URL: fmt.Sprintf("https://example.com/big/%d/%d/%s", i, k, long)}
		}
		res, err := c.Batch(context.Background(), batch)
		if err != nil || res.Accepted != 500 {
			t.Fatalf("batch %d: %+v, %v", i, res, err)
		}
		tr.mu.Lock()
		for k, r := range res.Results {
			tr.acked[fmt.Sprintf("/big/%d/%d/%s", i, k, long)] = r.EventID
		}
		tr.mu.Unlock()
	}
	srv.stop(t)
	srv = startServer(t, cfg, unlimited, "TALLY_WAL_MAX_BYTES=2097152", "TALLY_WAL_SEGMENT_BYTES=1048576")
	if err := tr.send(c, "after"); err != nil {
		t.Errorf("after a restart with a 2 MiB budget: %v, want 201", err)
	}
	srv.stop(t)
	tr.check(cfg, direct)
}

// SIGTERM with ClickHouse down: the drain gives up within
// TALLY_SHUTDOWN_TIMEOUT and exits 0; the next start stores everything.
func TestStopWithClickHouseDown(t *testing.T) {
	cfg, ch, site, c, direct := faultSetup(t)
	ch.Down()
	srv := startServer(t, cfg, unlimited, "TALLY_SHUTDOWN_TIMEOUT=6s")
	tr := newTraffic(t, site)
	tr.forDuration(c, 4, 20, time.Second)
	start := time.Now()
	srv.stop(t)
	if took := time.Since(start); took > 6*time.Second+3*time.Second {
		t.Errorf("the stop took %v with TALLY_SHUTDOWN_TIMEOUT=6s", took)
	}
	ch.Up()
	startServer(t, cfg, unlimited).stop(t)
	tr.check(cfg, direct)
}

// A Redis outage under load is logged once per interval, not once per event.
func TestRedisOutageLogsOnce(t *testing.T) {
	cfg, _, site, c, direct := faultSetup(t)
	opts, err := redisAddr(cfg.RedisURL)
	if err != nil {
		t.Fatal(err)
	}
	rp := testenv.NewProxy(t, opts)
	cfg.RedisURL = strings.Replace(cfg.RedisURL, opts, rp.Addr, 1)
	srv := startServer(t, cfg, unlimited)
	tr := newTraffic(t, site)
	rp.Down()
	tr.forDuration(c, 8, 50, 2*time.Second)
	rp.Up()
	tr.forDuration(c, 8, 50, 500*time.Millisecond)
	srv.stop(t)
	logs := srv.logs.String()
	if n := strings.Count(logs, "level=ERROR") + strings.Count(logs, "level=WARN"); n > 12 || len(tr.acked) < 500 {
		t.Errorf("%d warnings and errors logged for %d events during one Redis outage:\n%s", n, len(tr.acked), logs)
	}
	tr.check(cfg, direct)
}

func redisAddr(u string) (string, error) {
	rest, ok := strings.CutPrefix(u, "redis://")
	if !ok {
		return "", fmt.Errorf("not a redis URL: %s", u)
	}
	host, _, _ := strings.Cut(rest, "/")
	return host, nil
}

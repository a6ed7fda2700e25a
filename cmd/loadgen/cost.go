package main

import (
	"bufio"
	"cmp"
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// cost is what the server spent over a phase's window: its CPU time and the
// commands Redis ran meanwhile.
type cost struct {
	span time.Duration
	cpu  time.Duration // tally's user + system time
	// commands are the calls of each Redis command over the window (INFO
	// commandstats), the loadgen's own left out; nil when Redis could not be
	// read. Redis counts a Lua script once (evalsha) and each command it
	// runs once more.
	commands map[string]int64
	// others are the clients of other Redis databases that ran commands
	// during the window ("db 1: 3 clients"): the counts include theirs.
	others []string
	// flush describes where the flusher's time went, per batch and step.
	flush string
	// procs is the CPU time of each process group (processGroups) over the
	// window; busy and capacity are the machine's: its cores' busy time
	// and all of their time.
	procs          map[string]time.Duration
	busy, capacity time.Duration
	// merges is ClickHouse's CPU time after the window until it ran no
	// merge: what it still did for the phase's rows.
	merges time.Duration
}

// per is d per one of n events (or requests), in µs.
func per(d time.Duration, n int64) float64 {
	return float64(d.Microseconds()) / float64(n)
}

func (c cost) totalCommands() int64 {
	var n int64
	for _, calls := range c.commands {
		n += calls
	}
	return n
}

// per1k is Redis commands per 1,000 of n events (or requests).
func (c cost) per1k(n int64) float64 {
	return 1000 * float64(c.totalCommands()) / float64(n)
}

// cpuPer is tally's CPU time per one of n events (or requests), in µs.
func (c cost) cpuPer(n int64) float64 { return per(c.cpu, n) }

// topCommands lists the commands by calls, most first: the first n, then
// the rest summed up.
func (c cost) topCommands(n int) string {
	names := make([]string, 0, len(c.commands))
	for name := range c.commands {
		names = append(names, name)
	}
	slices.SortFunc(names, func(a, b string) int {
		return cmp.Or(cmp.Compare(c.commands[b], c.commands[a]), cmp.Compare(a, b))
	})
	var parts []string
	for _, name := range names[:min(n, len(names))] {
		parts = append(parts, fmt.Sprintf("%s %d", name, c.commands[name]))
	}
	if rest := names[min(n, len(names)):]; len(rest) > 0 {
		var calls int64
		for _, name := range rest {
			calls += c.commands[name]
		}
		parts = append(parts, fmt.Sprintf("%d other commands %d", len(rest), calls))
	}
	return strings.Join(parts, ", ")
}

// redisCounter reads Redis's command counts over one connection of its own.
// The local stack's Redis serves every profile (the bench has one database
// of it), so it also looks for clients of other databases, whose commands
// would be counted too.
type redisCounter struct {
	rdb *redis.Client
	db  int
	id  int64 // its own client id

	mu     sync.Mutex // orders its commands with the count of them
	listed int64      // CLIENT LIST calls made
}

// newRedisCounter connects to the Redis of url; the connection's own setup
// commands are done before any window opens.
func newRedisCounter(ctx context.Context, url string) (*redisCounter, error) {
	opts, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("redis url: %w", err)
	}
	opts.PoolSize, opts.MaxRetries = 1, -1
	r := &redisCounter{rdb: redis.NewClient(opts), db: opts.DB}
	if r.id, err = r.rdb.ClientID(ctx).Result(); err != nil {
		r.rdb.Close()
		return nil, fmt.Errorf("redis: %w", err)
	}
	return r, nil
}

func (r *redisCounter) Close() error { return r.rdb.Close() }

// commands reads the calls of every command from INFO commandstats, less
// INFO itself and the counter's CLIENT LIST calls.
func (r *redisCounter) commands(ctx context.Context) (map[string]int64, error) {
	r.mu.Lock()
	info, err := r.rdb.Info(ctx, "commandstats").Result()
	listed := r.listed
	r.mu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("redis info commandstats: %w", err)
	}
	out := map[string]int64{}
	for _, line := range strings.Split(info, "\n") {
		// cmdstat_get:calls=42,usec=51,usec_per_call=1.21,rejected_calls=0,failed_calls=0
		stat, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_")
		if !ok {
			continue
		}
		name, fields, _ := strings.Cut(stat, ":")
		calls, _, _ := strings.Cut(strings.TrimPrefix(fields, "calls="), ",")
		n, err := strconv.ParseInt(calls, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("redis info commandstats: unexpected line %q", line)
		}
		if name != "info" {
			out[name] = n
		}
	}
	out["client|list"] -= listed
	return out, nil
}

// activeOthers returns the clients of other databases that ran a command
// within the last since (CLIENT LIST's idle is in whole seconds), by id
// with their database.
func (r *redisCounter) activeOthers(ctx context.Context, since time.Duration) (map[int64]int, error) {
	r.mu.Lock()
	list, err := r.rdb.ClientList(ctx).Result()
	r.listed++
	r.mu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("redis client list: %w", err)
	}
	out := map[int64]int{}
	for _, line := range strings.Split(list, "\n") {
		f := map[string]string{}
		for _, kv := range strings.Fields(line) {
			k, v, _ := strings.Cut(kv, "=")
			f[k] = v
		}
		id, err1 := strconv.ParseInt(f["id"], 10, 64)
		db, err2 := strconv.Atoi(f["db"])
		idle, err3 := strconv.Atoi(f["idle"])
		if err1 == nil && err2 == nil && err3 == nil && id != r.id && db != r.db &&
			time.Duration(idle)*time.Second < since {
			out[id] = db
		}
	}
	return out, nil
}

// window measures the cost of a phase, from its first request until close.
type window struct {
	b      *bench
	start  time.Time
	cpu    time.Duration
	before map[string]int64
	stopCh chan struct{}
	polls  sync.WaitGroup
	others map[int64]int         // clients of other databases seen active, by id
	flush  map[string][2]float64 // the flusher's step times when it opened
	// groups are the processes followed, procs their CPU time when it
	// opened, busy and total the machine's (readMachineCPU)
	groups      map[string][]int
	procs       map[string]time.Duration
	busy, total time.Duration
}

// openWindow reads tally's CPU time and Redis's counts and, until close,
// looks for other clients of Redis every half second.
func (b *bench) openWindow(ctx context.Context) *window {
	w := &window{b: b, start: time.Now(), stopCh: make(chan struct{}), others: map[int64]int{},
		groups: processGroups(b.srv.PID())}
	if s, err := readProc(b.srv.PID()); err == nil {
		w.cpu = s.cpu
	}
	w.procs = groupsCPU(w.groups)
	w.busy, w.total, _ = readMachineCPU()
	w.flush, _ = b.flushTimes(ctx)
	if b.redis == nil {
		return w
	}
	var err error
	if w.before, err = b.redis.commands(ctx); err != nil {
		logf("%v: no Redis counts for this phase", err)
		return w
	}
	w.polls.Go(func() {
		t := time.NewTicker(500 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-w.stopCh:
				return
			case <-t.C:
			}
			w.pollOthers(ctx)
		}
	})
	return w
}

func (w *window) pollOthers(ctx context.Context) {
	active, err := w.b.redis.activeOthers(ctx, time.Since(w.start))
	if err != nil {
		return
	}
	for id, db := range active {
		w.others[id] = db
	}
}

// close ends the window and returns what the server spent in it.
func (w *window) close(ctx context.Context) cost {
	c := cost{span: time.Since(w.start), procs: map[string]time.Duration{}}
	if s, err := readProc(w.b.srv.PID()); err == nil {
		c.cpu = s.cpu - w.cpu
	}
	for g, t := range groupsCPU(w.groups) {
		c.procs[g] = t - w.procs[g]
	}
	if busy, total, err := readMachineCPU(); err == nil && w.total > 0 {
		c.busy, c.capacity = busy-w.busy, total-w.total
	}
	if after, err := w.b.flushTimes(ctx); err == nil && w.flush != nil {
		c.flush = flushLine(w.flush, after)
	}
	if w.before == nil {
		return c
	}
	close(w.stopCh)
	w.polls.Wait()
	w.pollOthers(ctx)
	after, err := w.b.redis.commands(ctx)
	if err != nil {
		logf("%v: no Redis counts for this phase", err)
		return c
	}
	c.commands = map[string]int64{}
	for name, n := range after {
		if d := n - w.before[name]; d > 0 {
			c.commands[name] = d
		}
	}
	clients := map[int]int{}
	for _, db := range w.others {
		clients[db]++
	}
	for _, db := range slices.Sorted(maps.Keys(clients)) {
		c.others = append(c.others, fmt.Sprintf("db %d: %d clients", db, clients[db]))
	}
	return c
}

// waitFlushed waits, at most 30 s, until the server's write buffer has
// committed every record it took: the flusher is then done with their
// batches, Redis included (it forgets a batch's applied set after the
// insert, so ClickHouse holding every row is not quite the end).
func (b *bench) waitFlushed(ctx context.Context) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		written, flushed, err := b.bufferCounts(ctx)
		if err == nil && flushed >= written {
			return nil
		}
		if err == nil {
			err = fmt.Errorf("%.0f of %.0f records committed", flushed, written)
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("waiting for the server's write buffer: %w", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// bufferCounts reads the write buffer's record counters from GET /metrics.
func (b *bench) bufferCounts(ctx context.Context) (written, flushed float64, err error) {
	m, err := b.scrape(ctx)
	if err != nil {
		return 0, 0, err
	}
	written, ok1 := m["tally_buffer_written_records_total"]
	flushed, ok2 := m["tally_buffer_flushed_records_total"]
	if !ok1 || !ok2 {
		return 0, 0, fmt.Errorf("GET /metrics: no write buffer counters")
	}
	return written, flushed, nil
}

// scrape reads the server's GET /metrics: each sample by its name and
// labels as written (`name{label="value"}`).
func (b *bench) scrape(ctx context.Context) (map[string]float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.srv.URL+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	if tok := lookupEnv(b.srv.Env, "TALLY_METRICS_TOKEN"); tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /metrics: %s", resp.Status)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			return nil, fmt.Errorf("GET /metrics: %q: %w", line, err)
		}
		out[line[:i]] = v
	}
	return out, sc.Err()
}

// flushSteps are the flusher's steps, in order (tally_flush_step_duration_seconds).
var flushSteps = []string{"resolve", "build", "events", "sessions", "bot_events", "engagements", "revenue", "commit"}

// flushTimes reads, per flusher step, the seconds spent and the batches
// that took it.
func (b *bench) flushTimes(ctx context.Context) (map[string][2]float64, error) {
	m, err := b.scrape(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string][2]float64{}
	for _, step := range flushSteps {
		label := `{step="` + step + `"}`
		out[step] = [2]float64{m["tally_flush_step_duration_seconds_sum"+label], m["tally_flush_step_duration_seconds_count"+label]}
	}
	return out, nil
}

// flushLine describes the flusher's time per batch by step, from the growth
// of its step histogram over a window.
func flushLine(before, after map[string][2]float64) string {
	var parts []string
	batches := 0.0
	for _, step := range flushSteps {
		sum, n := after[step][0]-before[step][0], after[step][1]-before[step][1]
		if n <= 0 {
			continue
		}
		if step == "commit" {
			batches = n
		}
		parts = append(parts, fmt.Sprintf("%s %.1f ms", step, 1000*sum/n))
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("%.0f batches; mean per batch: %s", batches, strings.Join(parts, ", "))
}

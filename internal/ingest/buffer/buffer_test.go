package buffer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/ingest/session"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/testenv"
	"github.com/tally-analytics/tally/internal/wal"
)

// memSink is an in-memory ClickHouse: it stores rows, can be told to fail,
// and answers the existence queries from what it holds.
type memSink struct {
	mu       sync.Mutex
	events   []model.EventRow
	sessions []model.SessionRow
	bots     []model.BotEventRow
	// engagements are the scroll depths stored
	engagements []model.EngagementRow
	inserts     int
	// failing makes inserts into the named tables fail
	failing map[string]bool
}

func (m *memSink) fail(table string, on bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.failing == nil {
		m.failing = map[string]bool{}
	}
	m.failing[table] = on
}

func (m *memSink) check(ctx context.Context, table string) error {
	if err := ctx.Err(); err != nil { // like a network call, a done context fails it
		return err
	}
	if m.failing[table] {
		return fmt.Errorf("%s: connection refused", table)
	}
	m.inserts++
	return nil
}

func (m *memSink) InsertEvents(ctx context.Context, _ string, rows []model.EventRow) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.check(ctx, "events"); err != nil {
		return err
	}
	m.events = append(m.events, rows...)
	return nil
}

func (m *memSink) InsertSessions(ctx context.Context, _ string, rows []model.SessionRow) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.check(ctx, "sessions"); err != nil {
		return err
	}
	m.sessions = append(m.sessions, rows...)
	return nil
}

// EndInsert: an insert into memory is over when it returns.
func (m *memSink) EndInsert(ctx context.Context, _ string) error { return ctx.Err() }

func (m *memSink) InsertBotEvents(ctx context.Context, _ string, rows []model.BotEventRow) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.check(ctx, "bot_events"); err != nil {
		return err
	}
	m.bots = append(m.bots, rows...)
	return nil
}

func (m *memSink) InsertEngagements(ctx context.Context, _ string, rows []model.EngagementRow) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.check(ctx, "engagements"); err != nil {
		return err
	}
	m.engagements = append(m.engagements, rows...)
	return nil
}

func (m *memSink) ExistingEventIDs(ctx context.Context, table string, _ model.Span, ids []string) (map[string]bool, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	have := map[string]bool{}
	switch table {
	case "events":
		for _, e := range m.events {
			have[e.EventID] = true
		}
	case "engagements":
		for _, g := range m.engagements {
			have[g.EventID] = true
		}
	default:
		for _, e := range m.bots {
			have[e.EventID] = true
		}
	}
	found := map[string]bool{}
	for _, id := range ids {
		if have[id] {
			found[id] = true
		}
	}
	return found, nil
}

func (m *memSink) ExistingSessionRows(ctx context.Context, _ model.Span, _ []uint64) (map[model.SessionRowKey]bool, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	found := map[model.SessionRowKey]bool{}
	for _, s := range m.sessions {
		found[s.Key()] = true
	}
	return found, nil
}

func (m *memSink) counts() (events, sessions, bots int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.events), len(m.sessions), len(m.bots)
}

// assertExactlyOnce checks that every event id 0..n-1 is stored once.
func (m *memSink) assertExactlyOnce(t *testing.T, n int) {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	seen := map[string]int{}
	for _, e := range m.events {
		seen[e.EventID]++
	}
	for i := range n {
		if c := seen[fmt.Sprint("e", i)]; c != 1 {
			t.Errorf("event e%d stored %d times, want once", i, c)
		}
	}
	if len(m.events) != n {
		t.Errorf("%d events stored, want %d", len(m.events), n)
	}
	rows := map[model.SessionRowKey]int{}
	for _, s := range m.sessions {
		rows[s.Key()]++
	}
	for k, c := range rows {
		if c != 1 {
			t.Errorf("session row %+v stored %d times", k, c)
		}
	}
}

func record(i int) model.Record {
	ts := time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Second)
	return model.Record{
		Event: &model.EventRow{SiteID: "s1", Timestamp: ts, EventID: fmt.Sprint("e", i), Name: "pageview", VisitorID: uint64(i)},
	}
}

// testSessions resolves sessions on the test's own Redis keys.
func testSessions(t *testing.T) *session.Manager {
	rdb, prefix := testenv.Redis(t)
	return session.NewManager(rdb, prefix)
}

// noRevenue is a ledger that must not be called.
type noRevenue struct{ t *testing.T }

func (n noRevenue) RecordTracked(context.Context, model.Site, string, time.Time, uint64, string, int64, string, *model.Touch, bool) error {
	n.t.Error("revenue recorded for events without revenue")
	return nil
}

func openBuffer(t *testing.T, dir string, sink Sink, rows int, every time.Duration) *Buffer {
	t.Helper()
	return openWith(t, Options{Dir: dir, FlushRows: rows, FlushEvery: every, DrainTimeout: 2 * time.Second,
		SegmentBytes: 1 << 20}, sink)
}

func openWith(t *testing.T, opts Options, sink Sink) *Buffer {
	t.Helper()
	opts.Log = testenv.Logger(t)
	b, err := Open(opts, sink, testSessions(t), noRevenue{t})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// run starts the flusher and returns a function that stops it and closes b.
func run(t *testing.T, b *Buffer) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.Run(ctx) }()
	return func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
		b.Close()
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestConcurrentWritesReachTheSinkOnce(t *testing.T) {
	sink := &memSink{}
	b := openBuffer(t, t.TempDir(), sink, 100, 20*time.Millisecond)
	stop := run(t, b)
	const n = 2000
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := w; i < n; i += 8 {
				if err := b.Write(context.Background(), record(i)); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	waitFor(t, "all events flushed", func() bool { e, _, _ := sink.counts(); return e == n })
	stop()
	sink.assertExactlyOnce(t, n)
	if _, s, _ := sink.counts(); s != n {
		t.Errorf("%d session rows, want one new session per visitor (%d)", s, n)
	}
	if st := b.Stats(); st.Written != n || st.Flushed != n {
		t.Errorf("stats %+v, want %d written and flushed", st, n)
	}
}

func TestFlushesOnSizeAndOnTime(t *testing.T) {
	sink := &memSink{}
	b := openBuffer(t, t.TempDir(), sink, 10, time.Hour)
	stop := run(t, b)
	for i := range 25 {
		if err := b.Write(context.Background(), record(i)); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "two full batches", func() bool { e, _, _ := sink.counts(); return e == 20 })
	time.Sleep(50 * time.Millisecond)
	if e, _, _ := sink.counts(); e != 20 {
		t.Errorf("%d events flushed before the interval, want 20 (two full batches)", e)
	}
	stop() // the drain flushes the last 5
	sink.assertExactlyOnce(t, 25)

	sink2 := &memSink{}
	b2 := openBuffer(t, t.TempDir(), sink2, 10_000, 30*time.Millisecond)
	stop2 := run(t, b2)
	defer stop2()
	if err := b2.Write(context.Background(), record(0)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a lone event flushed on time", func() bool { e, _, _ := sink2.counts(); return e == 1 })
}

func TestOpenNeedsFlushSettings(t *testing.T) {
	for _, opts := range []Options{{FlushEvery: time.Second}, {FlushRows: 10}} {
		opts.Dir = t.TempDir()
		if b, err := Open(opts, &memSink{}, testSessions(t), noRevenue{t}); err == nil {
			b.Close()
			t.Errorf("Open(FlushRows %d, FlushEvery %s) = nil error, want one", opts.FlushRows, opts.FlushEvery)
		}
	}
}

func TestSinkDownKeepsAcceptingAndLosesNothing(t *testing.T) {
	sink := &memSink{}
	sink.fail("sessions", true) // events go in, sessions fail: a half-done batch
	b := openBuffer(t, t.TempDir(), sink, 50, 10*time.Millisecond)
	stop := run(t, b)
	for i := range 300 {
		if err := b.Write(context.Background(), record(i)); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(200 * time.Millisecond)
	if st := b.Stats(); st.Flushed != 0 || st.FlushFailures == 0 {
		t.Errorf("while down: %+v, want nothing flushed and failures counted", st)
	}
	sink.fail("sessions", false)
	waitFor(t, "backlog drained", func() bool { _, s, _ := sink.counts(); return s == 300 })
	stop()
	sink.assertExactlyOnce(t, 300)
}

func TestFullLogAnswersUnavailable(t *testing.T) {
	sink := &memSink{}
	sink.fail("events", true)
	b := openWith(t, Options{Dir: t.TempDir(), FlushRows: 10, FlushEvery: time.Millisecond, SegmentBytes: 1 << 20,
		MaxBytes: 2 << 20, DrainTimeout: 100 * time.Millisecond}, sink)
	stop := run(t, b)
	defer stop()
	var full error
	for i := 0; i < 100_000 && full == nil; i += 100 {
		recs := make([]model.Record, 100)
		for k := range recs {
			recs[k] = record(i + k)
		}
		full = b.WriteMany(context.Background(), recs)
	}
	var e *errs.Error
	if !errors.As(full, &e) || e.Kind != errs.Unavailable || e.RetryAfter <= 0 {
		t.Fatalf("writing past the budget: %v, want Unavailable with Retry-After", full)
	}
}

// A restart frees the log segments ClickHouse already has before it
// accepts anything: a smaller disk budget than the log's size on disk
// applies at once instead of refusing every event.
func TestOpenFreesCommittedSegments(t *testing.T) {
	dir := t.TempDir()
	sink := &memSink{}
	b := openWith(t, Options{Dir: dir, FlushRows: 500, FlushEvery: time.Millisecond, SegmentBytes: 64 << 20}, sink)
	stop := run(t, b)
	pad := strings.Repeat("x", 1000)
	const n = 5000 // ~5 MB of records in one segment
	for i := range n {
		rec := record(i)
		rec.Event.Pathname = "/" + pad
		if err := b.Write(context.Background(), rec); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "all flushed", func() bool { return b.Stats().Flushed == n })
	stop()
	var size int64
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if info, err := e.Info(); err == nil && strings.HasSuffix(e.Name(), ".wal") {
			size += info.Size()
		}
	}
	if size < 2<<20 {
		t.Fatalf("the log holds %d bytes on disk; the test needs more than its new budget", size)
	}

	b2 := openWith(t, Options{Dir: dir, FlushRows: 500, FlushEvery: time.Millisecond, SegmentBytes: 1 << 20,
		MaxBytes: 2 << 20}, sink)
	defer b2.Close()
	if err := b2.Write(context.Background(), record(n)); err != nil {
		t.Fatalf("after a restart with a 2 MiB budget and %d bytes of committed log: %v", size, err)
	}
}

// The log and checkpoint of an earlier release — records carrying the
// session rows computed on acceptance, checkpoint.json with a batch in
// flight whose first event is already stored — are finished by this one:
// every event and session row once, the old checkpoint replaced.
func TestUpgradeFinishesAnEarlierLog(t *testing.T) {
	dir := t.TempDir()
	l, err := wal.Open(wal.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	var payloads [][]byte
	var recs []model.Record
	for i := range 3 {
		rec := record(i)
		ts := rec.Event.Timestamp
		rec.Event.SessionID = uint64(100 + i)
		rec.Sessions = []model.SessionRow{{SiteID: "s1", SessionID: uint64(100 + i), VisitorID: uint64(i), Sign: 1, Version: 1,
			Start: ts, End: ts, Pageviews: 1, IsBounce: true}}
		data, err := json.Marshal(rec) // the JSON records of the earliest releases
		if err != nil {
			t.Fatal(err)
		}
		payloads, recs = append(payloads, data), append(recs, rec)
	}
	if _, err := l.AppendBatch(context.Background(), payloads); err != nil {
		t.Fatal(err)
	}
	end := l.Durable()
	l.Close()
	old, _ := json.Marshal(map[string]any{"committed": wal.Position{Segment: 1}, "in_flight": end})
	if err := os.WriteFile(filepath.Join(dir, "checkpoint.json"), old, 0o600); err != nil {
		t.Fatal(err)
	}
	sink := &memSink{}
	sink.events = append(sink.events, *recs[0].Event) // the batch in flight got this far
	sink.sessions = append(sink.sessions, recs[0].Sessions...)

	b := openBuffer(t, dir, sink, 100, 10*time.Millisecond)
	stop := run(t, b)
	waitFor(t, "the old batch finished", func() bool { e, _, _ := sink.counts(); return e == 3 })
	stop()
	sink.assertExactlyOnce(t, 3)
	if _, s, _ := sink.counts(); s != 3 {
		t.Errorf("%d session rows, want the 3 the records carried", s)
	}
	if _, err := os.Stat(filepath.Join(dir, "checkpoint.json")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the old checkpoint is still there: %v", err)
	}
}

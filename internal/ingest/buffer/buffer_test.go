package buffer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/model"
)

// memSink is an in-memory ClickHouse: it stores rows, can be told to fail,
// and answers the existence queries from what it holds.
type memSink struct {
	mu       sync.Mutex
	events   []model.EventRow
	sessions []model.SessionRow
	bots     []model.BotEventRow
	inserts  int
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

func (m *memSink) InsertEvents(ctx context.Context, rows []model.EventRow) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.check(ctx, "events"); err != nil {
		return err
	}
	m.events = append(m.events, rows...)
	return nil
}

func (m *memSink) InsertSessions(ctx context.Context, rows []model.SessionRow) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.check(ctx, "sessions"); err != nil {
		return err
	}
	m.sessions = append(m.sessions, rows...)
	return nil
}

func (m *memSink) InsertBotEvents(ctx context.Context, rows []model.BotEventRow) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.check(ctx, "bot_events"); err != nil {
		return err
	}
	m.bots = append(m.bots, rows...)
	return nil
}

func (m *memSink) ExistingEventIDs(ctx context.Context, table string, _ model.Span, ids []string) (map[string]bool, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	have := map[string]bool{}
	if table == "events" {
		for _, e := range m.events {
			have[e.EventID] = true
		}
	} else {
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
		Sessions: []model.SessionRow{{SiteID: "s1", SessionID: uint64(i + 1), VisitorID: uint64(i), Sign: 1, Version: 1,
			Start: ts, End: ts, Pageviews: 1}},
	}
}

func openBuffer(t *testing.T, dir string, sink Sink, rows int, every time.Duration) *Buffer {
	t.Helper()
	b, err := Open(Options{Dir: dir, FlushRows: rows, FlushEvery: every, DrainTimeout: 2 * time.Second,
		SegmentBytes: 1 << 20, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}, sink)
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

func TestRestartReplaysOnlyWhatIsNotStored(t *testing.T) {
	dir := t.TempDir()
	sink := &memSink{}
	sink.fail("events", true)
	b := openBuffer(t, dir, sink, 1000, 10*time.Millisecond)
	for i := range 100 {
		if err := b.Write(context.Background(), record(i)); err != nil {
			t.Fatal(err)
		}
	}
	// Simulate a crash in the middle of an insert: the checkpoint says a batch
	// was in flight and ClickHouse already holds part of it.
	end := b.log.Durable()
	if err := b.saveCheckpoint(checkpoint{Committed: b.cp.Committed, InFlight: &end}); err != nil {
		t.Fatal(err)
	}
	b.Close()
	for i := range 40 {
		r := record(i)
		sink.events = append(sink.events, *r.Event)
		if i < 20 {
			sink.sessions = append(sink.sessions, r.Sessions...)
		}
	}
	sink.fail("events", false)

	b2 := openBuffer(t, dir, sink, 1000, 10*time.Millisecond)
	stop := run(t, b2)
	for i := 100; i < 150; i++ {
		if err := b2.Write(context.Background(), record(i)); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "replay and new events", func() bool { e, _, _ := sink.counts(); return e >= 150 })
	stop()
	sink.assertExactlyOnce(t, 150)

	// A clean restart replays nothing.
	before := sink.inserts
	b3 := openBuffer(t, dir, sink, 1000, 10*time.Millisecond)
	stop3 := run(t, b3)
	time.Sleep(50 * time.Millisecond)
	stop3()
	if sink.inserts != before {
		t.Errorf("a clean restart inserted again (%d inserts, want %d)", sink.inserts, before)
	}
	sink.assertExactlyOnce(t, 150)
}

func TestFullLogAnswersUnavailable(t *testing.T) {
	sink := &memSink{}
	sink.fail("events", true)
	b, err := Open(Options{Dir: t.TempDir(), FlushRows: 10, FlushEvery: time.Millisecond, SegmentBytes: 1 << 20,
		MaxBytes: 2 << 20, DrainTimeout: 100 * time.Millisecond, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}, sink)
	if err != nil {
		t.Fatal(err)
	}
	stop := run(t, b)
	defer stop()
	var full error
	for i := 0; i < 100_000 && full == nil; i++ {
		full = b.Write(context.Background(), record(i))
	}
	var e *errs.Error
	if !errors.As(full, &e) || e.Kind != errs.Unavailable || e.RetryAfter <= 0 {
		t.Fatalf("writing past the budget: %v, want Unavailable with Retry-After", full)
	}
}

// A stop request that arrives while a crash replay runs does not cut it
// short: the replay and the drain both finish within DrainTimeout.
func TestStopDuringReplayStillDrains(t *testing.T) {
	dir := t.TempDir()
	sink := &memSink{}
	b := openBuffer(t, dir, sink, 1000, 10*time.Millisecond)
	for i := range 120 {
		if err := b.Write(context.Background(), record(i)); err != nil {
			t.Fatal(err)
		}
	}
	mid := b.log.Durable()
	if err := b.saveCheckpoint(checkpoint{Committed: b.cp.Committed, InFlight: &mid}); err != nil {
		t.Fatal(err)
	}
	b.Close()

	b2 := openBuffer(t, dir, sink, 50, 10*time.Millisecond)
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // stopped before it even started
	if err := b2.Run(ctx); err != nil {
		t.Fatalf("Run: %v", err)
	}
	b2.Close()
	sink.assertExactlyOnce(t, 120)
}

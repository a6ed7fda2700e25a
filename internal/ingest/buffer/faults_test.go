package buffer

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tally-analytics/tally/internal/chstore"
	"github.com/tally-analytics/tally/internal/ingest/session"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/testenv"
	"github.com/tally-analytics/tally/internal/wal"
)

// The fault suite: a batch is stopped at every point of the flush protocol
// as a crash would stop it (the flusher returns on the spot, the files are
// closed, nothing else runs), or an insert fails half-way, or its
// acknowledgement is lost, or ClickHouse is down during the replay; then a
// new Buffer on the same directory finishes the work. Every case must end
// with exactly the rows worked out below in the real ClickHouse, and with
// Redis states that continue those sessions.
//
// The scenario (site s1, 2026-05-04 10:00 UTC = T):
//
//	batch 1: visitors 1-4 view /p1 at T+v seconds (4 sessions of 1 pageview).
//	batch 2: visitors 1-4 view /p2 at T+60+v (60 s on /p1) and send Signup at
//	         T+70+v (visitor 1's with 49.00 USD of revenue); visitor 5 views
//	         /p1 at T+80; two bots.
//	batch 3 (checks Redis): visitor 1 views /p3 at T+90.
//
// Expected: 14 events (10 pageviews, 4 Signups), 2 bot events; 5 sessions
// with sum(sign) 1 each: visitor 1 at 3 pageviews and 1 custom event
// (version 4: one per event), visitors 2-4 at 2 pageviews and 1 custom
// event, visitor 5 at 1 pageview; 4 pageviews after 60 s on /p1 and one
// after 29 s on /p2 (T+61 to T+90); one payment of 4900 USD, attributed to
// Google via /p1.
var faultT = time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)

func faultEvent(id string, at time.Duration, visitor uint64, name, path string) model.Record {
	return model.Record{Event: &model.EventRow{SiteID: "s1", Timestamp: faultT.Add(at), EventID: id, Name: name,
		VisitorID: visitor, Pathname: path, Attribution: model.Attribution{ReferrerSource: "Google", SourceType: "search"}}}
}

func faultBatches() [3][]model.Record {
	var b [3][]model.Record
	for v := uint64(1); v <= 4; v++ {
		b[0] = append(b[0], faultEvent(fmt.Sprint("a", v), time.Duration(v)*time.Second, v, "pageview", "/p1"))
	}
	for v := uint64(1); v <= 4; v++ {
		b[1] = append(b[1], faultEvent(fmt.Sprint("b", v), time.Duration(60+v)*time.Second, v, "pageview", "/p2"))
		signup := faultEvent(fmt.Sprint("c", v), time.Duration(70+v)*time.Second, v, "Signup", "/p2")
		if v == 1 {
			signup.Event.RevenueAmount, signup.Event.RevenueCurrency, signup.BaseCurrency = 4900, "USD", "USD"
		}
		b[1] = append(b[1], signup)
	}
	b[1] = append(b[1], faultEvent("d5", 80*time.Second, 5, "pageview", "/p1"))
	for i := range 2 {
		b[1] = append(b[1], model.Record{Bot: &model.BotEventRow{SiteID: "s1", Timestamp: faultT.Add(85 * time.Second),
			EventID: fmt.Sprint("bot", i), Reason: "crawler"}})
	}
	for v := uint64(1); v <= 2; v++ {
		b[1] = append(b[1], model.Record{Engagement: &model.EngagementRow{SiteID: "s1", Timestamp: faultT.Add(86 * time.Second),
			EventID: fmt.Sprint("g", v), VisitorID: v, Pathname: "/p2", ScrollDepth: uint8(40 * v)}})
	}
	b[2] = []model.Record{faultEvent("e1", 90*time.Second, 1, "pageview", "/p3")}
	return b
}

var errCrash = errors.New("crash")

// faultySink is the real ClickHouse store with faults on demand.
type faultySink struct {
	*chstore.Store
	mu    sync.Mutex
	down  bool                 // every call fails before reaching ClickHouse
	once  map[string]string    // table → fault of its next insert: "half", "lost", "fail", "late"
	block map[string]chan bool // table → its next insert waits for a value (true: then fail)
	// late are inserts still writing after their client gave up, by id:
	// EndInsert waits for them, as KILL QUERY … SYNC waits for a query
	late map[string]chan struct{}
}

func (s *faultySink) setDown(down bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.down = down
}

func (s *faultySink) fault(table, kind string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.once[table] = kind
}

// insert runs a table's insert with its fault: n rows, send(k) inserts the
// first k.
func (s *faultySink) insert(ctx context.Context, id, table string, n int, send func(k int) error) error {
	s.mu.Lock()
	down, kind, wait := s.down, s.once[table], s.block[table]
	delete(s.once, table)
	delete(s.block, table)
	s.mu.Unlock()
	if down {
		return errors.New("dial tcp: connection refused")
	}
	if wait != nil {
		if failAfter := <-wait; failAfter {
			if err := send(n); err != nil {
				return err
			}
			return errors.New("read: connection reset by peer")
		}
	}
	switch kind {
	case "half":
		if err := send(n / 2); err != nil {
			return err
		}
		return errors.New("read: connection reset by peer")
	case "lost":
		if err := send(n); err != nil {
			return err
		}
		return errors.New("read: i/o timeout")
	case "fail":
		return errors.New("write: broken pipe")
	case "late": // the client times out; the server stores the rows 300 ms later
		done := make(chan struct{})
		s.mu.Lock()
		s.late[id] = done
		s.mu.Unlock()
		go func() {
			time.Sleep(300 * time.Millisecond)
			send(n) //nolint:errcheck // a late insert's outcome is for the lookup to find
			close(done)
		}()
		return context.DeadlineExceeded
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return send(n)
}

func (s *faultySink) InsertEvents(ctx context.Context, id string, rows []model.EventRow) error {
	return s.insert(ctx, id, "events", len(rows), func(k int) error {
		return s.Store.InsertEvents(context.WithoutCancel(ctx), id, rows[:k])
	})
}

func (s *faultySink) InsertSessions(ctx context.Context, id string, rows []model.SessionRow) error {
	return s.insert(ctx, id, "sessions", len(rows), func(k int) error {
		// a partial insert stores whole sessions (a session's rows share a part)
		for k > 0 && k < len(rows) && rows[k].SessionID == rows[k-1].SessionID {
			k++
		}
		return s.Store.InsertSessions(context.WithoutCancel(ctx), id, rows[:k])
	})
}

func (s *faultySink) InsertBotEvents(ctx context.Context, id string, rows []model.BotEventRow) error {
	return s.insert(ctx, id, "bot_events", len(rows), func(k int) error {
		return s.Store.InsertBotEvents(context.WithoutCancel(ctx), id, rows[:k])
	})
}

func (s *faultySink) InsertEngagements(ctx context.Context, id string, rows []model.EngagementRow) error {
	return s.insert(ctx, id, "engagements", len(rows), func(k int) error {
		return s.Store.InsertEngagements(context.WithoutCancel(ctx), id, rows[:k])
	})
}

func (s *faultySink) EndInsert(ctx context.Context, id string) error {
	if s.isDown() {
		return errors.New("dial tcp: connection refused")
	}
	s.mu.Lock()
	done := s.late[id]
	s.mu.Unlock()
	if done != nil {
		<-done
	}
	return s.Store.EndInsert(ctx, id)
}

func (s *faultySink) ExistingEventIDs(ctx context.Context, table string, span model.Span, ids []string) (map[string]bool, error) {
	if s.isDown() {
		return nil, errors.New("dial tcp: connection refused")
	}
	return s.Store.ExistingEventIDs(ctx, table, span, ids)
}

func (s *faultySink) ExistingSessionRows(ctx context.Context, span model.Span, sessions []uint64) (map[model.SessionRowKey]bool, error) {
	if s.isDown() {
		return nil, errors.New("dial tcp: connection refused")
	}
	return s.Store.ExistingSessionRows(ctx, span, sessions)
}

func (s *faultySink) isDown() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.down
}

// ledger is the payments ledger as the buffer sees it: one payment per
// event id, whatever the number of calls.
type ledger struct {
	mu       sync.Mutex
	payments map[string]*model.Touch
	down     bool
}

func (l *ledger) RecordTracked(_ context.Context, site model.Site, eventID string, _ time.Time, _ uint64, _ string,
	amount int64, currency string, hint *model.Touch, _ bool) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.down {
		return errors.New("postgres: connection refused")
	}
	if site.BaseCurrency != "USD" || amount != 4900 || currency != "USD" {
		return fmt.Errorf("unexpected payment %v %d %s", site, amount, currency)
	}
	if _, ok := l.payments[eventID]; !ok {
		l.payments[eventID] = hint
	}
	return nil
}

// rig is one fault case: a WAL directory, ClickHouse database, Redis prefix
// and ledger that outlive the Buffers opened on them.
type rig struct {
	t     *testing.T
	drain time.Duration // DrainTimeout of the next Buffers
	every time.Duration // FlushEvery of the next Buffers (default an hour: batches are cut by size)
	// changed are the numbers a case changes in the scenario's expectations
	changed map[string]int64
	dir     string
	sink    *faultySink
	ch      *chstore.Store
	sess    *session.Manager
	ledger  *ledger
}

func newRig(t *testing.T) *rig {
	ch, _ := testenv.ClickHouse(t)
	rdb, prefix := testenv.Redis(t)
	return &rig{t: t, dir: t.TempDir(), ch: ch, sess: session.NewManager(rdb, prefix), drain: 5 * time.Second,
		sink: &faultySink{Store: ch, once: map[string]string{}, block: map[string]chan bool{},
			late: map[string]chan struct{}{}},
		ledger: &ledger{payments: map[string]*model.Touch{}}}
}

// open opens a Buffer whose batches hold rows records; crashAt stops it at
// the nth time (1-based) it reaches point.
func (r *rig) open(rows int, point string, nth int) *Buffer {
	r.t.Helper()
	b, err := Open(Options{Dir: r.dir, FlushRows: rows, FlushEvery: cmp.Or(r.every, time.Hour), SegmentBytes: 1 << 20,
		InsertTimeout: 5 * time.Second, DrainTimeout: r.drain, Log: testenv.Logger(r.t)}, r.sink, r.sess, r.ledger)
	if err != nil {
		r.t.Fatal(err)
	}
	seen := 0
	b.hooks.at = func(p string) error {
		if p == point {
			if seen++; seen == nth {
				return errCrash
			}
		}
		return nil
	}
	return b
}

func (r *rig) write(b *Buffer, recs []model.Record) {
	r.t.Helper()
	if err := b.WriteMany(context.Background(), recs); err != nil {
		r.t.Fatal(err)
	}
}

// runTo runs b until it has committed every record written so far or
// crashed; it closes b and says whether it crashed.
func (r *rig) runTo(b *Buffer) (crashed bool) {
	r.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.Run(ctx) }()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case err := <-done:
			cancel()
			b.Close()
			if !errors.Is(err, errCrash) {
				r.t.Fatalf("Run returned %v, want the crash", err)
			}
			return true
		case <-deadline:
			r.t.Fatalf("the buffer did not commit its log: %+v", b.Stats())
		case <-time.After(5 * time.Millisecond):
		}
		if b.caughtUp() {
			break
		}
	}
	cancel()
	err := <-done
	b.Close()
	switch {
	case errors.Is(err, errCrash):
		// the crash of a point after the commit ("committed") may come
		// after the log is seen caught up
		return true
	case err != nil:
		r.t.Fatalf("Run: %v", err)
	}
	return false
}

// otherInstance takes rec through a Buffer of its own (another instance of
// the deployment: same ClickHouse, Redis and ledger, its own log).
func (r *rig) otherInstance(rec model.Record) {
	r.t.Helper()
	other, err := Open(Options{Dir: r.t.TempDir(), FlushRows: 1, FlushEvery: time.Hour, Log: testenv.Logger(r.t)},
		r.sink, r.sess, r.ledger)
	if err != nil {
		r.t.Fatal(err)
	}
	r.write(other, []model.Record{rec})
	r.runTo(other)
}

// count runs a query that returns one number, named n.
func (r *rig) count(q string) int64 {
	r.t.Helper()
	var n int64
	if err := r.ch.QueryRow(context.Background(), "SELECT toInt64(n) FROM ("+q+")").Scan(&n); err != nil {
		r.t.Fatalf("%s: %v", q, err)
	}
	return n
}

// check holds ClickHouse and the ledger to the scenario's numbers, before
// and after forcing the sessions' collapsing merge.
func (r *rig) check() { r.checkWith(nil) }

// checkWith is check with some numbers changed (or added) by a case.
func (r *rig) checkWith(changed map[string]int64) {
	r.t.Helper()
	want := map[string]int64{
		"SELECT count() AS n FROM events":                                                         14,
		"SELECT uniqExact(event_id) AS n FROM events":                                             14,
		"SELECT count() AS n FROM bot_events":                                                     2,
		"SELECT uniqExact(event_id) AS n FROM bot_events":                                         2,
		"SELECT count() AS n FROM engagements":                                                    2,
		"SELECT sum(scroll_depth) AS n FROM engagements":                                          120,
		"SELECT count() AS n FROM events WHERE session_id = 0":                                    0,
		"SELECT uniqExact(session_id) AS n FROM events":                                           5,
		"SELECT sum(time_on_prev) AS n FROM events WHERE prev_pathname = '/p1'":                   240,
		"SELECT countIf(prev_pathname = '/p2' AND time_on_prev = 29) AS n FROM events":            1,
		"SELECT count() AS n FROM (SELECT session_id FROM sessions GROUP BY session_id)":          5,
		"SELECT countIf(s != 1) AS n FROM (SELECT sum(sign) s FROM sessions GROUP BY session_id)": 0,
		"SELECT sum(sign * pageviews) AS n FROM sessions":                                         10,
		"SELECT sum(sign * events) AS n FROM sessions":                                            4,
		"SELECT sum(sign * pageviews) AS n FROM sessions WHERE visitor_id = 1":                    3,
		"SELECT max(version) AS n FROM sessions WHERE visitor_id = 1":                             4,
		// every session's pageviews are the pageviews stored with its id
		"SELECT count() AS n FROM (SELECT session_id, sum(sign * pageviews) pv FROM sessions GROUP BY session_id) AS session_rows " +
			"ALL FULL OUTER JOIN (SELECT session_id, countIf(name = 'pageview') epv FROM events GROUP BY session_id) AS event_rows " +
			"USING session_id WHERE pv != epv": 0,
	}
	for q, n := range changed {
		want[q] = n
	}
	for pass := range 2 {
		for q, n := range want {
			if got := r.count(q); got != n {
				r.t.Errorf("pass %d: %s = %d, want %d", pass, q, got, n)
			}
		}
		if err := r.ch.OptimizeFinal(context.Background(), "sessions"); err != nil {
			r.t.Fatal(err)
		}
	}
	if got := r.count("SELECT count() AS n FROM sessions"); got != 5 {
		r.t.Errorf("after the collapsing merge the sessions table holds %d rows, want 5 (one state per session)", got)
	}
	r.ledger.mu.Lock()
	defer r.ledger.mu.Unlock()
	if hint, ok := r.ledger.payments["c1"]; len(r.ledger.payments) != 1 || !ok || hint == nil || hint.Source != "Google" || hint.EntryPage != "/p1" {
		r.t.Errorf("ledger %v, want visitor 1's Signup once, attributed to Google via /p1", r.ledger.payments)
	}
}

// scenario runs batch 1, then batch 2 with fault set up before it, then
// batch 3, reopening the buffer after every crash.
func (r *rig) scenario(point string, nth int, fault func(), afterCrash func()) {
	r.t.Helper()
	batches := faultBatches()
	b := r.open(len(batches[0]), "", 0)
	r.write(b, batches[0])
	if r.runTo(b) {
		r.t.Fatal("batch 1 crashed")
	}
	b = r.open(len(batches[1]), point, nth)
	r.write(b, batches[1])
	if fault != nil {
		fault()
	}
	crashed := r.runTo(b)
	if point != "" && !crashed {
		r.t.Fatalf("the case never reached %s #%d", point, nth)
	}
	if crashed {
		if want, ok := whereAfter[point]; ok {
			if got, err := Where(r.dir); err != nil || got != want {
				r.t.Errorf("after a crash at %s, Where = %q, %v; want %q", point, got, err, want)
			}
		}
	}
	if crashed && afterCrash != nil {
		afterCrash()
	}
	for crashed {
		b = r.open(len(batches[1]), "", 0)
		crashed = r.runTo(b)
	}
	b = r.open(len(batches[2]), "", 0)
	r.write(b, batches[2])
	r.runTo(b)
	r.checkWith(r.changed)
}

// whereAfter is what Where says after a crash at a point of the protocol.
var whereAfter = map[string]string{"plan": "between batches", "planned": "planned, resolving sessions",
	"resolved": "planned, resolving sessions", "events": "at the inserts", "events:done": "at the inserts",
	"sessions": "at the inserts", "bot_events:done": "at the inserts", "engagements": "at the inserts",
	"engagements:done": "at the inserts", "revenue": "at the inserts",
	"commit": "at the inserts", "committed": "between batches"}

// A crash at each point of the protocol, on the batch that continues
// sessions, adds bots, scroll depths and revenue.
func TestCrashAtEveryStep(t *testing.T) {
	points := []string{"plan", "planned", "resolved", "events", "events:done", "sessions", "sessions:done",
		"bot_events", "bot_events:done", "engagements", "engagements:done", "revenue", "commit", "committed"}
	for _, p := range points {
		t.Run(p, func(t *testing.T) { newRig(t).scenario(p, 1, nil, nil) })
	}
}

// Inserts that fail half-way (part of the rows stored) or whose
// acknowledgement is lost (all stored, the client told otherwise), then a
// crash before the retry.
func TestCrashAfterAFailedInsert(t *testing.T) {
	for _, table := range []string{"events", "sessions", "bot_events", "engagements"} {
		for _, kind := range []string{"half", "lost", "fail"} {
			t.Run(table+"/"+kind, func(t *testing.T) {
				r := newRig(t)
				r.scenario(table+":failed", 1, func() { r.sink.fault(table, kind) }, nil)
			})
		}
	}
}

// The same failures without a crash: the flusher's own retry finds what
// the failed attempt stored — also when it stored it after its client gave
// up ("late": the retry must end that insert before it looks).
func TestRetryAfterAFailedInsert(t *testing.T) {
	for _, table := range []string{"events", "sessions", "bot_events", "engagements"} {
		for _, kind := range []string{"half", "lost", "late"} {
			t.Run(table+"/"+kind, func(t *testing.T) {
				r := newRig(t)
				r.scenario("", 0, func() { r.sink.fault(table, kind) }, nil)
			})
		}
	}
}

// The collapsing merge runs between the crash and the replay: the cancel
// rows of the interrupted batch have collapsed with the states they cancel,
// and must not be written again.
func TestReplayAfterSessionsCollapsed(t *testing.T) {
	r := newRig(t)
	r.scenario("sessions:done", 1, nil, func() {
		if err := r.ch.OptimizeFinal(context.Background(), "sessions"); err != nil {
			t.Fatal(err)
		}
		if n := r.count("SELECT count() AS n FROM sessions"); n != 5 {
			t.Fatalf("after the merge %d session rows, want 5", n)
		}
	})
}

// ClickHouse is down when the interrupted batch is replayed: nothing is
// dropped while the lookups fail, and the batch completes once it is back.
func TestReplayWhileClickHouseIsDown(t *testing.T) {
	for _, p := range []string{"events", "events:done", "sessions", "sessions:done"} {
		t.Run(p, func(t *testing.T) {
			r := newRig(t)
			r.scenario(p, 1, nil, func() {
				r.sink.setDown(true)
				r.drain = 200 * time.Millisecond
				b := r.open(11, "", 0)
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan error, 1)
				go func() { done <- b.Run(ctx) }()
				time.Sleep(400 * time.Millisecond) // several failed lookups and inserts
				if st := b.Stats(); st.FlushFailures == 0 || st.Flushed != 0 {
					t.Errorf("while ClickHouse is down: %+v", st)
				}
				cancel() // a stop while down: the batch stays for the next start
				if err := <-done; err != nil {
					t.Errorf("Run: %v", err)
				}
				b.Close()
				r.sink.setDown(false)
				r.drain = 5 * time.Second
			})
		})
	}
}

// The replay of an interrupted batch is itself interrupted, at a later
// step, then finished by a third start. A batch's inserts run at once, so
// a crash at one of them leaves the others landed or not; the replay's
// point is one it reaches either way (the insert the first crash came
// before, or a step after the inserts).
func TestReplayInterruptedAgain(t *testing.T) {
	cases := [][2]string{{"planned", "resolved"}, {"events", "events:done"}, {"sessions", "sessions:done"},
		{"sessions:done", "revenue"}, {"events:done", "commit"}}
	for _, c := range cases {
		t.Run(c[0]+"/"+c[1], func(t *testing.T) {
			r := newRig(t)
			r.scenario(c[0], 1, nil, func() {
				b := r.open(11, c[1], 1)
				if !r.runTo(b) {
					t.Fatalf("the replay never reached %s", c[1])
				}
			})
		})
	}
}

// A stop that arrives while an insert runs does not cancel it: the insert
// completes, the batch commits, nothing is sent twice.
func TestStopDuringAnInsert(t *testing.T) {
	for _, failAfter := range []bool{false, true} {
		t.Run(fmt.Sprint("ack lost ", failAfter), func(t *testing.T) {
			r := newRig(t)
			batches := faultBatches()
			b := r.open(len(batches[0]), "", 0)
			r.write(b, batches[0])
			r.runTo(b)

			b = r.open(len(batches[1]), "", 0)
			release := make(chan bool)
			r.sink.mu.Lock()
			r.sink.block["sessions"] = release
			r.sink.mu.Unlock()
			r.write(b, batches[1])
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- b.Run(ctx) }()
			waitFor(t, "the sessions insert to start", func() bool {
				r.sink.mu.Lock()
				defer r.sink.mu.Unlock()
				return r.sink.block["sessions"] == nil
			})
			cancel() // SIGTERM
			time.Sleep(100 * time.Millisecond)
			release <- failAfter
			if err := <-done; err != nil {
				t.Fatalf("Run: %v", err)
			}
			if !b.caughtUp() {
				t.Errorf("after the drain the checkpoint is %+v, want everything committed", b.cp)
			}
			b.Close()
			b = r.open(len(batches[2]), "", 0)
			r.write(b, batches[2])
			r.runTo(b)
			r.check()
		})
	}
}

// Postgres (the payments ledger) is down: the batch waits for it rather
// than lose the revenue, and commits once it is back.
func TestLedgerDownWaits(t *testing.T) {
	r := newRig(t)
	r.ledger.down = true
	go func() {
		time.Sleep(500 * time.Millisecond)
		r.ledger.mu.Lock()
		r.ledger.down = false
		r.ledger.mu.Unlock()
	}()
	r.scenario("", 0, nil, nil)
}

// Another instance continues a session from the interrupted batch's state
// before the replay, and the collapsing merge removes the batch's state row
// with that instance's cancel of it: the replay must see that the batch
// landed (a newer version exists, no lone cancel), not write it again.
func TestReplayAfterAnotherInstanceContinued(t *testing.T) {
	r := newRig(t)
	// o1 adds a pageview to visitor 1's session (19 s after /p2 at T+61),
	// and batch 3's /p3 comes 10 s after it.
	r.changed = map[string]int64{
		"SELECT count() AS n FROM events":                                                 15,
		"SELECT uniqExact(event_id) AS n FROM events":                                     15,
		"SELECT countIf(prev_pathname = '/p2' AND time_on_prev = 29) AS n FROM events":    0,
		"SELECT countIf(prev_pathname = '/p2' AND time_on_prev = 19) AS n FROM events":    1,
		"SELECT countIf(prev_pathname = '/other' AND time_on_prev = 10) AS n FROM events": 1,
		"SELECT sum(sign * pageviews) AS n FROM sessions":                                 11,
		"SELECT sum(sign * pageviews) AS n FROM sessions WHERE visitor_id = 1":            4,
		"SELECT max(version) AS n FROM sessions WHERE visitor_id = 1":                     5,
	}
	r.scenario("sessions:done", 1, nil, func() {
		r.otherInstance(faultEvent("o1", 80*time.Second, 1, "pageview", "/other"))
		if err := r.ch.OptimizeFinal(context.Background(), "sessions"); err != nil {
			t.Fatal(err)
		}
		if n := r.count("SELECT count() AS n FROM sessions WHERE visitor_id = 1"); n != 1 {
			t.Fatalf("visitor 1 has %d session rows after the merge, want 1 (the other instance's state)", n)
		}
	})
}

// Another instance moves a visitor on between the batch's read of the
// states and its compare-and-set: the batch computes that visitor again and
// writes its plan anew — and crashes right then. The restart replays from
// the plan before (its written states are in the batch's applied set) and ends on
// the same rows as if nothing had happened but the other instance's event.
func TestCrashWhileReplanning(t *testing.T) {
	r := newRig(t)
	// o1 (T+80) reaches visitor 1's session first; the batch's /p2 (T+61)
	// then continues it at T+80 (a session never goes back in time): 79 s
	// on /p1, 0 s on /other, and batch 3's /p3 10 s after.
	r.changed = map[string]int64{
		"SELECT count() AS n FROM events":                                                15,
		"SELECT uniqExact(event_id) AS n FROM events":                                    15,
		"SELECT sum(time_on_prev) AS n FROM events WHERE prev_pathname = '/p1'":          259,
		"SELECT countIf(prev_pathname = '/p2' AND time_on_prev = 29) AS n FROM events":   0,
		"SELECT countIf(prev_pathname = '/p2' AND time_on_prev = 10) AS n FROM events":   1,
		"SELECT countIf(prev_pathname = '/other' AND time_on_prev = 0) AS n FROM events": 1,
		"SELECT sum(sign * pageviews) AS n FROM sessions":                                11,
		"SELECT sum(sign * pageviews) AS n FROM sessions WHERE visitor_id = 1":           4,
		"SELECT max(version) AS n FROM sessions WHERE visitor_id = 1":                    5,
	}
	batches := faultBatches()
	b := r.open(len(batches[0]), "", 0)
	r.write(b, batches[0])
	r.runTo(b)

	b = r.open(len(batches[1]), "plan", 2) // the second plan of batch 2: after the conflict
	planned := 0
	crash := b.hooks.at
	b.hooks.at = func(p string) error {
		if p == "planned" {
			if planned++; planned == 1 { // states read, none written: the other instance acts now
				r.otherInstance(faultEvent("o1", 80*time.Second, 1, "pageview", "/other"))
			}
		}
		return crash(p)
	}
	r.write(b, batches[1])
	if !r.runTo(b) {
		t.Fatal("the batch never wrote a second plan")
	}
	if got, err := Where(r.dir); err != nil || got != "planned, resolving sessions" {
		t.Errorf("after the crash: %q, %v", got, err)
	}
	for r.runTo(r.open(len(batches[1]), "", 0)) {
	}
	b = r.open(len(batches[2]), "", 0)
	r.write(b, batches[2])
	r.runTo(b)
	r.checkWith(r.changed)
}

// The next batch is resolved while one is stored: a crash with batch 2 at
// its events insert and batch 3 planned (and its states written) leaves two
// plans, and the restart finishes both, in order, to the scenario's rows.
func TestCrashWithTheNextBatchResolved(t *testing.T) {
	for _, point := range []string{"planned", "resolved"} {
		t.Run(point, func(t *testing.T) {
			r := newRig(t)
			batches := faultBatches()
			b := r.open(len(batches[0]), "", 0)
			r.write(b, batches[0])
			r.runTo(b)

			// batch 2's events insert waits until batch 3 (cut after 100 ms)
			// reaches the point; the crash comes there
			r.every = 100 * time.Millisecond
			release := make(chan bool)
			r.sink.mu.Lock()
			r.sink.block["events"] = release
			r.sink.mu.Unlock()
			b = r.open(len(batches[1]), point, 2)
			crash := b.hooks.at
			b.hooks.at = func(p string) error {
				err := crash(p)
				if err != nil {
					go func() { release <- false }() // the insert then lands; batch 2 stops after it
				}
				return err
			}
			r.write(b, batches[1])
			r.write(b, batches[2])
			if !r.runTo(b) {
				t.Fatal("batch 3 never reached the point")
			}
			if got, err := Where(r.dir); err != nil || got != "at the inserts" {
				t.Errorf("after the crash: %q, %v; want batch 2 at its inserts", got, err)
			}
			if plans, _, err := readPlans(r.dir, 1); err != nil || plans[2] == nil || plans[3] == nil {
				t.Errorf("after the crash the plans are %v, %v; want batch 2's and batch 3's", plans, err)
			}
			for r.runTo(r.open(len(batches[1]), "", 0)) {
			}
			r.check()
			if n := r.count("SELECT count() AS n FROM events WHERE event_id = 'e1' AND prev_pathname = '/p2' AND time_on_prev = 29"); n != 1 {
				t.Errorf("batch 3's pageview stored %d times after /p2, want once", n)
			}
		})
	}
}

// A torn plan file reads as no plan; of two whole versions of a batch's
// plan, the newer counts; the next batch's plan goes to other files; plans
// of committed batches do not count; a plan an earlier release left in its
// files counts until its batch is committed.
func TestPlanFiles(t *testing.T) {
	dir := t.TempDir()
	b := &Buffer{opts: Options{Dir: dir}}
	if err := b.createPlanFiles(); err != nil {
		t.Fatal(err)
	}
	if p, stale, err := readPlans(dir, 0); len(p) != 0 || len(stale) != 0 || err != nil {
		t.Fatalf("empty plan files read as %+v, %v, %v", p, stale, err)
	}
	snap := &session.Snapshot{Tag: 9, States: []session.Stored{{Site: "s1", Visitor: 1, Value: []byte("x")}}}
	for rev := uint64(1); rev <= 2; rev++ {
		if err := b.writePlan(plan{Seq: 4, Rev: rev, End: wal.Position{Segment: 1, Offset: 99}, Snapshot: snap}); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.writePlan(plan{Seq: 5, Rev: 1, End: wal.Position{Segment: 1, Offset: 120}, Snapshot: snap}); err != nil {
		t.Fatal(err)
	}
	plans, _, err := readPlans(dir, 3)
	if p := plans[4]; err != nil || p == nil || p.Rev != 2 || p.End.Offset != 99 || p.Snapshot.Tag != 9 || len(p.Snapshot.States) != 1 {
		t.Fatalf("read %+v, %v", p, err)
	}
	if p := plans[5]; len(plans) != 2 || p == nil || p.Rev != 1 || p.End.Offset != 120 {
		t.Fatalf("batch 5's plan read as %+v (of %d plans)", p, len(plans))
	}
	if plans, _, _ := readPlans(dir, 4); len(plans) != 1 || plans[5] == nil {
		t.Errorf("after batch 4 committed, the plans are %v, want batch 5's", plans)
	}
	// tear the newer: the older revision counts
	path := b.planPath(planSlot(4, 2))
	data, _ := os.ReadFile(path)
	if err := os.WriteFile(path, data[:len(data)-3], 0o600); err != nil {
		t.Fatal(err)
	}
	if plans, _, err := readPlans(dir, 3); err != nil || plans[4] == nil || plans[4].Rev != 1 || plans[5] == nil {
		t.Errorf("with the newer plan torn: %+v, %v; want revision 1 of batch 4, and batch 5's", plans, err)
	}
	// an earlier release's plan of batch 6, in its own file
	legacy := &Buffer{opts: Options{Dir: t.TempDir()}}
	if err := legacy.writePlan(plan{Seq: 6, Rev: 3, End: wal.Position{Segment: 2, Offset: 7}, Snapshot: snap}); err != nil {
		t.Fatal(err)
	}
	data, _ = os.ReadFile(legacy.planPath(planSlot(6, 3)))
	if err := os.WriteFile(filepath.Join(dir, legacyPlanNames[1]), data, 0o600); err != nil {
		t.Fatal(err)
	}
	if plans, stale, err := readPlans(dir, 5); err != nil || plans[6] == nil || plans[6].Rev != 3 || len(stale) != 0 {
		t.Errorf("with a legacy plan of batch 6: %+v, stale %v, %v", plans, stale, err)
	}
	if _, stale, _ := readPlans(dir, 6); len(stale) != 1 || filepath.Base(stale[0]) != legacyPlanNames[1] {
		t.Errorf("after batch 6 committed, stale legacy files %v, want %s", stale, legacyPlanNames[1])
	}
}

// A batch that starts where a segment ended (the log rotated between two
// batches) is interrupted at an insert; the next start frees that segment,
// and is itself stopped (ClickHouse down) before it writes a checkpoint of
// its own. The start after must still find the batch: the checkpoint must
// not name a place in a segment that is gone.
func TestRestartTwiceAfterASegmentEnd(t *testing.T) {
	r := newRig(t)
	long := "/" + strings.Repeat("x", 200_000) // five records fill most of a 1 MiB segment
	batch := func(round int) []model.Record {
		var recs []model.Record
		for v := uint64(1); v <= 5; v++ {
			recs = append(recs, faultEvent(fmt.Sprint("r", round, "v", v), time.Duration(round*60+int(v))*time.Second, v, "pageview", long))
		}
		return recs
	}
	// one run: batch 2 starts at the end of segment 1 (its first record
	// opened segment 2), and stops at its events insert
	b := r.open(5, "events", 2)
	r.write(b, batch(0))
	r.write(b, batch(1))
	if !r.runTo(b) {
		t.Fatal("batch 2 never reached its events insert")
	}
	r.sink.setDown(true)
	r.drain = 200 * time.Millisecond
	b = r.open(5, "", 0)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.Run(ctx) }()
	time.Sleep(300 * time.Millisecond)
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("the first restart: %v", err)
	}
	b.Close()
	r.sink.setDown(false)
	r.runTo(r.open(5, "", 0))
	for q, want := range map[string]int64{
		"SELECT count() AS n FROM events":                                                         10,
		"SELECT uniqExact(event_id) AS n FROM events":                                             10,
		"SELECT countIf(s != 1) AS n FROM (SELECT sum(sign) s FROM sessions GROUP BY session_id)": 0,
		"SELECT sum(sign * pageviews) AS n FROM sessions":                                         10,
		"SELECT uniqExact(session_id) AS n FROM events":                                           5,
	} {
		if got := r.count(q); got != want {
			t.Errorf("%s = %d, want %d", q, got, want)
		}
	}
}

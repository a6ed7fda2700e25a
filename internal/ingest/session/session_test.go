package session_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"

	"github.com/tally-analytics/tally/internal/ingest/session"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/realtime"
	"github.com/tally-analytics/tally/internal/testenv"
)

// resolver resolves batches against the test's Redis and keeps the last
// snapshot it was asked to persist.
type resolver struct {
	t     *testing.T
	m     *session.Manager
	saved *session.Snapshot
	saves int
}

func newResolver(t *testing.T, rdb redis.Cmdable, prefix string) *resolver {
	return &resolver{t: t, m: session.NewManager(rdb, prefix)}
}

func (r *resolver) persist(s *session.Snapshot) error {
	data, err := s.AppendBinary(nil)
	if err != nil {
		return err
	}
	var back session.Snapshot // what a restart would read
	if err := back.UnmarshalBinary(data); err != nil {
		return err
	}
	r.saved, r.saves = &back, r.saves+1
	return nil
}

// batch resolves evs as one new batch.
func (r *resolver) batch(evs ...*model.EventRow) session.Outcome {
	r.t.Helper()
	out, _, err := r.m.Resolve(context.Background(), evs, nil, r.persist)
	if err != nil {
		r.t.Fatal(err)
	}
	r.m.MarkActive(context.Background(), out) // as the write buffer does
	return out
}

var t0 = time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)

// ev is an event of visitor 42 on site s1 at t0+at; path "" makes it a
// custom event.
func ev(id string, at time.Duration, path string, attr model.Attribution) *model.EventRow {
	e := &model.EventRow{SiteID: "s1", Timestamp: t0.Add(at), EventID: id, VisitorID: 42, Pathname: path,
		Name: model.PageviewName, Attribution: attr}
	if path == "" {
		e.Name, e.Pathname = "Signup", "/b"
	}
	return e
}

func sid(t *testing.T, out session.Outcome, i int) uint64 {
	t.Helper()
	return out.Events[i].SessionID
}

func TestSessionLifecycle(t *testing.T) {
	rdb, prefix := testenv.Redis(t)
	r := newResolver(t, rdb, prefix)
	attr := model.Attribution{ReferrerSource: "Google", SourceType: "search", Device: "Mobile"}

	// The first pageview starts a session: a state row, no cancel.
	out := r.batch(ev("e1", 0, "/a", attr))
	s1 := sid(t, out, 0)
	want := model.SessionRow{SiteID: "s1", SessionID: s1, VisitorID: 42, Sign: 1, Version: 1, Start: t0, End: t0,
		Pageviews: 1, IsBounce: true, EntryPage: "/a", ExitPage: "/a", Attribution: attr}
	if diff := cmp.Diff([]model.SessionRow{want}, out.Rows); diff != "" {
		t.Errorf("first batch (-want +got):\n%s", diff)
	}
	if s1 == 0 || *out.Events[0].Attribution != attr || out.Events[0].Entry != "/a" {
		t.Errorf("first event assigned %+v", out.Events[0])
	}

	// A second pageview 40 s later continues it: cancel v1, state v2, 40 s on /a.
	later := model.Attribution{ReferrerSource: "Twitter"} // ignored: attribution is fixed at the start
	out = r.batch(ev("e2", 40*time.Second, "/b", later))
	cancel := want
	cancel.Sign = -1
	want2 := model.SessionRow{SiteID: "s1", SessionID: s1, VisitorID: 42, Sign: 1, Version: 2, Start: t0,
		End: t0.Add(40 * time.Second), Pageviews: 2, EntryPage: "/a", ExitPage: "/b", Attribution: attr}
	if diff := cmp.Diff([]model.SessionRow{cancel, want2}, out.Rows); diff != "" {
		t.Errorf("second batch (-want +got):\n%s", diff)
	}
	if a := out.Events[0]; a.SessionID != s1 || a.PrevPath != "/a" || a.TimeOnPrev != 40 || *a.Attribution != attr {
		t.Errorf("second event assigned %+v, want session %d after 40 s on /a with the first event's attribution", a, s1)
	}

	// A custom event is not a pageview and makes the session interactive.
	out = r.batch(ev("e3", 50*time.Second, "", attr))
	if st := out.Rows[1]; st.Pageviews != 2 || st.Events != 1 || st.ExitPage != "/b" || st.Version != 3 || st.IsBounce {
		t.Errorf("after custom event: %+v", st)
	}
	if out.Events[0].PrevPath != "" {
		t.Error("a custom event must not carry time on page")
	}

	// 30 minutes of inactivity end the session: exactly 30 min continues, more starts anew.
	out = r.batch(ev("e4", 50*time.Second+30*time.Minute, "/c", attr))
	if sid(t, out, 0) != s1 {
		t.Errorf("30 min idle exactly: session %d, want %d continued", sid(t, out, 0), s1)
	}
	out = r.batch(ev("e5", 50*time.Second+60*time.Minute+time.Second, "/d", attr))
	if s5 := sid(t, out, 0); s5 == s1 || len(out.Rows) != 1 || out.Rows[0].Version != 1 || out.Rows[0].EntryPage != "/d" {
		t.Errorf("after 30 min idle: %+v, want a new session's first state only", out.Rows)
	}
}

// A batch writes one cancel row per session it continues and one row per
// session's final state, whatever the number of its events: the same
// sessions as event-by-event batches, in fewer rows.
func TestBatchCollapsesItsSessions(t *testing.T) {
	rdb, prefix := testenv.Redis(t)
	attr := model.Attribution{ReferrerSource: "Google"}
	events := func() []*model.EventRow {
		return []*model.EventRow{ev("b1", 0, "/a", attr), ev("b2", time.Minute, "/b", attr),
			ev("b3", 2*time.Minute, "", attr), ev("b4", 3*time.Hour, "/x", attr), ev("b5", 3*time.Hour+time.Second, "/y", attr)}
	}
	one := newResolver(t, rdb, prefix+"one:")
	one.batch(ev("b0", -time.Minute, "/start", attr)) // a session the batch continues
	whole := one.batch(events()...)

	each := newResolver(t, rdb, prefix+"each:")
	each.batch(ev("b0", -time.Minute, "/start", attr))
	var perEvent []session.Assigned
	var last []model.SessionRow
	for _, e := range events() {
		out := each.batch(e)
		perEvent = append(perEvent, out.Events[0])
		last = append(last, out.Rows...)
	}
	if diff := cmp.Diff(perEvent, whole.Events); diff != "" {
		t.Errorf("events assigned differently in one batch (-each +whole):\n%s", diff)
	}
	// The whole batch: cancel of the first session's state before the batch
	// (v1), its state after (v4: 3 more events), and the second session (v2).
	s1, s2 := perEvent[0].SessionID, perEvent[3].SessionID
	if len(whole.Rows) != 3 || whole.Rows[0].Sign != -1 || whole.Rows[0].Version != 1 || whole.Rows[0].SessionID != s1 ||
		whole.Rows[1].Version != 4 || whole.Rows[1].Pageviews != 3 || whole.Rows[1].Events != 1 ||
		whole.Rows[2].SessionID != s2 || whole.Rows[2].Version != 2 || whole.Rows[2].Pageviews != 2 {
		t.Errorf("rows of the whole batch: %+v", whole.Rows)
	}
	// The sessions sum to the same states as event by event.
	sums := func(rows []model.SessionRow) map[uint64][2]int {
		m := map[uint64][2]int{}
		for _, r := range rows {
			s := m[r.SessionID]
			s[0] += int(r.Sign)
			s[1] += int(r.Sign) * int(r.Pageviews)
			m[r.SessionID] = s
		}
		return m
	}
	first := []model.SessionRow{{SessionID: s1, Sign: 1, Pageviews: 1}} // b0's state, written before both runs
	if diff := cmp.Diff(sums(append(first, last...)), sums(append(first, whole.Rows...))); diff != "" {
		t.Errorf("sum(sign), sum(sign*pageviews) per session (-each +whole):\n%s", diff)
	}
}

func TestSessionMaxLength(t *testing.T) {
	rdb, prefix := testenv.Redis(t)
	r := newResolver(t, rdb, prefix)
	// A pageview every 20 minutes: the session may not pass 24 hours.
	var first uint64
	for i := 0; i <= 72; i++ {
		out := r.batch(ev(fmt.Sprint("m", i), time.Duration(i)*20*time.Minute, "/", model.Attribution{}))
		if i == 0 {
			first = sid(t, out, 0)
		}
		if got := sid(t, out, 0); i < 72 && got != first {
			t.Fatalf("pageview %d (%v after start) began session %d", i, time.Duration(i)*20*time.Minute, got)
		} else if i == 72 && got == first {
			t.Error("at 24 h the session was continued, want a new one")
		}
	}
}

// Instances resolving the same visitor at once never build on the same
// state: each version is handed out once (the losers of a compare-and-set
// compute again from the winner's state).
func TestConcurrentInstancesAreSerialised(t *testing.T) {
	rdb, prefix := testenv.Redis(t)
	const n = 30
	var wg sync.WaitGroup
	versions := make(chan uint32, n)
	for i := range n {
		wg.Go(func() {
			m := session.NewManager(rdb, prefix) // an instance of its own
			out, _, err := m.Resolve(context.Background(), []*model.EventRow{ev(fmt.Sprint("c", i), 0, "/", model.Attribution{})},
				nil, func(*session.Snapshot) error { return nil })
			if err != nil {
				t.Error(err)
				return
			}
			versions <- out.Rows[len(out.Rows)-1].Version
		})
	}
	wg.Wait()
	close(versions)
	seen := map[uint32]bool{}
	for v := range versions {
		if seen[v] {
			t.Errorf("version %d handed out twice", v)
		}
		seen[v] = true
	}
	for v := uint32(1); v <= n; v++ {
		if !seen[v] {
			t.Errorf("version %d missing", v)
		}
	}
}

// A batch replayed after a restart from its stored snapshot computes the
// same outcome and does not apply itself twice, whether its states were
// written before the restart or not, and even when another instance has
// already continued from them.
func TestReplayIsExact(t *testing.T) {
	rdb, prefix := testenv.Redis(t)
	attr := model.Attribution{ReferrerSource: "Google"}
	r := newResolver(t, rdb, prefix)
	r.batch(ev("r0", 0, "/a", attr))
	batch := []*model.EventRow{ev("r1", time.Minute, "/b", attr), ev("r2", 2*time.Minute, "/c", attr)}
	first := r.batch(batch...)
	snap := r.saved

	replay := func() session.Outcome {
		out, _, err := r.m.Resolve(context.Background(), batch, snap, r.persist)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	again := replay()
	if diff := cmp.Diff([]any{first.Rows, first.Events}, []any{again.Rows, again.Events}); diff != "" {
		t.Errorf("replay after the states were written (-first +replay):\n%s", diff)
	}
	// Another instance continues the session from the batch's state; the
	// replay must neither overwrite that nor count its events again.
	// Another instance continues the session from the batch's state, many
	// times over; the replay must neither overwrite that nor count its
	// events again.
	other := newResolver(t, rdb, prefix)
	for i := range 6 {
		next := other.batch(ev(fmt.Sprint("r", 3+i), time.Duration(3+i)*time.Minute, "/d", attr))
		if next.Rows[1].Version != uint32(4+i) || next.Rows[1].Pageviews != uint32(4+i) {
			t.Fatalf("the other instance's state: %+v", next.Rows[1])
		}
	}
	if diff := cmp.Diff(first.Rows, replay().Rows); diff != "" {
		t.Errorf("replay after another instance moved on (-first +replay):\n%s", diff)
	}
	after := other.batch(ev("r9", 9*time.Minute, "/e", attr))
	if after.Rows[1].Version != 10 {
		t.Errorf("a replay changed the stored state: the next event got version %d, want 10", after.Rows[1].Version)
	}
	// Once the batch's outcome is recorded, its record of written states
	// goes.
	r.m.Forget(context.Background(), snap)
	if n := rdb.Exists(context.Background(), prefix+"applied:"+strconv.FormatUint(snap.Tag, 16)).Val(); n != 0 {
		t.Error("the batch's applied set is still there")
	}
}

// A snapshot persisted but never applied (a crash before the states were
// written) replays by writing them.
func TestReplayWritesWhatACrashLeftUnwritten(t *testing.T) {
	rdb, prefix := testenv.Redis(t)
	r := newResolver(t, rdb, prefix)
	r.batch(ev("u0", 0, "/a", model.Attribution{}))
	crash := func(s *session.Snapshot) error { r.persist(s); return fmt.Errorf("crash") }
	batch := []*model.EventRow{ev("u1", time.Minute, "/b", model.Attribution{})}
	if _, _, err := r.m.Resolve(context.Background(), batch, nil, crash); err == nil {
		t.Fatal("the crash was not reported")
	}
	out, _, err := r.m.Resolve(context.Background(), batch, r.saved, r.persist)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Rows) != 2 || out.Rows[1].Version != 2 {
		t.Fatalf("replay rows %+v", out.Rows)
	}
	next := r.batch(ev("u2", 2*time.Minute, "/c", model.Attribution{}))
	if next.Rows[1].Version != 3 {
		t.Errorf("after the replay the next event got version %d, want 3", next.Rows[1].Version)
	}
}

// With Redis down, a new batch is resolved at once without sessions, and
// its snapshot says so (a replay gives the same answer); a snapshot that
// expects writes never degrades.
// With Redis down a batch is not resolved, and nothing is persisted: it
// waits, to get its sessions once Redis answers.
func TestRedisDownWaits(t *testing.T) {
	down := redis.NewClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t)), MaxRetries: -1})
	defer down.Close()
	r := newResolver(t, down, "x:")
	ctx := context.Background()
	if _, _, err := r.m.Resolve(ctx, []*model.EventRow{ev("d1", 0, "/a", model.Attribution{})}, nil, r.persist); err == nil || r.saves != 0 {
		t.Errorf("a new batch with Redis down: err %v, %d snapshots persisted; want an error and none", err, r.saves)
	}
	snap := &session.Snapshot{Tag: 7}
	if _, _, err := r.m.Resolve(ctx, []*model.EventRow{ev("d2", 0, "/a", model.Attribution{})}, snap, r.persist); err == nil {
		t.Error("a replay that must write states succeeded with Redis down")
	}
}

// A state an earlier release kept as a hash reads as no state: the
// visitor starts a new session, and the key is replaced.
func TestEarlierStateStartsANewSession(t *testing.T) {
	rdb, prefix := testenv.Redis(t)
	key := prefix + "s:s1:42"
	if err := rdb.HSet(context.Background(), key, "sid", "5", "ver", "3").Err(); err != nil {
		t.Fatal(err)
	}
	r := newResolver(t, rdb, prefix)
	out := r.batch(ev("h1", 0, "/a", model.Attribution{}))
	if len(out.Rows) != 1 || out.Rows[0].Version != 1 || out.Rows[0].SessionID == 5 {
		t.Errorf("rows %+v, want a new session", out.Rows)
	}
	if n := rdb.Exists(context.Background(), key).Val(); n != 0 {
		t.Error("the earlier release's key is still there")
	}
}

func TestRealtimeMarksActiveVisitors(t *testing.T) {
	rdb, prefix := testenv.Redis(t)
	r := newResolver(t, rdb, prefix)
	reader := realtime.NewReader(rdb, prefix)
	ctx := context.Background()
	at := func(visitor uint64, d time.Duration, path, source string) *model.EventRow {
		e := ev(fmt.Sprint("rt", visitor, d), d, path, model.Attribution{ReferrerSource: source})
		e.VisitorID = visitor
		return e
	}
	r.batch(at(1, 0, "/a", "Google"), at(1, time.Minute, "/b", "Twitter")) // same session: source stays Google
	r.batch(at(2, 2*time.Minute, "/b", "Direct / None"))
	r.batch(at(3, 3*time.Minute, "", "Direct / None")) // a custom event without pageview: its page
	r.batch(at(4, -10*time.Minute, "/old", "Bing"))    // before the window

	snap, err := reader.Active(ctx, "s1", t0.Add(4*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	want := model.Realtime{Visitors: 3,
		Pages:   []model.VisitorCount{{Value: "/b", Visitors: 3}},
		Sources: []model.VisitorCount{{Value: "Direct / None", Visitors: 2}, {Value: "Google", Visitors: 1}}}
	if diff := cmp.Diff(want, snap); diff != "" {
		t.Errorf("snapshot (-want +got):\n%s", diff)
	}
	// Six minutes on, only visitor 3 (seen at +3 min) is still active.
	snap, _ = reader.Active(ctx, "s1", t0.Add(8*time.Minute))
	if snap.Visitors != 1 {
		t.Errorf("later snapshot %+v, want only visitor 3", snap)
	}
	if other, _ := reader.Active(ctx, "s2", t0.Add(4*time.Minute)); other.Visitors != 0 {
		t.Errorf("another site sees %d visitors", other.Visitors)
	}
}

func TestSnapshotEncoding(t *testing.T) {
	s := &session.Snapshot{Tag: 1<<64 - 1, States: []session.Stored{{Site: "s1", Visitor: 1, Value: []byte("abc")},
		{Site: "s2", Visitor: 2}, {Site: "s3", Visitor: 3, Value: []byte{}}}}
	data, err := s.AppendBinary(nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.Size() < len(data) {
		t.Errorf("Size() = %d, less than the %d bytes of the encoding", s.Size(), len(data))
	}
	var got session.Snapshot
	if err := got.UnmarshalBinary(data); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(*s, got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	for n := range len(data) {
		if err := got.UnmarshalBinary(data[:n]); err == nil {
			t.Fatalf("a snapshot cut to %d of %d bytes decoded", n, len(data))
		}
	}
}

// Another instance moves a visitor on between the batch's read and its
// compare-and-set, and storing the recomputed snapshot then fails: the
// snapshot stored before stays exactly as it was stored (a restart computes
// from it), and a replay from it ends where an undisturbed batch would.
func TestAConflictIsStoredBeforeItCounts(t *testing.T) {
	rdb, prefix := testenv.Redis(t)
	r := newResolver(t, rdb, prefix)
	evA, evB := ev("c1", 0, "/a", model.Attribution{}), ev("c2", 0, "/b", model.Attribution{})
	evB.VisitorID = 43
	r.batch(evA, evB) // both visitors have a session
	other := newResolver(t, rdb, prefix)

	var first *session.Snapshot
	var firstCopy []session.Stored
	calls := 0
	persist := func(s *session.Snapshot) error {
		calls++
		if calls == 1 {
			first, firstCopy = s, append([]session.Stored(nil), s.States...)
			other.batch(ev("o1", 30*time.Second, "/o", model.Attribution{})) // visitor 42 moves on
			return nil
		}
		return errors.New("disk full")
	}
	batch := []*model.EventRow{ev("c3", time.Minute, "/c", model.Attribution{}), ev("c4", time.Minute, "/d", model.Attribution{})}
	batch[1].VisitorID = 43
	if _, _, err := r.m.Resolve(context.Background(), batch, nil, persist); err == nil {
		t.Fatal("the failed store of the recomputed snapshot was not reported")
	}
	if diff := cmp.Diff(firstCopy, first.States); diff != "" {
		t.Errorf("the stored snapshot was changed after it was stored (-stored +now):\n%s", diff)
	}
	out, _, err := r.m.Resolve(context.Background(), batch, first, r.persist)
	if err != nil {
		t.Fatal(err)
	}
	// visitor 42: v1 (c1), v2 (o1), v3 (c3); visitor 43: v1 (c2), v2 (c4)
	want := map[uint64]uint32{42: 3, 43: 2}
	for _, row := range out.Rows {
		if row.Sign == 1 && row.Version != want[row.VisitorID] {
			t.Errorf("visitor %d's new state is version %d, want %d", row.VisitorID, row.Version, want[row.VisitorID])
		}
	}
	next := r.batch(ev("c5", 2*time.Minute, "/e", model.Attribution{}))
	if next.Rows[1].Version != 4 || next.Rows[1].Pageviews != 4 {
		t.Errorf("visitor 42 after the replay: %+v, want version 4 with 4 pageviews", next.Rows[1])
	}
}

// bucketed finds where a state is kept: the bucket holding field, or "".
func bucketed(t *testing.T, rdb *redis.Client, prefix, field string) (bucket, value string) {
	t.Helper()
	ctx := context.Background()
	keys, err := rdb.Keys(ctx, prefix+"sb:*").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if v, err := rdb.HGet(ctx, k, field).Result(); err == nil {
			return k, v
		}
	}
	return "", ""
}

// A visitor in the middle of a visit when tally is upgraded keeps its
// session: the state the earlier release kept under a key of its own is
// moved into a bucket before the first batch.
func TestEarlierReleaseStateContinues(t *testing.T) {
	rdb, prefix := testenv.Redis(t)
	ctx := context.Background()
	first := newResolver(t, rdb, prefix).batch(ev("u1", 0, "/a", model.Attribution{}))
	bucket, value := bucketed(t, rdb, prefix, "s1:42")
	if bucket == "" {
		t.Fatal("no bucket holds the state")
	}
	// as the earlier release kept it
	if err := rdb.HDel(ctx, bucket, "s1:42").Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.Set(ctx, prefix+"s:s1:42", value, time.Hour).Err(); err != nil {
		t.Fatal(err)
	}
	out := newResolver(t, rdb, prefix).batch(ev("u2", time.Minute, "/b", model.Attribution{}))
	if sid(t, out, 0) != sid(t, first, 0) {
		t.Errorf("after the upgrade the visitor is in session %d, want %d", sid(t, out, 0), sid(t, first, 0))
	}
	// one cancel of version 1, and version 2 with both pageviews
	if len(out.Rows) != 2 || out.Rows[0].Sign != -1 || out.Rows[1].Version != 2 || out.Rows[1].Pageviews != 2 {
		t.Errorf("rows %+v, want the cancel of version 1 and version 2 with 2 pageviews", out.Rows)
	}
	if rdb.Exists(ctx, prefix+"s:s1:42").Val() != 0 {
		t.Error("the earlier release's key is still there")
	}
}

func TestDeleteSiteForgetsItsStates(t *testing.T) {
	rdb, prefix := testenv.Redis(t)
	r := newResolver(t, rdb, prefix)
	other := ev("o1", 0, "/a", model.Attribution{})
	other.SiteID = "s2"
	r.batch(ev("d1", 0, "/a", model.Attribution{}), other)
	if err := r.m.DeleteSites(context.Background(), []model.SiteID{"s1"}); err != nil {
		t.Fatal(err)
	}
	if b, _ := bucketed(t, rdb, prefix, "s1:42"); b != "" {
		t.Errorf("the deleted site's state is still in %s", b)
	}
	if b, _ := bucketed(t, rdb, prefix, "s2:42"); b == "" {
		t.Error("the other site's state is gone too")
	}
}

// A state is read from the newest bucket holding it, whichever buckets exist
// and whatever an older bucket still holds.
func TestStatesAcrossBuckets(t *testing.T) {
	rdb, prefix := testenv.Redis(t)
	r := newResolver(t, rdb, prefix)
	ctx := context.Background()
	other := ev("o1", 0, "/x", model.Attribution{})
	other.VisitorID = 43
	first := r.batch(ev("b1", 0, "/a", model.Attribution{}), other)
	s1 := sid(t, first, 0)
	bucket, v1 := bucketed(t, rdb, prefix, "s1:42")
	n, err := strconv.ParseInt(strings.TrimPrefix(bucket, prefix+"sb:"), 10, 64)
	if err != nil {
		t.Fatalf("bucket %q: %v", bucket, err)
	}
	older := prefix + "sb:" + strconv.FormatInt(n-1, 10)

	// The state only in the bucket before (the newer one holds visitor 43).
	if err := rdb.HDel(ctx, bucket, "s1:42").Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.HSet(ctx, older, "s1:42", v1).Err(); err != nil {
		t.Fatal(err)
	}
	out := r.batch(ev("b2", 40*time.Second, "/b", model.Attribution{}))
	if sid(t, out, 0) != s1 || len(out.Rows) != 2 || out.Rows[1].Version != 2 || out.Events[0].PrevPath != "/a" {
		t.Fatalf("from the older bucket: session %d rows %+v, want session %d's version 2 after /a", sid(t, out, 0), out.Rows, s1)
	}
	// The state moved on into the newer bucket; the older one keeps version 1.
	if v, err := rdb.HGet(ctx, bucket, "s1:42").Result(); err != nil || v == v1 {
		t.Fatalf("the newer bucket holds %q (%v), want the new state", v, err)
	}
	out = r.batch(ev("b3", 80*time.Second, "/c", model.Attribution{}))
	if sid(t, out, 0) != s1 || len(out.Rows) != 2 || out.Rows[0].Version != 2 || out.Rows[1].Version != 3 || out.Events[0].PrevPath != "/b" {
		t.Errorf("with a stale copy in the older bucket: session %d rows %+v, want version 2 cancelled and 3 after /b", sid(t, out, 0), out.Rows)
	}
}

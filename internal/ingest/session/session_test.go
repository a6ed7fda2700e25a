package session_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tally-analytics/tally/internal/ingest/session"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/realtime"
	"github.com/tally-analytics/tally/internal/testenv"
	"github.com/tally-analytics/tally/pkg/api"
)

func TestSessionLifecycle(t *testing.T) {
	rdb, prefix := testenv.Redis(t)
	m := session.NewManager(rdb, prefix)
	ctx := context.Background()
	t0 := time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)
	attr := model.Attribution{ReferrerSource: "Google", SourceType: "search", Device: "Mobile"}
	touch := func(at time.Time, pageview bool, path string, sid uint64) session.Update {
		t.Helper()
		u, err := m.Touch(ctx, session.Event{Site: "s1", Visitor: 42, Time: at, Pageview: pageview, Path: path,
			Attribution: attr, NewSessionID: sid})
		if err != nil {
			t.Fatal(err)
		}
		return u
	}

	// First pageview starts session 100.
	u := touch(t0, true, "/a", 100)
	if u.Cancel != nil {
		t.Fatal("a new session must not cancel anything")
	}
	want := model.SessionRow{SiteID: "s1", SessionID: 100, VisitorID: 42, Sign: 1, Version: 1, Start: t0, End: t0,
		Pageviews: 1, IsBounce: true, EntryPage: "/a", ExitPage: "/a", Attribution: attr}
	if diff := cmp.Diff(want, u.State); diff != "" {
		t.Errorf("first state (-want +got):\n%s", diff)
	}

	// A second pageview 40 s later continues it: cancel v1, state v2, 40 s on /a.
	later := model.Attribution{ReferrerSource: "Twitter"} // ignored: attribution is fixed at the start
	u2, err := m.Touch(ctx, session.Event{Site: "s1", Visitor: 42, Time: t0.Add(40 * time.Second), Pageview: true,
		Path: "/b", Attribution: later, NewSessionID: 999})
	if err != nil {
		t.Fatal(err)
	}
	cancel := want
	cancel.Sign = -1
	if diff := cmp.Diff(&cancel, u2.Cancel); diff != "" {
		t.Errorf("cancel row (-want +got):\n%s", diff)
	}
	want2 := model.SessionRow{SiteID: "s1", SessionID: 100, VisitorID: 42, Sign: 1, Version: 2, Start: t0,
		End: t0.Add(40 * time.Second), Pageviews: 2, EntryPage: "/a", ExitPage: "/b", Attribution: attr}
	if diff := cmp.Diff(want2, u2.State); diff != "" {
		t.Errorf("second state (-want +got):\n%s", diff)
	}
	if u2.PrevPath != "/a" || u2.TimeOnPrev != 40 {
		t.Errorf("previous page = %q for %ds, want /a for 40s", u2.PrevPath, u2.TimeOnPrev)
	}

	// A custom event is not a pageview and makes the session interactive.
	u3 := touch(t0.Add(50*time.Second), false, "/b", 999)
	if u3.State.Pageviews != 2 || u3.State.Events != 1 || u3.State.ExitPage != "/b" || u3.State.Version != 3 {
		t.Errorf("after custom event: %+v", u3.State)
	}
	if u3.PrevPath != "" {
		t.Error("a custom event must not carry time on page")
	}

	// 30 minutes of inactivity end the session: exactly 30 min continues, more starts anew.
	u4 := touch(t0.Add(50*time.Second+30*time.Minute), true, "/c", 999)
	if u4.State.SessionID != 100 {
		t.Errorf("30 min idle exactly: session %d, want 100 continued", u4.State.SessionID)
	}
	u5 := touch(t0.Add(50*time.Second+60*time.Minute+time.Second), true, "/d", 200)
	if u5.Cancel != nil || u5.State.SessionID != 200 || u5.State.Version != 1 || u5.State.EntryPage != "/d" {
		t.Errorf("after 30 min idle: %+v cancel %v, want a new session 200", u5.State, u5.Cancel)
	}
}

func TestSessionMaxLength(t *testing.T) {
	rdb, prefix := testenv.Redis(t)
	m := session.NewManager(rdb, prefix)
	ctx := context.Background()
	t0 := time.Date(2026, 5, 4, 0, 0, 0, 0, time.UTC)
	var last session.Update
	// A pageview every 20 minutes: the session may not pass 24 hours.
	for i := 0; i <= 72; i++ {
		u, err := m.Touch(ctx, session.Event{Site: "s1", Visitor: 7, Time: t0.Add(time.Duration(i) * 20 * time.Minute),
			Pageview: true, Path: "/", NewSessionID: uint64(1000 + i)})
		if err != nil {
			t.Fatal(err)
		}
		last = u
		if i < 72 && u.State.SessionID != 1000 {
			t.Fatalf("pageview %d (%v after start) began session %d", i, time.Duration(i)*20*time.Minute, u.State.SessionID)
		}
	}
	if last.State.SessionID != 1072 {
		t.Errorf("at 24 h the session was continued (%d), want a new one", last.State.SessionID)
	}
}

func TestConcurrentTouchesAreSerialised(t *testing.T) {
	rdb, prefix := testenv.Redis(t)
	m := session.NewManager(rdb, prefix)
	ctx := context.Background()
	t0 := time.Now().UTC().Truncate(time.Second)
	const n = 50
	var wg sync.WaitGroup
	versions := make(chan uint32, n)
	for i := range n {
		wg.Go(func() {
			u, err := m.Touch(ctx, session.Event{Site: "s1", Visitor: 9, Time: t0, Pageview: true, Path: "/", NewSessionID: uint64(i + 1)})
			if err != nil {
				t.Error(err)
				return
			}
			versions <- u.State.Version
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

func TestRealtimeMarksActiveVisitors(t *testing.T) {
	rdb, prefix := testenv.Redis(t)
	m := session.NewManager(rdb, prefix)
	reader := realtime.NewReader(rdb, prefix)
	ctx := context.Background()
	t0 := time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)
	touch := func(visitor uint64, at time.Time, pageview bool, path, source string) {
		t.Helper()
		_, err := m.Touch(ctx, session.Event{Site: "s1", Visitor: visitor, Time: at, Pageview: pageview, Path: path,
			Attribution: model.Attribution{ReferrerSource: source}, NewSessionID: visitor*100 + uint64(at.Unix()%100)})
		if err != nil {
			t.Fatal(err)
		}
	}
	touch(1, t0, true, "/a", "Google")
	touch(1, t0.Add(time.Minute), true, "/b", "Twitter") // same session: source stays Google
	touch(2, t0.Add(2*time.Minute), true, "/b", "Direct / None")
	touch(3, t0.Add(3*time.Minute), false, "/c", "Direct / None") // a custom event without pageview
	touch(4, t0.Add(-10*time.Minute), true, "/old", "Bing")       // before the window

	snap, err := reader.Snapshot(ctx, "s1", t0.Add(4*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	want := api.Realtime{ActiveVisitors: 3,
		CurrentPages:   []api.RealtimePage{{Pathname: "/b", Visitors: 2}, {Pathname: "/c", Visitors: 1}},
		CurrentSources: []api.RealtimeSrc{{Source: "Direct / None", Visitors: 2}, {Source: "Google", Visitors: 1}}}
	if diff := cmp.Diff(want, snap); diff != "" {
		t.Errorf("snapshot (-want +got):\n%s", diff)
	}
	// Six minutes on, only visitor 3 (seen at +3 min) is still active.
	snap, _ = reader.Snapshot(ctx, "s1", t0.Add(8*time.Minute))
	if snap.ActiveVisitors != 1 || snap.CurrentPages[0].Pathname != "/c" {
		t.Errorf("later snapshot %+v, want only visitor 3 on /c", snap)
	}
	if other, _ := reader.Snapshot(ctx, "s2", t0.Add(4*time.Minute)); other.ActiveVisitors != 0 {
		t.Errorf("another site sees %d visitors", other.ActiveVisitors)
	}
}

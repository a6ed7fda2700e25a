package realtime_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"

	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/realtime"
	"github.com/tally-analytics/tally/internal/testenv"
)

var t0 = time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)

func mark(t *testing.T, rdb redis.Scripter, prefix string, vs ...realtime.Active) {
	t.Helper()
	if err := realtime.Mark(context.Background(), rdb, prefix, "s1", vs); err != nil {
		t.Fatal(err)
	}
}

func active(t *testing.T, r *realtime.Reader, now time.Time) model.Realtime {
	t.Helper()
	snap, err := r.Active(context.Background(), "s1", now)
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// Two instances may mark one visitor's events of a minute in either order:
// the later event is the visitor's current page, whichever came last.
func TestLaterEventWinsWhateverTheOrder(t *testing.T) {
	rdb, prefix := testenv.Redis(t)
	r := realtime.NewReader(rdb, prefix)
	mark(t, rdb, prefix, realtime.Active{Visitor: 1, Seen: t0.Add(40 * time.Second), Page: "/later", Source: "Google"})
	mark(t, rdb, prefix, realtime.Active{Visitor: 1, Seen: t0.Add(10 * time.Second), Page: "/earlier", Source: "Google"})
	// the next minute, then a late flush of the minute before
	mark(t, rdb, prefix, realtime.Active{Visitor: 2, Seen: t0.Add(65 * time.Second), Page: "/next-minute", Source: "Bing"})
	mark(t, rdb, prefix, realtime.Active{Visitor: 2, Seen: t0.Add(50 * time.Second), Page: "/this-minute", Source: "Bing"})

	want := model.Realtime{Visitors: 2,
		Pages:   []model.VisitorCount{{Value: "/later", Visitors: 1}, {Value: "/next-minute", Visitors: 1}},
		Sources: []model.VisitorCount{{Value: "Bing", Visitors: 1}, {Value: "Google", Visitors: 1}}}
	if diff := cmp.Diff(want, active(t, r, t0.Add(2*time.Minute))); diff != "" {
		t.Errorf("snapshot (-want +got):\n%s", diff)
	}
}

// The window is 5 minutes to the second, across the minutes' hashes.
func TestWindowToTheSecond(t *testing.T) {
	rdb, prefix := testenv.Redis(t)
	r := realtime.NewReader(rdb, prefix)
	seen := t0.Add(30 * time.Second)
	mark(t, rdb, prefix, realtime.Active{Visitor: 7, Seen: seen, Page: "/a", Source: "Direct / None"})
	if n := active(t, r, seen.Add(realtime.Window)).Visitors; n != 1 {
		t.Errorf("exactly 5 minutes on: %d visitors, want 1", n)
	}
	if n := active(t, r, seen.Add(realtime.Window+time.Second)).Visitors; n != 0 {
		t.Errorf("5 minutes and a second on: %d visitors, want 0", n)
	}
	// a reader whose clock is a little behind the writer's still sees it
	if n := active(t, r, seen.Add(-40*time.Second)).Visitors; n != 1 {
		t.Errorf("a reader 40 s behind: %d visitors, want 1", n)
	}
}

func TestForgetDeletesTheSitesState(t *testing.T) {
	rdb, prefix := testenv.Redis(t)
	r := realtime.NewReader(rdb, prefix)
	mark(t, rdb, prefix, realtime.Active{Visitor: 1, Seen: t0, Page: "/a"},
		realtime.Active{Visitor: 2, Seen: t0.Add(3 * time.Minute), Page: "/b"})
	if err := realtime.Mark(context.Background(), rdb, prefix, "s2", []realtime.Active{{Visitor: 3, Seen: t0, Page: "/c"}}); err != nil {
		t.Fatal(err)
	}
	now := t0.Add(4 * time.Minute)
	if err := realtime.Forget(context.Background(), rdb, prefix, "s1", now); err != nil {
		t.Fatal(err)
	}
	if n := active(t, r, now).Visitors; n != 0 {
		t.Errorf("the forgotten site still shows %d visitors", n)
	}
	other, err := r.Active(context.Background(), "s2", now)
	if err != nil || other.Visitors != 1 {
		t.Errorf("the other site shows %d visitors (%v), want 1", other.Visitors, err)
	}
}

// AtMost bounds Active from above by the window's entries, a visitor of two
// minutes counted in each: visitor 1 in two minutes and visitor 2 in one
// are 2 visitors, at most 3; an entry of a minute the window no longer
// reaches counts in neither.
func TestAtMostBoundsActive(t *testing.T) {
	rdb, prefix := testenv.Redis(t)
	r := realtime.NewReader(rdb, prefix)
	mark(t, rdb, prefix, realtime.Active{Visitor: 1, Seen: t0.Add(10 * time.Second), Page: "/a", Source: "Google"},
		realtime.Active{Visitor: 2, Seen: t0.Add(20 * time.Second), Page: "/b", Source: "Bing"})
	mark(t, rdb, prefix, realtime.Active{Visitor: 1, Seen: t0.Add(70 * time.Second), Page: "/c", Source: "Google"})
	now := t0.Add(2 * time.Minute)
	n, err := r.AtMost(context.Background(), "s1", now)
	if err != nil {
		t.Fatal(err)
	}
	if got := active(t, r, now).Visitors; got != 2 || n != 3 {
		t.Errorf("Active %d, AtMost %d; want 2 and 3", got, n)
	}
	// ten minutes on, no hash of the window holds anyone
	if n, err := r.AtMost(context.Background(), "s1", t0.Add(10*time.Minute)); err != nil || n != 0 {
		t.Errorf("ten minutes on: AtMost %d, %v; want 0", n, err)
	}
}

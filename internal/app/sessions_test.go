package app_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tally-analytics/tally/internal/model"
)

// waitFlushed waits until every event the instances accepted has been
// through their flushers: sessions resolved, events and session rows stored.
func waitFlushed(t *testing.T, hs ...*harness) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for _, h := range hs {
		for {
			st := h.app.Buffer.Stats()
			if st.Flushed == st.Written {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the write buffer never caught up: %+v", st)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// storedEvents reads the site's events back, oldest first (by time, then
// by path).
func storedEvents(t *testing.T, h *harness) []model.EventRow {
	t.Helper()
	rows, err := h.ch.EventRows(context.Background(), h.siteID, 1_000_000)
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(rows, func(a, b model.EventRow) int {
		if c := a.Timestamp.Compare(b.Timestamp); c != 0 {
			return c
		}
		return strings.Compare(a.Pathname, b.Pathname)
	})
	return rows
}

// liveSessions collapses the site's session rows as sum(sign) does and
// returns each session's live state. It fails the test when the rows do
// not collapse to one live state per session: a version cancelled twice or
// stated twice, a session with two live versions or none, or a session
// whose pageviews summed with sign differ from its live state's.
func liveSessions(t *testing.T, h *harness) map[uint64]model.SessionRow {
	t.Helper()
	rows, err := h.ch.SessionRows(context.Background(), h.siteID, 1_000_000)
	if err != nil {
		t.Fatal(err)
	}
	type version struct {
		session uint64
		version uint32
	}
	signs := map[version]int{}
	stated := map[version]model.SessionRow{}
	pageviews := map[uint64]int64{}
	for _, r := range rows {
		k := version{r.SessionID, r.Version}
		signs[k] += int(r.Sign)
		if r.Sign > 0 {
			stated[k] = r
		}
		pageviews[r.SessionID] += int64(r.Sign) * int64(r.Pageviews)
	}
	live := map[uint64]model.SessionRow{}
	for k, sum := range signs {
		switch sum {
		case 0: // a state cancelled by the next one
		case 1:
			if other, ok := live[k.session]; ok {
				t.Errorf("session %d has two live versions, %d and %d", k.session, other.Version, k.version)
			}
			live[k.session] = stated[k]
		default:
			t.Errorf("session %d version %d: sum(sign) = %d", k.session, k.version, sum)
		}
	}
	for id, pv := range pageviews {
		if s, ok := live[id]; !ok {
			t.Errorf("session %d has no live state (sum(sign * pageviews) = %d)", id, pv)
		} else if pv != int64(s.Pageviews) {
			t.Errorf("session %d: sum(sign * pageviews) = %d, its live state says %d", id, pv, s.Pageviews)
		}
	}
	return live
}

// eventPlace is what the session rule gave one stored pageview.
type eventPlace struct {
	ID, Path, Prev string
	TimeOnPrev     uint32
	At             time.Time
	InSession      bool
}

// sessionView is the part of a session's live state a test knows in advance.
type sessionView struct {
	Visitor         uint64
	Version         uint32
	Start, End      time.Time
	Pageviews       uint32
	Events          uint32
	Bounce          bool
	Entry, Exit     string
	DurationSeconds uint32
}

func viewOf(s model.SessionRow) sessionView {
	return sessionView{Visitor: s.VisitorID, Version: s.Version, Start: s.Start, End: s.End, Pageviews: s.Pageviews,
		Events: s.Events, Bounce: s.IsBounce, Entry: s.EntryPage, Exit: s.ExitPage, DurationSeconds: s.Duration()}
}

// One visitor whose pageviews reach two instances in turn, each flushed by
// its own write buffer before the next pageview is sent, has one session:
// each instance continues the state the other left in Redis, so the visit
// has its first page as entry, its last as exit, and every pageview the
// page before it as previous page.
func TestOneSessionAcrossInstances(t *testing.T) {
	h := newHarness(t)
	servers := []*harness{h, h.secondInstance()}
	ctx := context.Background()
	paths := []string{"/", "/pricing", "/features", "/docs", "/docs/install", "/docs/api", "/blog", "/blog/launch",
		"/signup", "/welcome"}
	const step = 15 * time.Second
	t0 := time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)

	var want []eventPlace
	for i, path := range paths {
		s := servers[i%2]
		h.clock.Set(t0.Add(time.Duration(i) * step))
		req := pageview(h, "https://example.com"+path)
		req.VisitorID = "alice"
		res, err := s.client(h.key).Pageview(ctx, req)
		if err != nil {
			t.Fatalf("pageview %d (%s) to instance %d: %v", i, path, i%2, err)
		}
		// the next pageview goes to the other instance only once this
		// one's session is resolved: the order is then the sending order
		waitFlushed(t, s)
		place := eventPlace{ID: res.EventID, Path: path, At: h.clock.Now(), InSession: true}
		if i > 0 {
			place.Prev, place.TimeOnPrev = paths[i-1], uint32(step/time.Second)
		}
		want = append(want, place)
	}

	live := liveSessions(t, h)
	if len(live) != 1 {
		t.Fatalf("%d live sessions, want 1: %+v", len(live), live)
	}
	var session model.SessionRow
	for _, s := range live {
		session = s
	}
	wantSession := sessionView{Visitor: ingestVisitor(h.siteID, "alice"), Version: uint32(len(paths)), Start: t0,
		End: t0.Add(time.Duration(len(paths)-1) * step), Pageviews: uint32(len(paths)), Entry: "/", Exit: "/welcome",
		DurationSeconds: uint32((len(paths) - 1) * int(step/time.Second))}
	if diff := cmp.Diff(wantSession, viewOf(session)); diff != "" {
		t.Errorf("the visitor's session (-want +got):\n%s", diff)
	}

	var got []eventPlace
	for _, e := range storedEvents(t, h) {
		if e.SessionID != 0 && e.SessionID != session.SessionID {
			t.Errorf("event %s (%s) belongs to session %d, not the visitor's %d", e.EventID, e.Pathname, e.SessionID, session.SessionID)
		}
		if e.PrevPathname == e.Pathname {
			t.Errorf("event %s names its own page %s as the previous one", e.EventID, e.Pathname)
		}
		got = append(got, eventPlace{ID: e.EventID, Path: e.Pathname, Prev: e.PrevPathname, TimeOnPrev: e.TimeOnPrev,
			At: e.Timestamp, InSession: e.SessionID != 0})
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("stored pageviews (-want +got):\n%s", diff)
	}
}

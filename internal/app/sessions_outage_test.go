package app_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/testenv"
)

// Visitors who go on browsing while Redis is unreachable: their pageviews
// are answered 201 throughout, and once Redis is back and the write buffer
// has flushed, each visitor has one session holding every pageview —
// before, during and after the outage — none stored without a session,
// and no session started again after the outage.
func TestSessionsThroughRedisOutage(t *testing.T) {
	cfg := testenv.Config(t)
	stores := proxyStores(t, cfg)
	h := newHarnessWith(t, cfg)
	ctx := context.Background()
	c := h.client(h.key)
	visitors := []string{"reader-0", "reader-1", "reader-2"}
	const perPhase = 3
	const step = 20 * time.Second
	t0 := time.Date(2026, 5, 4, 12, 0, 0, 0, time.UTC)

	var paths []string // the pages every visitor sees, in order
	acked := map[string]string{}
	send := func(phase string) {
		t.Helper()
		for range perPhase {
			round := len(paths)
			path := fmt.Sprintf("/%s/%d", phase, round)
			h.clock.Set(t0.Add(time.Duration(round) * step))
			for _, v := range visitors {
				req := pageview(h, "https://example.com"+path)
				req.VisitorID = v
				res, err := c.Pageview(ctx, req)
				if err != nil {
					t.Fatalf("%s: pageview %s: %v", v, path, err)
				}
				acked[res.EventID] = v
			}
			paths = append(paths, path)
		}
	}

	send("before")
	waitFlushed(t, h)
	stores.redis.Down()
	if _, err := c.Realtime(ctx, string(h.siteID)); !isAPIError(err, http.StatusServiceUnavailable, "service_unavailable") {
		t.Fatalf("realtime with Redis down: %v; want 503 (is Redis really away?)", err)
	}
	failures := h.app.Buffer.Stats().FlushFailures
	send("during")
	// The flusher meets the outage and waits: the events of the outage stay
	// in the WAL, none is stored without its session.
	for deadline := time.Now().Add(10 * time.Second); h.app.Buffer.Stats().FlushFailures == failures; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the flusher never met the outage: %+v", h.app.Buffer.Stats())
		}
	}
	phase := int64(len(visitors) * perPhase) // events of each phase
	if st := h.app.Buffer.Stats(); st.Written-st.Flushed != phase {
		t.Errorf("with Redis down: %+v; want the %d events of the outage waiting", st, phase)
	}
	if n := h.count("SELECT count() FROM events"); n != phase {
		t.Errorf("%d events stored with Redis down, want the %d from before", n, phase)
	}
	stores.redis.Up()
	send("after")
	waitFlushed(t, h)

	events := storedEvents(t, h)
	if len(events) != len(acked) {
		t.Errorf("%d events stored, %d acknowledged", len(events), len(acked))
	}
	if n := h.count("SELECT count() FROM events WHERE session_id = 0"); n != 0 {
		t.Errorf("%d of %d events stored without a session", n, len(events))
	}
	live := liveSessions(t, h)
	if len(live) != len(visitors) {
		t.Errorf("%d live sessions, want %d (one per visitor)", len(live), len(visitors))
	}
	byVisitor := map[uint64][]model.EventRow{}
	for _, e := range events {
		if _, ok := acked[e.EventID]; !ok {
			t.Errorf("event %s (%s) was never acknowledged", e.EventID, e.Pathname)
		}
		byVisitor[e.VisitorID] = append(byVisitor[e.VisitorID], e)
	}
	for _, v := range visitors {
		checkOutageVisitor(t, v, ingestVisitor(h.siteID, v), byVisitor, live, paths, t0, step)
	}
}

// checkOutageVisitor compares a visitor's stored pageviews and session with
// one unbroken visit over paths, a page every step from t0.
func checkOutageVisitor(t *testing.T, name string, visitor uint64, byVisitor map[uint64][]model.EventRow,
	live map[uint64]model.SessionRow, paths []string, t0 time.Time, step time.Duration) {
	t.Helper()
	var want, got []eventPlace
	for i, path := range paths {
		p := eventPlace{Path: path, At: t0.Add(time.Duration(i) * step), InSession: true}
		if i > 0 {
			p.Prev, p.TimeOnPrev = paths[i-1], uint32(step/time.Second)
		}
		want = append(want, p)
	}
	sessions := map[uint64]bool{}
	for _, e := range byVisitor[visitor] {
		got = append(got, eventPlace{Path: e.Pathname, Prev: e.PrevPathname, TimeOnPrev: e.TimeOnPrev, At: e.Timestamp,
			InSession: e.SessionID != 0})
		if e.SessionID != 0 {
			sessions[e.SessionID] = true
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s: pageviews (-want +got):\n%s", name, diff)
	}
	if len(sessions) != 1 {
		t.Errorf("%s: pageviews in %d sessions, want 1", name, len(sessions))
	}
	last := len(paths) - 1
	wantSession := sessionView{Visitor: visitor, Version: uint32(len(paths)), Start: t0, End: t0.Add(time.Duration(last) * step),
		Pageviews: uint32(len(paths)), Entry: paths[0], Exit: paths[last], DurationSeconds: uint32(last * int(step/time.Second))}
	for id := range sessions {
		s, ok := live[id]
		if !ok {
			t.Errorf("%s: session %d has no live state", name, id)
			continue
		}
		if diff := cmp.Diff(wantSession, viewOf(s)); diff != "" {
			t.Errorf("%s: session %d (-want +got):\n%s", name, id, diff)
		}
	}
}

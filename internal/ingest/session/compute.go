package session

import (
	"time"

	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/realtime"
)

// Snapshot is what a batch's sessions are computed from besides its events:
// the state each of its visitors had in Redis before the batch. The write
// buffer stores it durably before any state is written, so that replaying
// the batch computes the same rows.
type Snapshot struct {
	// Tag marks the states this batch writes, so that a replay recognises
	// its own writes (never 0).
	Tag uint64
	// Degraded marks a snapshot an earlier release took when Redis could not
	// be read (this one waits instead): the batch's events are stored
	// without a session, and no state is written.
	Degraded bool
	// States are the values read, one per visitor of the batch (Value nil:
	// the visitor had no state).
	States []Stored
}

// clone copies the snapshot's list of states (their values are shared:
// they are never changed, only replaced).
func (s *Snapshot) clone() *Snapshot {
	c := *s
	c.States = append([]Stored(nil), s.States...)
	return &c
}

// Stored is a visitor's state as Redis held it.
type Stored struct {
	Site    model.SiteID
	Visitor uint64
	Value   []byte
}

// Outcome is what a batch does to its sessions.
type Outcome struct {
	// Rows are, for each session the batch touched, the cancel row of its
	// state before the batch (when it had one) and the row of its new state.
	Rows []model.SessionRow
	// Events are, per event, the session it belongs to (zero without one).
	Events []Assigned
	// writes are the visitors' new states; active, the visitors to show in
	// the realtime view.
	writes []write
	active map[model.SiteID][]realtime.Active
}

// Assigned is an event's place in its session.
type Assigned struct {
	SessionID uint64
	// Attribution is the session's: where the visit came from.
	Attribution model.Attribution
	// Entry is the session's entry page after the event.
	Entry string
	// PrevPath and TimeOnPrev describe the session's previous pageview
	// when the event is a later pageview: the page left, and the seconds
	// spent on it.
	PrevPath   string
	TimeOnPrev uint32
}

// Apply gives row (the event it was computed for) its session.
func (a Assigned) Apply(row *model.EventRow) {
	if a.SessionID == 0 {
		return
	}
	row.SessionID, row.Attribution = a.SessionID, a.Attribution
	row.PrevPathname, row.TimeOnPrev = a.PrevPath, a.TimeOnPrev
}

// Touch is the attribution of the event's session, for the payments ledger;
// nil without a session.
func (a Assigned) Touch() *model.Touch {
	if a.SessionID == 0 {
		return nil
	}
	t := a.Attribution.Touch(a.Entry)
	return &t
}

// write is a visitor's new state, to be stored if the visitor's state is
// still the one it was computed from.
type write struct {
	v      visitor
	expect []byte // tag of the value computed from; nil = there was none
	value  []byte
}

// Compute applies the rule to evs (the events of a batch that belong to
// sessions, in the order they were accepted) from the states of snap, and
// says which session each event belongs to; every event of a session
// carries the session's attribution, so that a filter on the source or
// campaign selects whole visits. It reads evs only. A degraded snapshot
// gives no event a session.
func (r Rule) Compute(evs []*model.EventRow, snap *Snapshot) Outcome {
	out := Outcome{Events: make([]Assigned, len(evs)), active: map[model.SiteID][]realtime.Active{}}
	if snap.Degraded {
		return out
	}
	before := make(map[visitor][]byte, len(snap.States))
	for _, s := range snap.States {
		before[visitor{s.Site, s.Visitor}] = s.Value
	}
	tracks := make(map[visitor]*track, len(snap.States))
	order := make([]visitor, 0, len(snap.States))
	for i, ev := range evs {
		v := visitor{ev.SiteID, ev.VisitorID}
		tr := tracks[v]
		if tr == nil {
			tr = newTrack(before[v])
			tracks[v] = tr
			order = append(order, v)
		}
		out.Events[i] = r.apply(tr, ev)
	}
	rows := 0
	for _, tr := range tracks {
		for _, t := range tr.touched {
			if rows++; t.before != nil {
				rows++
			}
		}
	}
	out.Rows = make([]model.SessionRow, 0, rows)
	out.writes = make([]write, 0, len(order))
	for _, v := range order {
		tr := tracks[v]
		for _, t := range tr.touched {
			if t.before != nil {
				out.Rows = append(out.Rows, t.before.row(v.site, v.id, -1))
			}
			out.Rows = append(out.Rows, t.now.row(v.site, v.id, 1))
		}
		next := stored{tag: snap.Tag, state: *tr.cur}
		out.writes = append(out.writes, write{v: v, expect: tagOf(before[v]), value: appendStored(nil, next)})
		page := tr.cur.exit
		if page == "" {
			page = tr.lastPath
		}
		out.active[v.site] = append(out.active[v.site], realtime.Active{Visitor: v.id,
			Seen: time.Unix(tr.cur.last, 0).UTC(), Page: page, Source: tr.cur.attribution.ReferrerSource})
	}
	return out
}

// track follows one visitor through a batch.
type track struct {
	cur      *state   // the visitor's current session; nil before the first
	open     *touched // cur's entry in touched, once the batch touched it
	touched  []*touched
	lastPath string
}

// touched is a session the batch changed: its state before the batch (nil
// if the batch started it) and now.
type touched struct {
	before *state
	now    state
}

func newTrack(value []byte) *track {
	tr := &track{}
	if value == nil {
		return tr
	}
	if s, err := decodeStored(value); err == nil {
		cur := s.state
		tr.cur = &cur
	}
	return tr
}

// apply moves the visitor's session on by ev.
func (r Rule) apply(tr *track, ev *model.EventRow) Assigned {
	now := ev.Timestamp.Unix()
	prev := tr.cur
	if prev != nil && now < prev.last {
		now = prev.last // clocks of instances differ slightly: a session never goes back in time
	}
	alive := prev != nil && now-prev.last <= int64(r.Idle/time.Second) && now-prev.start < int64(r.MaxAge/time.Second)
	var was state
	if alive {
		was = *prev
		if tr.open == nil {
			before := was
			tr.open = &touched{before: &before}
			tr.touched = append(tr.touched, tr.open)
		}
	} else {
		tr.cur = &state{sid: sessionID(ev.EventID), start: now, attribution: ev.Attribution}
		tr.open = &touched{}
		tr.touched = append(tr.touched, tr.open)
	}
	s := tr.cur
	s.version++
	s.last = now
	var a Assigned
	if ev.Pageview() {
		if alive && was.lastPageview > 0 {
			a.PrevPath, a.TimeOnPrev = was.exit, uint32(max(0, now-was.lastPageview))
		}
		s.pageviews++
		if s.entry == "" {
			s.entry = ev.Pathname
		}
		s.exit, s.lastPageview = ev.Pathname, now
	} else {
		s.events++
	}
	tr.open.now = *s
	tr.lastPath = ev.Pathname
	a.SessionID, a.Attribution, a.Entry = s.sid, s.attribution, s.entry
	return a
}

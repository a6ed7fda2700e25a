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
	// Attribution is the session's: where the visit came from (shared with
	// every event of the session; not to be changed).
	Attribution *model.Attribution
	// Entry is the session's entry page after the event.
	Entry string
	// PrevPath and TimeOnPrev describe the session's previous pageview
	// when the event is a later pageview: the page left, and the seconds
	// spent on it.
	PrevPath   string
	TimeOnPrev uint32
}

// Apply gives row (the event it was computed for) its session: the
// session's attribution, but for the host name the event happened on.
func (a Assigned) Apply(row *model.EventRow) {
	if a.SessionID == 0 {
		return
	}
	host := row.Attribution.Hostname
	row.SessionID, row.Attribution = a.SessionID, *a.Attribution
	row.Attribution.Hostname = host
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
//
// A batch holds thousands of visitors: their tracks and the sessions they
// touch live in two slices, linked by index, rather than one allocation each.
func (r Rule) Compute(evs []*model.EventRow, snap *Snapshot) Outcome {
	out := Outcome{Events: make([]Assigned, len(evs)), active: map[model.SiteID][]realtime.Active{}}
	if snap.Degraded {
		return out
	}
	// the snapshot holds each visitor of the batch once (a visitor missing
	// from it had no state)
	index := make(map[visitor]int32, len(snap.States))
	tracks := make([]track, 0, len(snap.States))
	order := make([]int32, 0, len(snap.States)) // tracks in the order of their first event
	for _, s := range snap.States {
		index[visitor{s.Site, s.Visitor}] = int32(len(tracks))
		tracks = append(tracks, track{v: visitor{s.Site, s.Visitor}, before: s.Value, first: -1, last: -1, open: -1})
	}
	touched := make([]touched, 0, len(snap.States)+len(snap.States)/8)
	for i, ev := range evs {
		v := visitor{ev.SiteID, ev.VisitorID}
		k, ok := index[v]
		if !ok {
			k = int32(len(tracks))
			index[v] = k
			tracks = append(tracks, track{v: v, first: -1, last: -1, open: -1})
		}
		tr := &tracks[k]
		if !tr.seen {
			tr.seen = true
			tr.load()
			order = append(order, k)
		}
		out.Events[i] = r.apply(tr, &touched, ev)
	}
	rows := 0
	for _, t := range touched {
		if rows++; t.hasBefore {
			rows++
		}
	}
	out.Rows = make([]model.SessionRow, 0, rows)
	out.writes = make([]write, 0, len(order))
	perSite := map[model.SiteID]int{} // a batch holds a few sites: each one's slice at its size
	for _, k := range order {
		perSite[tracks[k].v.site]++
	}
	for site, n := range perSite {
		out.active[site] = make([]realtime.Active, 0, n)
	}
	// the new states, one after another, in room taken at once: a slice
	// that outgrows its room copies all it holds
	size := 0
	for _, k := range order {
		size += storedSize(&tracks[k].cur)
	}
	values := make([]byte, 0, size)
	for _, k := range order {
		tr := &tracks[k]
		v := tr.v
		for t := tr.first; t >= 0; t = touched[t].next {
			if touched[t].hasBefore {
				out.Rows = append(out.Rows, touched[t].before.row(v.site, v.id, -1))
			}
			out.Rows = append(out.Rows, touched[t].now.row(v.site, v.id, 1))
		}
		start := len(values)
		values = appendStored(values, stored{tag: snap.Tag, state: tr.cur})
		out.writes = append(out.writes, write{v: v, expect: tagOf(tr.before), value: values[start:len(values):len(values)]})
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
	v      visitor
	before []byte // the stored state before the batch; nil = none
	seen   bool   // the batch has an event of the visitor (load ran)
	has    bool   // cur is the visitor's current session
	cur    state
	// first and last index the sessions the batch touched, in touched
	// (linked by next); open is cur's, once the batch touched it; -1 = none.
	first, last, open int32
	lastPath          string
}

// touched is a session the batch changed: its state before the batch (if
// the batch did not start it) and now.
type touched struct {
	hasBefore bool
	before    state
	now       state
	next      int32 // the visitor's next touched session; -1 = none
}

// load reads the visitor's state before the batch; one that does not
// decode counts as none.
func (tr *track) load() {
	if tr.before == nil {
		return
	}
	if s, err := decodeStored(tr.before); err == nil {
		tr.cur, tr.has = s.state, true
	}
}

// touch adds a session the batch changed to tr's list and makes it the
// open one.
func (tr *track) touch(all *[]touched, t touched) {
	k := int32(len(*all))
	t.next = -1
	*all = append(*all, t)
	if tr.last >= 0 {
		(*all)[tr.last].next = k
	} else {
		tr.first = k
	}
	tr.last, tr.open = k, k
}

// apply moves the visitor's session on by ev; all are the sessions the
// batch touched.
func (r Rule) apply(tr *track, all *[]touched, ev *model.EventRow) Assigned {
	now := ev.Timestamp.Unix()
	if tr.has && now < tr.cur.last {
		now = tr.cur.last // clocks of instances differ slightly: a session never goes back in time
	}
	alive := tr.has && now-tr.cur.last <= int64(r.Idle/time.Second) && now-tr.cur.start < int64(r.MaxAge/time.Second)
	var was state
	if alive {
		was = tr.cur
		if tr.open < 0 {
			tr.touch(all, touched{hasBefore: true, before: was})
		}
	} else {
		tr.cur, tr.has = state{sid: sessionID(ev.EventID), start: now, attribution: &ev.Attribution}, true
		tr.touch(all, touched{})
	}
	s := &tr.cur
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
	(*all)[tr.open].now = *s
	tr.lastPath = ev.Pathname
	a.SessionID, a.Attribution, a.Entry = s.sid, s.attribution, s.entry
	return a
}

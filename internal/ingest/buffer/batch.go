package buffer

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/tally-analytics/tally/internal/ingest/session"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/wal"
)

// batch is a fixed run of log records on its way to ClickHouse: once its
// plan is on disk it never grows or shrinks, and each of its steps is done
// once.
type batch struct {
	seq        uint64
	start, end wal.Position
	started    time.Time // when its first record was read
	read       int       // records read, including undecodable ones
	records    []model.Record

	step    step              // the step under way
	sent    bool              // step's insert may have reached ClickHouse
	unsure  bool              // every step's insert from step on may have (the inserts run at once)
	snap    *session.Snapshot // what its sessions are computed from
	planRev uint64            // versions of its plan written

	out      session.Outcome
	marked   <-chan struct{} // closes once the realtime view shows the batch (nil: not asked)
	events   []model.EventRow
	sessions []model.SessionRow
	bots     []model.BotEventRow
	// engagements are the scroll depths: no session, no event
	engagements []model.EngagementRow
	revenue     []tracked // the events carrying revenue, for the payments ledger
}

// tracked is an event with revenue, the base currency of its site, the
// session it happened in, and whether the tracking script reported it.
type tracked struct {
	event   *model.EventRow
	base    string
	session session.Assigned
	client  bool
}

// add decodes a log record into bt. The log's CRC held, so a record that
// does not decode is of an unknown version: it is logged and skipped rather
// than allowed to block every later event.
func (b *Buffer) add(bt *batch, payload []byte, end wal.Position) {
	if bt.read == 0 {
		bt.started = time.Now()
		b.mu.Lock()
		b.pending = append(b.pending, bt.started)
		b.mu.Unlock()
	}
	bt.read++
	bt.end = end
	rec, err := model.DecodeRecord(payload)
	if err != nil {
		b.opts.Log.Error("buffer: skipping undecodable log record", "position", end, "err", err)
		return
	}
	bt.records = append(bt.records, rec)
}

// readTo reads the records of a resumed batch, up to its end.
func (b *Buffer) readTo(r *wal.Reader, bt *batch) error {
	end := bt.end
	for pos := bt.start; pos.Less(end); {
		payload, next, err := r.Next()
		if errors.Is(err, io.EOF) {
			return fmt.Errorf("buffer: the log ends at %v, before the end %v of batch %d", pos, end, bt.seq)
		}
		if err != nil {
			return fmt.Errorf("buffer: read log: %w", err)
		}
		b.add(bt, payload, next)
		pos = next
	}
	bt.end = end
	return nil
}

// sessionEvents are the events that belong to visits, in log order.
func (bt *batch) sessionEvents() []*model.EventRow {
	var evs []*model.EventRow
	for i := range bt.records {
		if rec := &bt.records[i]; rec.NeedsSession() {
			evs = append(evs, rec.Event)
		}
	}
	return evs
}

// build makes the batch's rows once its sessions are known (once: it lets
// the records go).
func (bt *batch) build() {
	bt.events = slices.Grow(bt.events[:0], len(bt.records))
	bt.sessions = bt.sessions[:0] // the outcome's rows, unless records of earlier releases carry some
	bt.bots, bt.engagements, bt.revenue = bt.bots[:0], bt.engagements[:0], bt.revenue[:0]
	k := 0
	for i := range bt.records {
		rec := &bt.records[i]
		if rec.Event != nil {
			row := *rec.Event
			if rec.NeedsSession() {
				a := bt.out.Events[k]
				k++
				a.Apply(&row)
				if row.RevenueAmount > 0 {
					bt.revenue = append(bt.revenue, tracked{event: rec.Event, base: rec.BaseCurrency, session: a, client: rec.ClientRevenue})
				}
			}
			bt.events = append(bt.events, row)
		}
		if rec.Bot != nil {
			bt.bots = append(bt.bots, *rec.Bot)
		}
		if rec.Engagement != nil {
			bt.engagements = append(bt.engagements, *rec.Engagement)
		}
		bt.sessions = append(bt.sessions, rec.Sessions...) // records of earlier releases
	}
	if len(bt.sessions) == 0 {
		bt.sessions = bt.out.Rows
	} else {
		bt.sessions = append(bt.sessions, bt.out.Rows...)
	}
	// what the rows were built from is not needed any more: let it go while
	// the batch is stored and the next one prepared
	bt.records, bt.out = nil, session.Outcome{}
}

// waitMarked returns once the realtime view's update for the batch is done.
func (bt *batch) waitMarked() {
	if bt.marked != nil {
		<-bt.marked
	}
}

// rows reports how many rows step s inserts.
func (bt *batch) rows(s step) int {
	switch s {
	case stepEvents:
		return len(bt.events)
	case stepSessions:
		return len(bt.sessions)
	case stepBots:
		return len(bt.bots)
	case stepEngagements:
		return len(bt.engagements)
	}
	return 0
}

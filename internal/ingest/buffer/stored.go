package buffer

import (
	"context"
	"time"

	"github.com/tally-analytics/tally/internal/model"
)

// dropStored leaves out of step s the rows ClickHouse already holds, after
// an insert that may have reached it. Only rows that cannot have changed
// since are asked for, so the answer is exact:
//
//   - events, bot events and scroll depths live in plain MergeTree tables, which never
//     remove a row: an event id found is an event stored;
//   - session rows collapse in pairs (VersionedCollapsingMergeTree), so a
//     batch's cancel rows can vanish once merged, and so can its state rows
//     once a later batch (of another instance) cancels them. A session's
//     rows of one batch share a part (a part is one partition of one
//     insert, and they share the session's start), so the batch's newest
//     state row of the session, version v, witnesses all of them. It is
//     stored if it is found; or if it is gone while a newer version of the
//     session exists and no lone cancel of version v does: only a batch
//     that read this batch's state can have written version v+1 and a
//     cancel of v, and that cancel only vanishes by collapsing with the
//     witness (had this batch not landed, the cancel would be there).
//
// A lookup that fails leaves the rows as they are, and the caller retries.
func (b *Buffer) dropStored(ctx context.Context, bt *batch, s step) error {
	var err error
	switch s {
	case stepEvents:
		bt.events, err = dropStoredIDs(ctx, b, "events", bt.events,
			func(e model.EventRow) (string, model.SiteID, time.Time) { return e.EventID, e.SiteID, e.Timestamp })
	case stepBots:
		bt.bots, err = dropStoredIDs(ctx, b, "bot_events", bt.bots,
			func(e model.BotEventRow) (string, model.SiteID, time.Time) { return e.EventID, e.SiteID, e.Timestamp })
	case stepEngagements:
		bt.engagements, err = dropStoredIDs(ctx, b, "engagements", bt.engagements,
			func(g model.EngagementRow) (string, model.SiteID, time.Time) { return g.EventID, g.SiteID, g.Timestamp })
	case stepSessions:
		bt.sessions, err = b.dropStoredSessions(ctx, bt.sessions)
	}
	return err
}

// dropStoredIDs removes the rows of table that ClickHouse already holds,
// recognised by their event id.
func dropStoredIDs[T any](ctx context.Context, b *Buffer, table string, rows []T,
	key func(T) (string, model.SiteID, time.Time)) ([]T, error) {
	ids := make([]string, len(rows))
	span := model.Span{}
	for i, r := range rows {
		id, site, ts := key(r)
		ids[i] = id
		extend(&span, site, ts)
	}
	lctx, cancel := context.WithTimeout(ctx, b.opts.InsertTimeout)
	defer cancel()
	found, err := b.sink.ExistingEventIDs(lctx, table, span, ids)
	if err != nil {
		return rows, err
	}
	return filter(rows, func(r T) bool { id, _, _ := key(r); return !found[id] }), nil
}

// dropStoredSessions removes the rows of the sessions whose witness (their
// newest state row of the batch) ClickHouse holds.
func (b *Buffer) dropStoredSessions(ctx context.Context, rows []model.SessionRow) ([]model.SessionRow, error) {
	witness := map[uint64]uint32{} // session → version of its newest state row
	span := model.Span{}
	for _, r := range rows {
		extend(&span, r.SiteID, r.Start)
		if v, ok := witness[r.SessionID]; r.Sign == 1 && (!ok || r.Version > v) {
			witness[r.SessionID] = r.Version
		}
	}
	ids := make([]uint64, 0, len(witness))
	for id := range witness {
		ids = append(ids, id)
	}
	lctx, cancel := context.WithTimeout(ctx, b.opts.InsertTimeout)
	defer cancel()
	found, err := b.sink.ExistingSessionRows(lctx, span, ids)
	if err != nil {
		return rows, err
	}
	newer := map[uint64]bool{} // sessions with a version above their witness
	for k := range found {
		if v, ok := witness[k.SessionID]; ok && k.Version > v {
			newer[k.SessionID] = true
		}
	}
	stored := func(id uint64) bool {
		v, ok := witness[id]
		if !ok {
			return false
		}
		state, cancel := model.SessionRowKey{SessionID: id, Version: v, Sign: 1}, model.SessionRowKey{SessionID: id, Version: v, Sign: -1}
		return found[state] || (newer[id] && !found[cancel])
	}
	return filter(rows, func(r model.SessionRow) bool { return !stored(r.SessionID) }), nil
}

// extend widens span to hold a row of site at t.
func extend(span *model.Span, site model.SiteID, t time.Time) {
	if len(span.Sites) == 0 || span.From.After(t) {
		span.From = t
	}
	if span.To.Before(t) {
		span.To = t
	}
	for _, s := range span.Sites {
		if s == site {
			return
		}
	}
	span.Sites = append(span.Sites, site)
}

func filter[T any](rows []T, keep func(T) bool) []T {
	out := rows[:0]
	for _, r := range rows {
		if keep(r) {
			out = append(out, r)
		}
	}
	return out
}

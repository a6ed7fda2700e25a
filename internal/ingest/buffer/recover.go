package buffer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/wal"
)

// recoverInFlight replays the batch whose insert was under way when the
// process stopped: it reads the batch again, drops the rows ClickHouse already
// holds (event ids and session row keys identify them), and inserts the rest.
func (b *Buffer) recoverInFlight(ctx context.Context, r *wal.Reader, pos wal.Position, bt *batch) (wal.Position, error) {
	target := *b.cp.InFlight
	for pos.Less(target) {
		payload, end, err := r.Next()
		if errors.Is(err, io.EOF) {
			break // the log ends before the recorded batch end: nothing more to replay
		}
		if err != nil {
			return pos, fmt.Errorf("buffer: recover: read log: %w", err)
		}
		pos = end
		b.add(bt, payload, end)
	}
	if bt.records == 0 {
		return pos, b.saveCheckpoint(checkpoint{Committed: pos})
	}
	if err := b.dropStored(ctx, bt); err != nil {
		return pos, err
	}
	b.opts.Log.Info("buffer: replaying a batch interrupted by a crash", "records", bt.records,
		"events_to_insert", len(bt.events), "session_rows_to_insert", len(bt.sessions))
	return pos, b.flush(ctx, bt)
}

// dropStored removes from bt the rows ClickHouse already has, retrying while
// ClickHouse is unreachable.
func (b *Buffer) dropStored(ctx context.Context, bt *batch) error {
	backoff := 100 * time.Millisecond
	for {
		err := b.filterStored(ctx, bt)
		if err == nil {
			return nil
		}
		b.opts.Log.Warn("buffer: recover: cannot check ClickHouse yet", "err", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 5*time.Second)
	}
}

func (b *Buffer) filterStored(ctx context.Context, bt *batch) error {
	var err error
	if bt.events, err = dropStoredEvents(ctx, b.sink, "events", bt.events,
		func(e model.EventRow) (string, model.SiteID, time.Time) { return e.EventID, e.SiteID, e.Timestamp }); err != nil {
		return err
	}
	if bt.bots, err = dropStoredEvents(ctx, b.sink, "bot_events", bt.bots,
		func(e model.BotEventRow) (string, model.SiteID, time.Time) { return e.EventID, e.SiteID, e.Timestamp }); err != nil {
		return err
	}
	if len(bt.sessions) > 0 {
		ids := make([]uint64, len(bt.sessions))
		span := model.Span{}
		for i, s := range bt.sessions {
			ids[i] = s.SessionID
			extend(&span, s.SiteID, s.Start)
		}
		found, err := b.sink.ExistingSessionRows(ctx, span, ids)
		if err != nil {
			return err
		}
		bt.sessions = filter(bt.sessions, func(s model.SessionRow) bool { return !found[s.Key()] })
	}
	return nil
}

// dropStoredEvents removes the rows of table that ClickHouse already holds,
// recognised by their event id.
func dropStoredEvents[T any](ctx context.Context, sink Sink, table string, rows []T,
	key func(T) (string, model.SiteID, time.Time)) ([]T, error) {
	if len(rows) == 0 {
		return rows, nil
	}
	ids := make([]string, len(rows))
	span := model.Span{}
	for i, r := range rows {
		id, site, ts := key(r)
		ids[i] = id
		extend(&span, site, ts)
	}
	found, err := sink.ExistingEventIDs(ctx, table, span, ids)
	if err != nil {
		return nil, err
	}
	return filter(rows, func(r T) bool { id, _, _ := key(r); return !found[id] }), nil
}

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

package buffer

import (
	"context"
	"encoding/json"
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
		var rec model.Record
		if err := json.Unmarshal(payload, &rec); err != nil {
			b.opts.Log.Error("buffer: skipping undecodable log record", "position", end, "err", err)
			continue
		}
		bt.add(rec, end)
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
	if len(bt.events) > 0 {
		ids := make([]string, len(bt.events))
		span := model.Span{}
		for i, e := range bt.events {
			ids[i] = e.EventID
			extend(&span, e.SiteID, e.Timestamp)
		}
		found, err := b.sink.ExistingEventIDs(ctx, "events", span, ids)
		if err != nil {
			return err
		}
		bt.events = filter(bt.events, func(e model.EventRow) bool { return !found[e.EventID] })
	}
	if len(bt.bots) > 0 {
		ids := make([]string, len(bt.bots))
		span := model.Span{}
		for i, e := range bt.bots {
			ids[i] = e.EventID
			extend(&span, e.SiteID, e.Timestamp)
		}
		found, err := b.sink.ExistingEventIDs(ctx, "bot_events", span, ids)
		if err != nil {
			return err
		}
		bt.bots = filter(bt.bots, func(e model.BotEventRow) bool { return !found[e.EventID] })
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

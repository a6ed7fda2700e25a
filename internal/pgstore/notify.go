package pgstore

import (
	"context"
	"time"
)

// accessChannel is where the triggers of postgres/0010_access_notify.sql
// announce changes to credentials and access.
const accessChannel = "tally_access"

// FollowAccessChanges calls changed whenever credentials or access change in
// the database — through tally or by hand — and each time it starts
// listening (again): what was announced while it was not listening is lost,
// so anything may have changed. listening, if not nil, learns whether it is
// listening. It holds one connection of its own and returns when ctx ends.
func (s *Store) FollowAccessChanges(ctx context.Context, changed func(), listening func(bool)) {
	if listening == nil {
		listening = func(bool) {}
	}
	for ctx.Err() == nil {
		err := s.listen(ctx, changed, listening)
		listening(false)
		if ctx.Err() != nil || err == nil {
			return
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

// listen listens on one connection until it fails or ctx ends.
func (s *Store) listen(ctx context.Context, changed func(), listening func(bool)) error {
	pc, err := s.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	conn := pc.Hijack() // it listens: it must not go back to the pool
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "LISTEN "+accessChannel); err != nil {
		return err
	}
	listening(true)
	changed()
	for {
		if _, err := conn.WaitForNotification(ctx); err != nil {
			return err
		}
		changed()
	}
}

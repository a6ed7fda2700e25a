package main

import (
	"context"
	"strings"
	"syscall"
	"time"

	"github.com/tally-analytics/tally/internal/chstore"
	"github.com/tally-analytics/tally/internal/model"
)

// rawResult is the raw insert baseline: the rows tally stored for the batch
// phase, inserted again with the same clickhouse-go batch code tally uses
// (chstore), in batches of rawBatch rows, with nothing else in the way.
type rawResult struct {
	Events, Sessions     int
	EventsTook, BothTook time.Duration
	// BothNoViewsTook is BothTook without the rollups' materialised views.
	BothNoViewsTook time.Duration
	// Settled is how long ClickHouse's merges took to finish before each of
	// the three timings (the batch phase's parts, then each timing's own).
	Settled []time.Duration
	// EventsCPU is ClickHouse's CPU time for the events-only insert and the
	// merges it left (until ClickHouse ran none).
	EventsCPU time.Duration
	// RollupBytes and EventBytes are the merged sizes on disk of the
	// rollups and of the events after the first insert of the rows.
	RollupBytes, EventBytes uint64
}

const rawBatch = 10_000

func (r rawResult) eventsRate() float64 { return float64(r.Events) / r.EventsTook.Seconds() }

// bothRate is events per second when each event's session rows are
// inserted too, as tally's flusher does.
func (r rawResult) bothRate() float64 { return float64(r.Events) / r.BothTook.Seconds() }

// bothNoViewsRate is bothRate without the rollups' views.
func (r rawResult) bothNoViewsRate() float64 { return float64(r.Events) / r.BothNoViewsTook.Seconds() }

// rollupBytesPerMillion is the rollups' size per million events.
func (r rawResult) rollupBytesPerMillion() float64 {
	return float64(r.RollupBytes) / float64(max(1, r.Events)) * 1e6
}

// rawInsert reads up to limit events (and their sessions' rows) of site back
// from ClickHouse and times inserting them into a scratch database.
func rawInsert(ctx context.Context, opts chstore.Options, site string, limit int) (rawResult, error) {
	source, err := chstore.Open(ctx, opts)
	if err != nil {
		return rawResult{}, err
	}
	defer source.Close()
	events, err := source.EventRows(ctx, model.SiteID(site), limit)
	if err != nil {
		return rawResult{}, err
	}
	sessions, err := source.SessionRows(ctx, model.SiteID(site), 2*len(events))
	if err != nil {
		return rawResult{}, err
	}

	scratch := opts
	scratch.Database = opts.Database + "_raw"
	if err := chstore.DropDatabase(ctx, opts, scratch.Database); err != nil {
		return rawResult{}, err
	}
	store, err := chstore.Open(ctx, scratch)
	if err != nil {
		return rawResult{}, err
	}
	defer store.Close()
	if _, err := store.Migrate(ctx); err != nil {
		return rawResult{}, err
	}
	res := rawResult{Events: len(events), Sessions: len(sessions)}
	// events and sessions, as the flusher writes them, into the empty tables
	// with the rollups' views on; then the rollups' size
	res.settle(ctx, store)
	if res.BothTook, err = insertBoth(ctx, store, events, sessions); err != nil {
		return res, err
	}
	if res.RollupBytes, res.EventBytes, err = store.RollupBytes(ctx); err != nil {
		return res, err
	}
	res.settle(ctx, store)
	clickhouse := pidsOf("clickhouse-serv")
	cpu := cpuOf(clickhouse)
	start := time.Now()
	for i := 0; i < len(events); i += rawBatch {
		if err := store.InsertEvents(ctx, "", events[i:min(i+rawBatch, len(events))]); err != nil {
			return res, err
		}
	}
	res.EventsTook = time.Since(start)
	res.settle(ctx, store)
	res.EventsCPU = cpuOf(clickhouse) - cpu
	if err := store.DropRollupViews(ctx); err != nil {
		return res, err
	}
	if res.BothNoViewsTook, err = insertBoth(ctx, store, events, sessions); err != nil {
		return res, err
	}
	return res, chstore.DropDatabase(ctx, opts, scratch.Database)
}

// settleLimit bounds the wait for ClickHouse's merges before a timing.
const settleLimit = 5 * time.Minute

// settleIdle is the share of one core under which ClickHouse counts as
// idle over a settle poll.
const settleIdle = 0.05

// settle waits until ClickHouse runs no merge and is idle, using under
// settleIdle of a core over half a second (at most settleLimit): so that a
// timing never shares the cores with the merges of what was inserted before
// it (the demo events of the queries phase, an earlier phase's rows, or the
// previous timing's), nor with other work they left (right after the demo
// events were loaded, ClickHouse took 44 % of a core through a minute that
// began with no merge); then until the kernel has written the dirty pages
// they left (sync), which it would otherwise write back during the timing.
// It returns how long it waited, which the report shows.
func settle(ctx context.Context, store *chstore.Store) time.Duration {
	start := time.Now()
	clickhouse := pidsOf("clickhouse-serv")
	const poll = 500 * time.Millisecond
	for time.Since(start) < settleLimit && ctx.Err() == nil {
		cpu := cpuOf(clickhouse)
		select {
		case <-ctx.Done():
		case <-time.After(poll):
		}
		busy := float64(cpuOf(clickhouse)-cpu) / float64(poll)
		var merges uint64
		if err := store.QueryRow(ctx, "SELECT count() FROM system.merges").Scan(&merges); err != nil ||
			(merges == 0 && busy < settleIdle) {
			break
		}
	}
	syscall.Sync()
	return time.Since(start).Round(100 * time.Millisecond)
}

// settle records the wait of the package's settle before one of the three
// timings.
func (r *rawResult) settle(ctx context.Context, store *chstore.Store) {
	r.Settled = append(r.Settled, settle(ctx, store))
}

// joinDurations lists ds for the report ("12.5s, 0s, 3.1s").
func joinDurations(ds []time.Duration) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = d.String()
	}
	return strings.Join(parts, ", ")
}

// insertBoth inserts each batch of events with the session rows of the same
// share, as the flusher does, and returns how long it took.
func insertBoth(ctx context.Context, store *chstore.Store, events []model.EventRow, sessions []model.SessionRow) (time.Duration, error) {
	start := time.Now()
	per := float64(len(sessions)) / float64(max(1, len(events)))
	for i := 0; i < len(events); i += rawBatch {
		j := min(i+rawBatch, len(events))
		if err := store.InsertEvents(ctx, "", events[i:j]); err != nil {
			return 0, err
		}
		a, b := int(float64(i)*per), min(int(float64(j)*per), len(sessions))
		if err := store.InsertSessions(ctx, "", sessions[a:b]); err != nil {
			return 0, err
		}
	}
	return time.Since(start), nil
}

package chstore

import (
	"context"
	"fmt"
	"time"

	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/stats"
)

// RebuildStep reports the progress of RebuildRollups.
type RebuildStep struct {
	Table string
	// Done and Days count the UTC days of the table rebuilt so far.
	Done, Days int
	Took       time.Duration
}

// RebuildRollups rebuilds every rollup table's rows of the whole UTC days
// [from, to) of site ("" = every site) from the raw rows, one table after
// the other: it deletes the table's rows of the range (not for visitor
// blocks, whose states are unions), waits until the deletion has finished,
// then inserts them again a day at a time, calling
// progress after each day. Rows of the range inserted by the views while
// it runs would count twice, so to must not be later than
// stats.RebuildBefore (the caller's rule).
func (s *Store) RebuildRollups(ctx context.Context, site model.SiteID, from, to time.Time, progress func(RebuildStep)) error {
	from, to = from.UTC().Truncate(24*time.Hour), to.UTC().Truncate(24*time.Hour)
	days := int(to.Sub(from) / (24 * time.Hour))
	if days <= 0 {
		return nil
	}
	for i, r := range stats.RollupRebuilds(site, from, to) {
		start := time.Now()
		if r.Delete.SQL != "" {
			if err := s.deleteAndWait(ctx, r.Table, r.Delete); err != nil {
				return err
			}
		}
		for d := 0; d < days; d++ {
			day := from.AddDate(0, 0, d)
			for _, ins := range stats.RollupRebuilds(site, day, day.AddDate(0, 0, 1))[i].Inserts {
				if err := s.conn.Exec(ctx, ins.SQL, ins.Args...); err != nil {
					return fmt.Errorf("chstore: rebuild %s of %s: %w", r.Table, day.Format(time.DateOnly), translate(err))
				}
			}
			if progress != nil {
				progress(RebuildStep{Table: r.Table, Done: d + 1, Days: days, Took: time.Since(start)})
			}
		}
	}
	return nil
}

// deleteAndWait deletes table's rows meeting cond and waits until the
// mutation has finished: a mutation rewrites only the parts that existed
// when it was submitted, and ClickHouse 18.16 cannot wait for it
// (mutations_sync), so system.mutations is watched.
func (s *Store) deleteAndWait(ctx context.Context, table string, cond stats.Statement) error {
	if !safeName.MatchString(table) {
		return fmt.Errorf("chstore: invalid table name %q", table)
	}
	if err := s.mutate(ctx, table, "DELETE WHERE "+cond.SQL, cond.Args...); err != nil {
		return fmt.Errorf("chstore: rebuild %s: delete: %w", table, translate(err))
	}
	return s.waitMutations(ctx, table)
}

// waitMutations waits until no mutation of table is left to do: of its
// local tables on every node of a cluster.
func (s *Store) waitMutations(ctx context.Context, table string) error {
	const q = "SELECT count() FROM system.mutations WHERE database = ? AND table = ? AND is_done = 0"
	for wait := 20 * time.Millisecond; ; wait = min(2*wait, time.Second) {
		var pending uint64
		var err error
		if s.layout.clustered() {
			err = s.everyNode(ctx, func(n *node) error {
				var left uint64
				err := n.conn.QueryRow(ctx, q, s.db, table+"_local").Scan(&left)
				pending += left
				return err
			})
		} else {
			err = s.conn.QueryRow(ctx, q, s.db, table).Scan(&pending)
		}
		if err != nil {
			return fmt.Errorf("chstore: rebuild %s: mutations: %w", table, translate(err))
		}
		if pending == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
	}
}

// EarliestRaw is the time of the earliest raw row (event, session or bot
// event) of site ("" = every site), or the zero time when there is none.
func (s *Store) EarliestRaw(ctx context.Context, site model.SiteID) (time.Time, error) {
	cond, args := "1", []any(nil)
	if site != "" {
		cond, args = "site_key = cityHash64(?)", []any{string(site), string(site), string(site)}
	}
	var unix uint32
	err := s.conn.QueryRow(ctx, "SELECT toUInt32(min(t)) FROM ("+
		"SELECT min(ts) AS t FROM events WHERE "+cond+" HAVING count() > 0 UNION ALL "+
		"SELECT min(started_at) AS t FROM sessions WHERE "+cond+" HAVING count() > 0 UNION ALL "+
		"SELECT min(ts) AS t FROM bot_events WHERE "+cond+" HAVING count() > 0)", args...).Scan(&unix)
	if err != nil {
		return time.Time{}, fmt.Errorf("chstore: earliest row: %w", translate(err))
	}
	if unix == 0 {
		return time.Time{}, nil
	}
	return time.Unix(int64(unix), 0).UTC(), nil
}

// RollupBytes is the size on disk of the rollups' active parts, after
// merging them (OPTIMIZE FINAL, as a long-running table would be), and that
// of the events table (the benchmark's cost of the rollups).
func (s *Store) RollupBytes(ctx context.Context) (rollups, events uint64, err error) {
	for _, table := range stats.RollupTables() {
		if err := s.OptimizeFinal(ctx, table); err != nil {
			return 0, 0, err
		}
	}
	err = s.conn.QueryRow(ctx, "SELECT sumIf(bytes_on_disk, table != 'events'), sumIf(bytes_on_disk, table = 'events')"+
		" FROM system.parts WHERE database = ? AND active AND (has(?, table) OR table = 'events')",
		s.db, stats.RollupTables()).Scan(&rollups, &events)
	if err != nil {
		return 0, 0, fmt.Errorf("chstore: rollup bytes: %w", translate(err))
	}
	return rollups, events, nil
}

// DropRollupViews drops the materialised views that keep the rollups, so
// that the benchmark can time inserts without them (on its scratch
// database; tally itself never does this).
func (s *Store) DropRollupViews(ctx context.Context) error {
	rows, err := s.conn.Query(ctx, "SELECT name FROM system.tables WHERE database = ? AND engine = 'MaterializedView'", s.db)
	if err != nil {
		return fmt.Errorf("chstore: drop views: %w", translate(err))
	}
	var views []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			return fmt.Errorf("chstore: drop views: %w", err)
		}
		views = append(views, name)
	}
	rows.Close()
	for _, v := range views {
		if !safeName.MatchString(v) {
			return fmt.Errorf("chstore: invalid view name %q", v)
		}
		if err := s.conn.Exec(ctx, "DROP TABLE IF EXISTS "+v); err != nil {
			return fmt.Errorf("chstore: drop view %s: %w", v, translate(err))
		}
	}
	return nil
}

// BuildBlocks builds the visitor blocks that had closed at now and are not
// built yet, in the order of stats.BlockBuilds, and returns how many it
// built: the days, then the longer blocks whose days are built (a second
// round, once the first has recorded the days). now must be ClickHouse's
// clock (ServerTime): the blocks' view tells a late row from a live one by
// it.
func (s *Store) BuildBlocks(ctx context.Context, now time.Time) (int, error) {
	n := 0
	for {
		builds, err := s.blockBuilds(ctx, now)
		if err != nil || len(builds) == 0 {
			return n, err
		}
		for _, b := range builds {
			for _, st := range []stats.Statement{b.Insert, b.Record} {
				if err := s.conn.Exec(ctx, st.SQL, st.Args...); err != nil {
					return n, fmt.Errorf("chstore: build %s of level %d from %s: %w", b.Table, b.Level, b.Start.Format(time.DateOnly), translate(err))
				}
			}
			n++
		}
	}
}

// blockBuilds lists the builds due at now (stats.BlockBuilds).
func (s *Store) blockBuilds(ctx context.Context, now time.Time) ([]stats.BlockBuild, error) {
	built, err := stats.ReadBuilt(ctx, s)
	if err != nil {
		return nil, err
	}
	type day struct {
		table string
		start int64
	}
	filled := map[day]bool{}
	var d day
	var start time.Time
	q := stats.FilledDays(now)
	if err := s.Each(ctx, q.SQL, q.Args, []any{&d.table, &start}, func() { filled[day{d.table, start.Unix()}] = true }); err != nil {
		return nil, fmt.Errorf("chstore: build visitor blocks: %w", err)
	}
	return stats.BlockBuilds(built, func(table string, at time.Time) bool { return filled[day{table, at.Unix()}] }, now), nil
}

// BuildClosedBlocks is BuildBlocks at ClickHouse's clock now.
func (s *Store) BuildClosedBlocks(ctx context.Context) (int, error) {
	now, err := s.ServerTime(ctx)
	if err != nil {
		return 0, err
	}
	return s.BuildBlocks(ctx, now)
}

// ServerTime is ClickHouse's clock.
func (s *Store) ServerTime(ctx context.Context) (time.Time, error) {
	var now time.Time
	if err := s.conn.QueryRow(ctx, "SELECT now()").Scan(&now); err != nil {
		return time.Time{}, fmt.Errorf("chstore: server time: %w", translate(err))
	}
	return now, nil
}

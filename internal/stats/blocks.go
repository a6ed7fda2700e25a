package stats

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"
)

// Visitor blocks are built once their days are closed, rather than by the
// blocks' view on every insert: single days from the raw session rows, then
// the blocks of 4 and 16 days from their days. A day's state kept by the
// view was a state a value for every insert's part, rebuilt by every merge
// of the day's parts for as long as the day took rows; a block of 16 days
// was rewritten by every merge for 16 days (on ClickHouse alone, 100
// inserts of 14,000 session rows cost the views 13.5 s of CPU more with the
// blocks of 4 and 16 days than with single days only:
// bench/results/2026-11-27-day-states.md; and the days' own views what
// bench/results/2026-11-27-built-days.md measures).
//
// So the view writes a late session row only — of a session that started
// more than lateAfter before the insert — into its blocks of every level, as
// a build would have; a live row it leaves to the build. A day is built
// (BlockBuilds) once it ended closedAfter ago: from then on no row reaches
// it but a late one. Its build rolls the day's session rows up into one
// state a value; a longer block's build merges the states of its days once
// they are all built. Each build then records its block in
// blocksBuiltTable. The planner merges the built blocks' states and reads
// the days not built yet from the raw rows (Built). Visitor states are
// unions, so a block built twice, or a late row written into a built block,
// counts every visitor once.
const (
	// lateAfter is how old a session's start must be at its row's insert
	// for the view to write the row. A session's visitor and dimensions are
	// those of its first row, which reaches ClickHouse within seconds of
	// the session's start; its later rows (new versions, each with a cancel
	// row) repeat them, and few sessions go on for two hours (they end after
	// 30 idle minutes). So only rows held back (an outage, a backlog in the
	// log) or loaded with past times are late, and what is counted does not
	// depend on the horizon, only what a row costs and how long the newest
	// day is read raw (closedAfter).
	lateAfter = 2 * time.Hour
	// closedAfter is how long after its end a block is built: a row not late
	// at its insert started at most lateAfter before that insert, and before
	// its block's end, so the insert began before the end plus lateAfter;
	// the build reads the block an hour after that, when the insert is done
	// (an insert runs for seconds at most).
	closedAfter = lateAfter + time.Hour
	// buildLookback bounds how far back a build looks for blocks not built
	// yet: those of rows loaded with their past times (`tally demo`), or of
	// days when no server ran. Older ones stay read from the raw rows.
	buildLookback = 400 * 24 * time.Hour
)

// blocksBuiltTable records the blocks built (clickhouse/0016_closed_blocks.sql).
const blocksBuiltTable = "rollup_blocks_built"

// Built reports whether the block of level (0 for a day) starting at start
// of the blocks table is built.
type Built func(table string, level int, start time.Time) bool

// has reports whether b of table is built (nil: none is).
func (f Built) has(table string, b block) bool { return f != nil && f(table, b.level, b.start) }

// ReadBuilt reads which blocks are built.
func ReadBuilt(ctx context.Context, st Store) (Built, error) {
	type key struct {
		table string
		level uint8
		start int64
	}
	built := map[key]bool{}
	var k key
	var start time.Time
	err := st.Each(ctx, "SELECT DISTINCT block_table, level, started_at FROM "+blocksBuiltTable, nil,
		[]any{&k.table, &k.level, &start}, func() { built[key{k.table, k.level, start.Unix()}] = true })
	if err != nil {
		return nil, fmt.Errorf("stats: read the built blocks: %w", err)
	}
	return func(table string, level int, start time.Time) bool {
		return built[key{table, uint8(level), start.Unix()}]
	}, nil
}

// BlockBuild builds one block for every site (blockBuild), then records
// it. Run Insert, then Record: a build cut short between the
// two is done again, which changes nothing.
type BlockBuild struct {
	Table          string
	Level          int
	Start          time.Time
	Insert, Record Statement
}

// buildWindow is the whole UTC days a build at now looks at, as day numbers
// since 1970-01-01: [first, closed), closed being the first day whose
// blocks are not closed at now.
func buildWindow(now time.Time) (first, closed int64) {
	const day = int64(dayGrain / time.Second)
	closed = now.Add(-closedAfter).Unix() / day
	return now.Add(-closedAfter-buildLookback).Unix() / day, closed
}

// FilledDays selects the days of buildWindow that hold session rows, by
// blocks table: (table, day) rows, read from the days' sums (the rollup's
// own table, a few rows a value and day). A day without rows needs no
// build, nor does a block none of whose days has any.
func FilledDays(now time.Time) Statement {
	const day = int64(dayGrain / time.Second)
	first, closed := buildWindow(now)
	var parts []string
	var args []any
	for _, r := range rollups {
		if r.blocks {
			tc := timeColumn[r.source]
			parts = append(parts, "SELECT '"+r.blocksTable()+"' AS block_table, "+tc+" FROM "+r.table+
				" WHERE "+tc+" >= ? AND "+tc+" < ? GROUP BY "+tc)
			args = append(args, time.Unix(first*day, 0).UTC(), time.Unix(closed*day, 0).UTC())
		}
	}
	return Statement{strings.Join(parts, " UNION ALL "), args}
}

// BlockBuilds lists the blocks that closed by now within buildLookback,
// that built does not hold and of which filled holds a day (FilledDays): by
// table, the days first, oldest first, then the longer blocks, longest
// first, of which built holds every filled day (a block is built from its
// days, so a block whose days are built by this list is built by the next).
func BlockBuilds(built Built, filled func(table string, day time.Time) bool, now time.Time) []BlockBuild {
	first, closed := buildWindow(now)
	var out []BlockBuild
	for _, r := range rollups {
		if !r.blocks {
			continue
		}
		table := r.blocksTable()
		for _, level := range append([]int{0}, blockLevels[:len(blockLevels)-1]...) {
			n := int64(1) << level
			for a := (first + n - 1) / n * n; a+n <= closed; a += n {
				b := block{level: level, start: time.Unix(a*int64(dayGrain/time.Second), 0).UTC()}
				if !built.has(table, b) && b.holdsAny(table, filled) && (level == 0 || b.daysBuilt(table, built, filled)) {
					out = append(out, r.blockBuild(b))
				}
			}
		}
	}
	return out
}

// holdsAny reports whether filled holds a day of b.
func (b block) holdsAny(table string, filled func(table string, day time.Time) bool) bool {
	for d := b.start; d.Before(b.end()); d = d.Add(dayGrain) {
		if filled(table, d) {
			return true
		}
	}
	return false
}

// daysBuilt reports whether built holds every day of b that filled holds.
func (b block) daysBuilt(table string, built Built, filled func(table string, day time.Time) bool) bool {
	for d := b.start; d.Before(b.end()); d = d.Add(dayGrain) {
		if filled(table, d) && !built.has(table, block{level: 0, start: d}) {
			return false
		}
	}
	return true
}

// blockBuild is the build of block b of r's visitor blocks, for every
// site: a day rolls its session rows up by value, a longer block merges
// the states of its days. A longer block's level is not named: level = 0
// would read the alias.
func (r rollup) blockBuild(b block) BlockBuild {
	tc := timeColumn[r.source]
	table := r.blocksTable()
	insert := Statement{"INSERT INTO " + table + " (" + strings.Join(r.blockColumns(), ", ") + ") ", nil}
	if b.level == 0 {
		insert.SQL += r.blocksSQL(0, timeRange(r.source))
		insert.Args = timeArgs(r.source, b.start, b.end())
	} else {
		insert.SQL += r.rollUp(true, dayGrain<<b.level, fmt.Sprintf("toUInt8(%d)", b.level), r.visitorMetrics(),
			"level = 0 AND "+tc+" >= ? AND "+tc+" < ?")
		insert.Args = []any{b.start, b.end()}
	}
	return BlockBuild{Table: table, Level: b.level, Start: b.start,
		Insert: insert,
		Record: Statement{"INSERT INTO " + blocksBuiltTable + " (block_table, level, started_at) SELECT ?, toUInt8(?), ?",
			[]any{table, b.level, b.start}},
	}
}

// builtCache holds what ReadBuilt read, read again at most every
// builtRefresh: a block another process built is read from its days (a
// day from its raw rows) until then.
type builtCache struct {
	mu    sync.Mutex
	built Built
	at    time.Time
}

// builtRefresh is how long a read of the built blocks is used (a read is
// of about 2,000 rows a year: four tables of 365 days, 91 blocks of 4 days
// and 23 of 16).
const builtRefresh = 15 * time.Second

// builtBlocks is which blocks are built, as last read. A failed read keeps
// the last answer (none before the first), which is never wrong: a block not
// known to be built is read from its days, and a day from its raw rows.
func (s *Service) builtBlocks(ctx context.Context) Built {
	c := &s.built
	c.mu.Lock()
	defer c.mu.Unlock()
	if now := time.Now(); now.Sub(c.at) >= builtRefresh {
		built, err := ReadBuilt(ctx, s.store)
		if err != nil {
			s.log.Warn("visitor blocks: using the last known built blocks", "error", err)
		} else {
			c.built = built
		}
		c.at = now
	}
	return c.built
}

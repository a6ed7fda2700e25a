package stats

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"
)

// Visitor blocks of more than a day (levels 2 and 4: 4 and 16 UTC days) are
// built from their days once they are closed, rather than by the blocks'
// view on every insert. A block of 16 days is a state of up to 16 days of
// visitors: kept by the view, every merge of its part rewrote it for 16
// days. On ClickHouse alone, 100 inserts of 14,000 session rows cost the
// views 13.5 s of CPU more with them than with blocks of single days only
// (bench/results/2026-11-27-day-states.md).
//
// So the view writes a live session row into its day's block only, and a
// late row — of a session that started more than lateAfter before the
// insert — into its blocks of every level, as a build would have. A block
// is built (BlockBuilds) once it ended closedAfter ago: from then on no row
// reaches its days but a late one. The build merges the states of its days
// into one state a value, then records the block in blocksBuiltTable; the
// planner merges a built block's state, and the states of its days for a
// block not built yet (Built). Visitor states are unions, so a block built
// twice, or a late row written into a built block, counts every visitor
// once.
const (
	// lateAfter is how old a session's start must be at its row's insert
	// for the view to write the row into its blocks of every level. A
	// session lasts at most a day (Rule.MaxAge) and its rows reach
	// ClickHouse within seconds, so only rows held back (an outage, a
	// backlog in the log) or loaded with past times are late. What is
	// counted does not depend on it, only what a row costs (closedAfter).
	lateAfter = 26 * time.Hour
	// closedAfter is how long after its end a block is built: a row not late
	// at its insert started at most lateAfter before that insert, and before
	// its block's end, so the insert began before the end plus lateAfter;
	// the build reads the block an hour after that, when the insert is done.
	closedAfter = lateAfter + time.Hour
	// buildLookback bounds how far back a build looks for blocks not built
	// yet: those of rows loaded with their past times (`tally demo`), or of
	// days when no server ran. Older ones stay read from their days.
	buildLookback = 400 * 24 * time.Hour
)

// blocksBuiltTable records the blocks built (clickhouse/0016_closed_blocks.sql).
const blocksBuiltTable = "rollup_blocks_built"

// Built reports whether the block of level (above 0) starting at start of
// the blocks table is built.
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

// BlockBuild builds one block from the states of its days, for every site,
// then records it. Run Insert, then Record: a build cut short between the
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

// FilledDays selects the days of buildWindow that hold states of level 0,
// by blocks table: (table, day) rows. A block none of whose days holds one
// needs no build.
func FilledDays(now time.Time) Statement {
	const day = int64(dayGrain / time.Second)
	first, closed := buildWindow(now)
	var parts []string
	var args []any
	for _, r := range rollups {
		if r.blocks {
			tc := timeColumn[r.source]
			parts = append(parts, "SELECT '"+r.blocksTable()+"' AS block_table, "+tc+" FROM "+r.blocksTable()+
				" WHERE level = 0 AND "+tc+" >= ? AND "+tc+" < ? GROUP BY "+tc)
			args = append(args, time.Unix(first*day, 0).UTC(), time.Unix(closed*day, 0).UTC())
		}
	}
	return Statement{strings.Join(parts, " UNION ALL "), args}
}

// BlockBuilds lists the blocks of more than a day that closed by now within
// buildLookback, that built does not hold and of which filled holds a day
// (FilledDays): by table, longest first, then oldest first.
func BlockBuilds(built Built, filled func(table string, day time.Time) bool, now time.Time) []BlockBuild {
	first, closed := buildWindow(now)
	var out []BlockBuild
	for _, r := range rollups {
		if !r.blocks {
			continue
		}
		for _, level := range blockLevels {
			if level == 0 {
				continue
			}
			n := int64(1) << level
			for a := (first + n - 1) / n * n; a+n <= closed; a += n {
				b := block{level: level, start: time.Unix(a*int64(dayGrain/time.Second), 0).UTC()}
				if !built.has(r.blocksTable(), b) && b.holdsAny(r.blocksTable(), filled) {
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

// blockBuild is the build of block b of r's visitor blocks: the union of
// its days' states, by site and value. Its level is not named: level = 0
// would read the alias.
func (r rollup) blockBuild(b block) BlockBuild {
	tc := timeColumn[r.source]
	table := r.blocksTable()
	where := "level = 0 AND " + tc + " >= ? AND " + tc + " < ?"
	return BlockBuild{Table: table, Level: b.level, Start: b.start,
		Insert: Statement{"INSERT INTO " + table + " (" + strings.Join(r.blockColumns(), ", ") + ") " +
			r.rollUp(true, dayGrain<<b.level, fmt.Sprintf("toUInt8(%d)", b.level), r.visitorMetrics(), where),
			[]any{b.start, b.end()}},
		Record: Statement{"INSERT INTO " + blocksBuiltTable + " (block_table, level, started_at) SELECT ?, toUInt8(?), ?",
			[]any{table, b.level, b.start}},
	}
}

// builtCache holds what ReadBuilt read, read again at most every
// builtRefresh: a block another process built is read from its days until
// then.
type builtCache struct {
	mu    sync.Mutex
	built Built
	at    time.Time
}

// builtRefresh is how long a read of the built blocks is used (a read is
// of a few hundred rows a year).
const builtRefresh = 15 * time.Second

// builtBlocks is which blocks are built, as last read. A failed read keeps
// the last answer (none before the first), which is never wrong: a block not
// known to be built is read from its days.
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

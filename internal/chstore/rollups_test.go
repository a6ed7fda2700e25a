package chstore_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tally-analytics/tally/internal/chstore"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/stats"
	"github.com/tally-analytics/tally/internal/testenv"
)

// The views of 0008_rollups keep every rollup in step with the inserts;
// `tally rollups rebuild` (RebuildRollups) and a replay of the migration's
// backfill build exactly what the views built, from the raw rows, without
// doubling; a rollup left short is mended; deleting a site deletes its rollups.
func TestRollupsRebuild(t *testing.T) {
	s, _ := testenv.ClickHouse(t)
	ctx := context.Background()
	t0 := time.Date(2026, 5, 4, 23, 50, 0, 0, time.UTC)
	google := model.Attribution{ReferrerSource: "Google", SourceType: "search", Device: "Desktop", Browser: "Chrome", OS: "Windows",
		CountryCode: "GB", RegionCode: "GB-ENG", RegionName: "England", City: "London", UTMSource: "news", UTMCampaign: "spring"}
	direct := model.Attribution{ReferrerSource: "Direct / None", SourceType: "direct", Device: "Mobile", Browser: "Safari", OS: "iOS"}
	var events []model.EventRow
	ev := func(site model.SiteID, at time.Time, visitor uint64, name, path string, attr model.Attribution) {
		events = append(events, model.EventRow{SiteID: site, Timestamp: at, EventID: fmt.Sprint("e", len(events)), Name: name,
			VisitorID: visitor, SessionID: visitor, Pathname: path, Attribution: attr})
	}
	ev("s1", t0, 1, "pageview", "/a", google)
	ev("s1", t0.Add(5*time.Minute), 1, "signup", "/a", google)
	ev("s1", t0.Add(20*time.Minute), 1, "pageview", "/b", google) // May 5, another quarter
	ev("s1", t0.Add(26*time.Hour), 2, "pageview", "/", direct)
	ev("s2", t0, 3, "pageview", "/a", direct)
	session := func(site model.SiteID, id uint64, sign int8, version uint32, start time.Time, secs, pv uint32, bounce bool, exit string, attr model.Attribution) model.SessionRow {
		return model.SessionRow{SiteID: site, SessionID: id, VisitorID: id, Sign: sign, Version: version, Start: start,
			End: start.Add(time.Duration(secs) * time.Second), Pageviews: pv, IsBounce: bounce, EntryPage: "/a", ExitPage: exit, Attribution: attr}
	}
	// visitor 1's session: a bounce on /a, then (cancel, new state) twice
	first := []model.SessionRow{session("s1", 1, 1, 1, t0, 0, 1, true, "/a", google), session("s3", 3, 1, 1, t0, 0, 1, true, "/a", direct)}
	later := []model.SessionRow{
		session("s1", 1, -1, 1, t0, 0, 1, true, "/a", google), session("s1", 1, 1, 2, t0, 300, 1, false, "/a", google),
		session("s1", 1, -1, 2, t0, 300, 1, false, "/a", google), session("s1", 1, 1, 3, t0, 1200, 2, false, "/b", google),
		session("s1", 2, 1, 1, t0.Add(26*time.Hour), 0, 1, true, "/", direct),
	}
	bots := []model.BotEventRow{{SiteID: "s1", Timestamp: t0, EventID: "b1", Reason: "crawler"}, {SiteID: "s2", Timestamp: t0, EventID: "b2", Reason: "ai_agent"}}
	if err := s.InsertEvents(ctx, "", events[:2]); err != nil { // several inserts: several blocks through the views
		t.Fatal(err)
	}
	if err := s.InsertEvents(ctx, "", events[2:]); err != nil {
		t.Fatal(err)
	}
	if err := s.InsertSessions(ctx, "", first); err != nil {
		t.Fatal(err)
	}
	if err := s.InsertSessions(ctx, "", later); err != nil {
		t.Fatal(err)
	}
	if err := s.InsertBotEvents(ctx, "", bots); err != nil {
		t.Fatal(err)
	}
	want := rollupRows(t, s)
	// figures worked out by hand
	for _, line := range []string{
		"site_quarters s1 2026-05-04 23:45:00 | 1 1 2",                  // visitors, pageviews, events (a signup)
		"site_quarters s1 2026-05-05 00:00:00 | 1 1 1",                  // /b at 00:10
		"session_quarters s1 2026-05-04 23:45:00 | 1 0 1200 2",          // one live session: no bounce, 1,200 s, 2 pageviews
		"source_days s1 2026-05-04 00:00:00 Google search | 1 0 1200 2", // its visitors are in its blocks
		// May 4 is day 20,577 since 1970: its own block, then those of 4 and
		// 16 days from day 20,576 (May 3), which 16 divides
		"source_days_blocks s1 0 2026-05-04 00:00:00 Google search | 1",
		"source_days_blocks s1 2 2026-05-03 00:00:00 Google search | 1",
		"source_days_blocks s1 4 2026-05-03 00:00:00 Google search | 1",
		"exit_days s1 2026-05-04 00:00:00 /b | 1 0 1200 2", // the exit page moved from /a to /b
		"event_days s1 2026-05-04 00:00:00 0 signup | 1 1",
		"bot_days s2 2026-05-04 00:00:00 ai_agent | 1",
		"events_by_path s1 2026-05-05 00:10:00 pageview /b   | 1", // no props (two empty lists); visitor 1
	} {
		if !strings.Contains(want, line+"\n") {
			t.Errorf("the rollups lack %q:\n%s", line, want)
		}
	}
	if strings.Contains(want, "exit_days s1 2026-05-04 00:00:00 /a |") {
		t.Errorf("the exit page /a keeps a live session:\n%s", want)
	}

	// a rollup left short (a view's insert failed) is mended for all sites
	if err := s.Exec(ctx, "ALTER TABLE source_days DELETE WHERE 1"); err != nil {
		t.Fatal(err)
	}
	if err := s.Exec(ctx, "ALTER TABLE page_days DELETE WHERE 1"); err != nil {
		t.Fatal(err)
	}
	if err := s.Exec(ctx, "ALTER TABLE source_days_blocks DELETE WHERE level = 4"); err != nil {
		t.Fatal(err)
	}
	// blocks are mended without a deletion of their own: wait until the
	// level is gone, so that only the rebuild can bring it back
	for deadline := time.Now().Add(10 * time.Second); strings.Contains(rollupRows(t, s), "source_days_blocks s1 4 "); {
		if time.Now().After(deadline) {
			t.Fatal("the blocks of 16 days are still there")
		}
		time.Sleep(50 * time.Millisecond)
	}
	from, to := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 5, 10, 0, 0, 0, 0, time.UTC)
	var steps []chstore.RebuildStep
	if err := s.RebuildRollups(ctx, "", from, to, func(st chstore.RebuildStep) { steps = append(steps, st) }); err != nil {
		t.Fatal(err)
	}
	if got := rollupRows(t, s); got != want {
		t.Errorf("after a rebuild of every site:\n got %s\nwant %s", got, want)
	}
	if n := len(stats.RollupTables()) * 9; len(steps) != n || steps[len(steps)-1].Done != 9 {
		t.Errorf("%d progress steps, want %d (a day of each table): %+v", len(steps), n, steps[len(steps)-1])
	}
	// one site, from a later day: the rest stays
	if err := s.RebuildRollups(ctx, "s1", time.Date(2026, 5, 5, 0, 0, 0, 0, time.UTC), to, nil); err != nil {
		t.Fatal(err)
	}
	if got := rollupRows(t, s); got != want {
		t.Errorf("after a rebuild of s1 from May 5:\n got %s\nwant %s", got, want)
	}
	// the migrations' backfills (the declared ones, which the migrations
	// hold: TestRollupMigrationMatchesDeclarations) rebuild rather than
	// double
	for _, stmt := range stats.RollupViews() {
		if strings.HasPrefix(stmt, "TRUNCATE ") || strings.HasPrefix(stmt, "INSERT ") {
			if err := s.Exec(ctx, stmt); err != nil {
				t.Fatalf("replaying %s: %v", stmt, err)
			}
		}
	}
	if got := rollupRows(t, s); got != want {
		t.Errorf("after replaying the backfills:\n got %s\nwant %s", got, want)
	}
	if earliest, err := s.EarliestRaw(ctx, "s1"); err != nil || !earliest.Equal(t0) {
		t.Errorf("earliest row of s1: %v, %v; want %v", earliest, err, t0)
	}
	if earliest, err := s.EarliestRaw(ctx, "nobody"); err != nil || !earliest.IsZero() {
		t.Errorf("earliest row of no site: %v, %v", earliest, err)
	}

	// the benchmark's measures: sizes, and inserts without the views
	if rolled, raw, err := s.RollupBytes(ctx); err != nil || rolled == 0 || raw == 0 {
		t.Errorf("rollup bytes %d, event bytes %d: %v", rolled, raw, err)
	}
	if err := s.DropRollupViews(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.InsertEvents(ctx, "", events[:1]); err != nil {
		t.Fatal(err)
	}
	if got := rollupRows(t, s); got != want {
		t.Errorf("an insert without the views changed the rollups:\n%s", got)
	}

	if err := s.DeleteSite(ctx, "s2"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for strings.Contains(rollupRows(t, s), " s2 ") {
		if time.Now().After(deadline) {
			t.Fatalf("site s2 still has rollups:\n%s", rollupRows(t, s))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// rollupRows lists every row of the declared rollups, page_days and
// events_by_path, merged by key, one line each: "table site unit dims... |
// figures...". Rows whose figures are all zero (groups whose sessions moved
// elsewhere) are left out.
func rollupRows(t *testing.T, s *chstore.Store) string {
	t.Helper()
	ctx := context.Background()
	var b strings.Builder
	for _, table := range stats.RollupTables() {
		if table == "page_visitor_days" {
			continue // page_days is enough to see the pages rebuilt
		}
		var keys, figures []string
		rows, err := s.QueryRows(ctx, "SELECT name, type FROM system.columns WHERE database = currentDatabase() AND table = ?", table)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range rows {
			name, typ := c[0], c[1]
			switch {
			case name == "site_key":
				keys = append(keys, "if(site_key = cityHash64('s1'), 's1', if(site_key = cityHash64('s2'), 's2', 's3'))")
			case strings.HasPrefix(typ, "AggregateFunction"):
				figures = append(figures, "toString(uniqCombinedMerge(17)("+name+"))")
			case typ == "Array(String)":
				keys = append(keys, "arrayStringConcat("+name+", ',')")
			case typ == "String" || typ == "DateTime" || typ == "Date" || name == "is_pageview" || name == "level":
				keys = append(keys, "toString("+name+")")
			default:
				figures = append(figures, "toString(sum("+name+"))")
			}
		}
		q := "SELECT concat(" + strings.Join(keys, ", ' ', ") + ", ' |', " +
			"arrayStringConcat(arrayMap(x -> concat(' ', x), [" + strings.Join(figures, ", ") + "]))) AS line" +
			" FROM " + table + " GROUP BY " + strings.Join(keys, ", ") + " ORDER BY line"
		lines, err := s.QueryRows(ctx, q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		for _, l := range lines {
			if strings.Trim(strings.SplitN(l[0], "|", 2)[1], " 0") == "" {
				continue
			}
			b.WriteString(table + " " + l[0] + "\n")
		}
	}
	return b.String()
}

// The blocks' views write a live session row into its day's block only, and
// a late one (its session started more than 26 hours before the insert,
// by ClickHouse's clock) into every level. Once a block has closed,
// BuildBlocks merges its days into it and records it, once; a report then
// merges the block, and answers what raw rows answer.
func TestVisitorBlocksBuiltOnceClosed(t *testing.T) {
	s, _ := testenv.ClickHouse(t)
	ctx := context.Background()
	now, err := s.ServerTime(ctx)
	if err != nil {
		t.Fatal(err)
	}
	google := model.Attribution{ReferrerSource: "Google", SourceType: "search"}
	session := func(visitor uint64, start time.Time) model.SessionRow {
		return model.SessionRow{SiteID: "s1", SessionID: visitor, VisitorID: visitor, Sign: 1, Version: 1, Start: start,
			End: start.Add(time.Minute), Pageviews: 1, IsBounce: true, EntryPage: "/", ExitPage: "/", Attribution: google}
	}
	// visitors 1 and 2 live (30 and 20 minutes ago), 3 late (10 days ago)
	rows := []model.SessionRow{session(1, now.Add(-30*time.Minute)), session(2, now.Add(-20*time.Minute)), session(3, now.Add(-240*time.Hour))}
	if err := s.InsertSessions(ctx, "", rows); err != nil {
		t.Fatal(err)
	}
	byLevel := func() string {
		lines, err := s.QueryRows(ctx, "SELECT concat(toString(level), ':', toString(uniqCombinedMerge(17)(visitors))) AS l"+
			" FROM source_days_blocks WHERE site_key = cityHash64('s1') GROUP BY level ORDER BY level")
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, l := range lines {
			out = append(out, l[0])
		}
		return strings.Join(out, " ")
	}
	// the view writes the late row only, into every level
	if got, want := byLevel(), "0:1 2:1 4:1"; got != want {
		t.Errorf("visitors by level before a build: %s, want %s", got, want)
	}
	// the 32 days from the 16-day block holding visitor 3, by source
	const dayLen = int64(24 * time.Hour / time.Second)
	start := time.Unix(now.Add(-240*time.Hour).Unix()/(16*dayLen)*(16*dayLen), 0).UTC()
	q := stats.Query{Table: stats.Sessions, Site: "s1", From: start, To: start.Add(32 * 24 * time.Hour),
		Dimensions: []stats.Dimension{stats.Source}, Metrics: []stats.Metric{stats.Visitors}}
	answer := func(q stats.Query) string {
		sql, args, err := q.Build()
		if err != nil {
			t.Fatal(err)
		}
		res, err := s.Rows(ctx, sql, args, 1, 1)
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(res.Rows)
	}
	raw := answer(q)
	if raw != "[{[Google] [3]}]" {
		t.Fatalf("from raw rows: %s", raw)
	}
	// nothing built yet: the days are read from the raw rows
	rolled := q
	rolled.Rollups = true
	if rolled.Built, err = stats.ReadBuilt(ctx, s); err != nil {
		t.Fatal(err)
	}
	if got := answer(rolled); got != raw {
		t.Errorf("before a build: %s, from raw rows: %s", got, raw)
	}

	// 20 days on, every block of theirs has closed
	later := now.Add(20 * 24 * time.Hour)
	n, err := s.BuildBlocks(ctx, later)
	if err != nil {
		t.Fatal(err)
	}
	// in each of the four blocks tables, each row's day, then every block
	// of 4 and of 16 days holding one (the late row's too: the view wrote
	// its blocks, but no build recorded them): days whose number 4 (16)
	// divides start them, so two rows share a block when their day numbers,
	// divided by 4 (16), do
	days, fours, sixteens := map[int64]bool{}, map[int64]bool{}, map[int64]bool{}
	for _, r := range rows {
		d := r.Start.Unix() / dayLen
		days[d], fours[d/4], sixteens[d/16] = true, true, true
	}
	if want := 4 * (len(days) + len(fours) + len(sixteens)); n != want {
		t.Errorf("%d blocks built, want %d", n, want)
	}
	if got, want := byLevel(), "0:3 2:3 4:3"; got != want {
		t.Errorf("visitors by level after a build: %s, want %s", got, want)
	}
	if again, err := s.BuildBlocks(ctx, later); err != nil || again != 0 {
		t.Errorf("a second build built %d blocks (%v), want 0", again, err)
	}
	built, err := stats.ReadBuilt(ctx, s)
	if err != nil {
		t.Fatal(err)
	}

	// the built blocks give what raw rows give
	if !built("source_days_blocks", 4, start) {
		t.Errorf("the block of 16 days from %s is not recorded", start)
	}
	rolled.Built = built
	if got := answer(rolled); got != raw {
		t.Errorf("from the blocks: %s, from raw rows: %s", got, raw)
	}
}

package stats

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tally-analytics/tally/clickhouse"
	"github.com/tally-analytics/tally/internal/migrations"
	"github.com/tally-analytics/tally/internal/model"
)

// The migration's views and backfills are the declarations' SQL: one rule,
// in one place.
func TestRollupMigrationMatchesDeclarations(t *testing.T) {
	ms, err := migrations.Load(clickhouse.Migrations)
	if err != nil {
		t.Fatal(err)
	}
	flat := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	var stmts []string
	for _, m := range ms {
		if m.Name == "rollups" {
			for _, s := range m.Statements {
				stmts = append(stmts, flat(s))
			}
		}
	}
	if len(stmts) == 0 {
		t.Fatal("no rollups migration")
	}
	have := strings.Join(stmts, "\n")
	for _, want := range RollupViews() {
		if !strings.Contains("\n"+have+"\n", "\n"+flat(want)+"\n") {
			t.Errorf("the migration lacks the declared statement\n%s", want)
		}
	}
	for _, table := range RollupTables()[2:] {
		if !strings.Contains(have, "CREATE TABLE IF NOT EXISTS "+table+" (") {
			t.Errorf("the migration does not create %s", table)
		}
	}
}

func TestRollupPlans(t *testing.T) {
	day := func(s string, loc *time.Location) time.Time {
		d, err := time.ParseInLocation(time.DateOnly, s, loc)
		if err != nil {
			t.Fatal(err)
		}
		return d.UTC()
	}
	zone := func(name string) *time.Location {
		loc, err := time.LoadLocation(name)
		if err != nil {
			t.Fatal(err)
		}
		return loc
	}
	ny, kolkata, chatham := zone("America/New_York"), zone("Asia/Kolkata"), zone("Pacific/Chatham")
	week := func(loc *time.Location) (time.Time, time.Time) { return day("2026-05-01", loc), day("2026-05-08", loc) }
	q := func(t Table, loc *time.Location, dims []Dimension, metrics []Metric, filters ...Filter) Query {
		from, to := week(loc)
		return Query{Table: t, Site: "s1", From: from, To: to, Dimensions: dims, Metrics: metrics, Filters: filters, Rollups: true}
	}
	utc := func(s string) time.Time {
		ts, err := time.Parse(time.DateTime, s)
		if err != nil {
			t.Fatal(err)
		}
		return ts
	}
	type plan struct {
		Table string
		Units [2]time.Time
		Edges [][2]time.Time
	}
	tests := []struct {
		name string
		q    Query
		want *plan // nil: raw rows only
	}{
		{"overview series in Kolkata: whole quarters", q(Events, kolkata, []Dimension{Day("Asia/Kolkata")}, []Metric{Visitors, Pageviews}),
			&plan{"site_quarters", [2]time.Time{utc("2026-04-30 18:30:00"), utc("2026-05-07 18:30:00")}, nil}},
		{"overview series in Chatham (+12:45)", q(Events, chatham, []Dimension{Day("Pacific/Chatham")}, []Metric{Visitors}),
			&plan{"site_quarters", [2]time.Time{utc("2026-04-30 11:15:00"), utc("2026-05-07 11:15:00")}, nil}},
		{"sessions of the overview", q(Sessions, ny, nil, []Metric{SessionCount, Bounces, DurationSum}),
			&plan{"session_quarters", [2]time.Time{utc("2026-05-01 04:00:00"), utc("2026-05-08 04:00:00")}, nil}},
		{"sources in New York: UTC days and two edges", q(Sessions, ny, []Dimension{Source, SourceType}, []Metric{Visitors, Pageviews, SessionCount, Bounces}),
			&plan{"source_days", [2]time.Time{utc("2026-05-02 00:00:00"), utc("2026-05-08 00:00:00")},
				[][2]time.Time{{utc("2026-05-01 04:00:00"), utc("2026-05-02 00:00:00")}, {utc("2026-05-08 00:00:00"), utc("2026-05-08 04:00:00")}}}},
		{"browsers of one device", q(Sessions, time.UTC, []Dimension{Browser}, []Metric{Visitors}, Eq(Device, "Mobile")),
			&plan{"device_days", [2]time.Time{utc("2026-05-01 00:00:00"), utc("2026-05-08 00:00:00")}, nil}},
		{"campaigns", q(Sessions, time.UTC, []Dimension{UTMCampaign}, []Metric{Visitors}, NotEq(UTMCampaign, "")),
			&plan{"utm_days", [2]time.Time{utc("2026-05-01 00:00:00"), utc("2026-05-08 00:00:00")}, nil}},
		{"cities of a region", q(Sessions, time.UTC, []Dimension{City}, []Metric{Visitors}, Eq(Country, "US"), Eq(Region, "US-CA")),
			&plan{"location_days", [2]time.Time{utc("2026-05-01 00:00:00"), utc("2026-05-08 00:00:00")}, nil}},
		{"custom events", q(Events, time.UTC, []Dimension{EventName}, []Metric{EventCount, Visitors}, NotEq(IsPageview, 1)),
			&plan{"event_days", [2]time.Time{utc("2026-05-01 00:00:00"), utc("2026-05-08 00:00:00")}, nil}},
		{"exit pages", q(Sessions, time.UTC, []Dimension{ExitPage}, []Metric{SessionCount}, NotEq(ExitPage, "")),
			&plan{"exit_days", [2]time.Time{utc("2026-05-01 00:00:00"), utc("2026-05-08 00:00:00")}, nil}},
		{"bots", q(BotEvents, time.UTC, []Dimension{BotReason}, []Metric{EventCount}),
			&plan{"bot_days", [2]time.Time{utc("2026-05-01 00:00:00"), utc("2026-05-08 00:00:00")}, nil}},
		{"a filter no rollup holds (source on devices)", q(Sessions, time.UTC, []Dimension{Device}, []Metric{Visitors}, Eq(Source, "Google")), nil},
		{"a page filter on sessions", q(Sessions, time.UTC, []Dimension{Device}, []Metric{Visitors}, Eq(Pathname, "/")), nil},
		{"a filtered series in New York: UTC days straddle its midnights",
			q(Events, ny, []Dimension{Day("America/New_York")}, []Metric{EventCount}, NotEq(IsPageview, 1)), nil},
		{"goal completions", q(Events, time.UTC, nil, []Metric{Visitors, Completions(model.Goal{ID: "g", Type: model.GoalCustomEvent, EventName: "signup"})}), nil},
	}
	oneDay := q(Sessions, ny, []Dimension{Device}, []Metric{Visitors})
	oneDay.To = oneDay.From.Add(24 * time.Hour)
	tests = append(tests, struct {
		name string
		q    Query
		want *plan
	}{"a day of New York holds no whole UTC day", oneDay, nil})
	off := q(Sessions, time.UTC, []Dimension{Device}, []Metric{Visitors})
	off.Rollups = false
	tests = append(tests, struct {
		name string
		q    Query
		want *plan
	}{"rollups off", off, nil})

	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, ok := tt.q.rollupPlan()
			var got *plan
			if ok {
				got = &plan{p.r.table, p.units, p.edges}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Fatalf("plan (-want +got):\n%s", diff)
			}
			sql, args, err := tt.q.Build()
			if err != nil {
				t.Fatal(err)
			}
			if n := strings.Count(sql, "?"); n != len(args) {
				t.Errorf("%d placeholders, %d arguments: %s", n, len(args), sql)
			}
			if ok != strings.Contains(sql, " FROM "+p.r.table+" ") {
				t.Errorf("rollup %v, SQL %s", ok, sql)
			}
		})
	}
}

// A query that reads a rollup reads no sample, so it is not scaled.
func TestRolledQueryReadsNoSample(t *testing.T) {
	from := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	q := Query{Table: Sessions, Site: "s1", From: from, To: from.AddDate(0, 0, 7), Dimensions: []Dimension{Device},
		Metrics: []Metric{Visitors}, SamplePercent: 10, Rollups: true}
	sql, _, err := q.Build()
	if err != nil {
		t.Fatal(err)
	}
	if q.Scale() != 1 || strings.Contains(sql, "SAMPLE") {
		t.Errorf("scale %v, SQL %s", q.Scale(), sql)
	}
	q.Rollups = false
	if sql, _, _ := q.Build(); q.Scale() != 10 || !strings.Contains(sql, "SAMPLE 10/100") {
		t.Errorf("without rollups: scale %v, SQL %s", q.Scale(), sql)
	}
}

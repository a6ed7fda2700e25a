package stats

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tally-analytics/tally/internal/model"
)

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
		return Query{Table: t, Site: "s1", From: from, To: to, Dimensions: dims, Metrics: metrics, Filters: filters, Rollups: true,
			Built: func(string, int, time.Time) bool { return true }}
	}
	tests := []struct {
		name string
		q    Query
		want []string // the parts read; nil: raw rows only
	}{
		{"overview series in Kolkata: whole quarters", q(Events, kolkata, []Dimension{Day("Asia/Kolkata")}, []Metric{Visitors, Pageviews}),
			[]string{"site_quarters 2026-04-30 18:30..2026-05-07 18:30"}},
		{"overview series in Chatham (+12:45)", q(Events, chatham, []Dimension{Day("Pacific/Chatham")}, []Metric{Visitors}),
			[]string{"site_quarters 2026-04-30 11:15..2026-05-07 11:15"}},
		{"overview series in UTC: whole UTC days", q(Events, time.UTC, []Dimension{Day("UTC")}, []Metric{Visitors, Pageviews}),
			[]string{"site_days 2026-05-01 00:00..2026-05-08 00:00"}},
		{"overview series by week in Kolkata: whole quarters", q(Events, kolkata, []Dimension{Bucket(IntervalWeek, "Asia/Kolkata")}, []Metric{Visitors, Pageviews}),
			[]string{"site_quarters 2026-04-30 18:30..2026-05-07 18:30"}},
		{"overview series by month in UTC: whole UTC days", q(Events, time.UTC, []Dimension{Bucket(IntervalMonth, "UTC")}, []Metric{Visitors, Pageviews}),
			[]string{"site_days 2026-05-01 00:00..2026-05-08 00:00"}},
		{"overview series by the hour: the events", q(Events, time.UTC, []Dimension{Bucket(IntervalHour, "UTC")}, []Metric{Visitors, Pageviews}), nil},
		{"a prop filter: the events", q(Events, time.UTC, []Dimension{Day("UTC")}, []Metric{Visitors}, Eq(PropFilter("plan"), "pro")), nil},
		{"visitors of a week in New York: UTC days, then quarters for the edges",
			q(Events, ny, nil, []Metric{Visitors}),
			[]string{"site_days 2026-05-02 00:00..2026-05-08 00:00",
				"site_quarters 2026-05-01 04:00..2026-05-02 00:00", "site_quarters 2026-05-08 00:00..2026-05-08 04:00"}},
		{"sessions of the overview", q(Sessions, ny, nil, []Metric{SessionCount, Bounces, DurationSum}),
			[]string{"session_quarters 2026-05-01 04:00..2026-05-08 04:00"}},
		{"sources in New York: UTC days and two edges", q(Sessions, ny, []Dimension{Source, SourceType}, []Metric{Visitors, Pageviews, SessionCount, Bounces}),
			[]string{"source_days 2026-05-02 00:00..2026-05-08 00:00 1d@05-02 4d@05-03 1d@05-07", "raw 2026-05-01 04:00..2026-05-02 00:00", "raw 2026-05-08 00:00..2026-05-08 04:00"}},
		{"browsers of one device", q(Sessions, time.UTC, []Dimension{Browser}, []Metric{Visitors}, Eq(Device, "Mobile")),
			[]string{"device_days 2026-05-01 00:00..2026-05-08 00:00 1d@05-01 1d@05-02 4d@05-03 1d@05-07"}},
		{"a source's visitors by UTC day: each day's block of level 0", q(Sessions, time.UTC, []Dimension{Day("UTC")}, []Metric{Visitors, SessionCount}, Eq(Source, "Google")),
			[]string{"source_days 2026-05-01 00:00..2026-05-08 00:00 1d@05-01 1d@05-02 1d@05-03 1d@05-04 1d@05-05 1d@05-06 1d@05-07"}},
		{"a source's sessions by UTC day: no visitors, no blocks", q(Sessions, time.UTC, []Dimension{Day("UTC")}, []Metric{SessionCount}, Eq(Source, "Google")),
			[]string{"source_days 2026-05-01 00:00..2026-05-08 00:00"}},
		{"campaigns", q(Sessions, time.UTC, []Dimension{UTMCampaign}, []Metric{Visitors}, NotEq(UTMCampaign, "")),
			[]string{"utm_days 2026-05-01 00:00..2026-05-08 00:00"}},
		{"countries: one state a country", q(Sessions, time.UTC, []Dimension{Country}, []Metric{Visitors}),
			[]string{"country_days 2026-05-01 00:00..2026-05-08 00:00 1d@05-01 1d@05-02 4d@05-03 1d@05-07"}},
		{"sessions of one country", q(Sessions, time.UTC, nil, []Metric{SessionCount, Bounces}, Eq(Country, "US")),
			[]string{"country_days 2026-05-01 00:00..2026-05-08 00:00"}},
		{"regions of a country", q(Sessions, time.UTC, []Dimension{Region, RegionName}, []Metric{Visitors}, Eq(Country, "US")),
			[]string{"location_days 2026-05-01 00:00..2026-05-08 00:00 1d@05-01 1d@05-02 4d@05-03 1d@05-07"}},
		{"cities of a region", q(Sessions, time.UTC, []Dimension{City}, []Metric{Visitors}, Eq(Country, "US"), Eq(Region, "US-CA")),
			[]string{"location_days 2026-05-01 00:00..2026-05-08 00:00 1d@05-01 1d@05-02 4d@05-03 1d@05-07"}},
		{"custom events", q(Events, time.UTC, []Dimension{EventName}, []Metric{EventCount, Visitors}, NotEq(IsPageview, 1)),
			[]string{"event_days 2026-05-01 00:00..2026-05-08 00:00"}},
		{"exit pages", q(Sessions, time.UTC, []Dimension{ExitPage}, []Metric{SessionCount}, NotEq(ExitPage, "")),
			[]string{"exit_days 2026-05-01 00:00..2026-05-08 00:00"}},
		{"bots", q(BotEvents, time.UTC, []Dimension{BotReason}, []Metric{EventCount}),
			[]string{"bot_days 2026-05-01 00:00..2026-05-08 00:00"}},
		{"a filter no rollup holds (source on devices)", q(Sessions, time.UTC, []Dimension{Device}, []Metric{Visitors}, Eq(Source, "Google")), nil},
		{"a page filter on sessions", q(Sessions, time.UTC, []Dimension{Device}, []Metric{Visitors}, Eq(Pathname, "/")), nil},
		{"a filtered series in New York: UTC days straddle its midnights",
			q(Events, ny, []Dimension{Day("America/New_York")}, []Metric{EventCount}, NotEq(IsPageview, 1)), nil},
		{"goal completions", q(Events, time.UTC, nil, []Metric{Visitors, Completions(model.Goal{ID: "g", Type: model.GoalCustomEvent, EventName: "signup"})}), nil},
	}
	add := func(name string, q Query, want []string) {
		tests = append(tests, struct {
			name string
			q    Query
			want []string
		}{name, q, want})
	}
	oneDay := q(Sessions, ny, []Dimension{Device}, []Metric{Visitors})
	oneDay.To = oneDay.From.Add(24 * time.Hour)
	add("a day of New York holds no whole UTC day", oneDay, nil)
	odd := q(Events, time.UTC, nil, []Metric{Visitors, EventCount})
	odd.From, odd.To = odd.From.Add(-(2*time.Hour + 10*time.Minute)), odd.To.Add(20*time.Minute)
	add("a range cutting quarters: days, quarters, raw minutes", odd, []string{
		"site_days 2026-05-01 00:00..2026-05-08 00:00",
		"site_quarters 2026-04-30 22:00..2026-05-01 00:00", "site_quarters 2026-05-08 00:00..2026-05-08 00:15",
		"raw 2026-04-30 21:50..2026-04-30 22:00", "raw 2026-05-08 00:15..2026-05-08 00:20"})
	// blocks not built yet are read as their days: here the block of 4
	// days from May 3 of the devices, not the one of the sources
	notBuilt := q(Sessions, time.UTC, []Dimension{Device}, []Metric{Visitors})
	notBuilt.Built = func(table string, level int, start time.Time) bool {
		return table == "source_days_blocks" || level == 0
	}
	add("a block not built: its days", notBuilt, []string{
		"device_days 2026-05-01 00:00..2026-05-08 00:00 1d@05-01 1d@05-02 1d@05-03 1d@05-04 1d@05-05 1d@05-06 1d@05-07"})
	// days not built yet are read from the raw rows, sums and visitors:
	// here May 6 and 7, and so the block of May 3 to 6
	recent := q(Sessions, time.UTC, []Dimension{Device}, []Metric{Visitors, SessionCount})
	recent.Built = func(table string, level int, start time.Time) bool {
		return start.Before(day("2026-05-06", time.UTC)) && !(level == 2 && start.Equal(day("2026-05-03", time.UTC)))
	}
	add("the newest days not built: raw rows", recent, []string{
		"device_days 2026-05-01 00:00..2026-05-06 00:00 1d@05-01 1d@05-02 1d@05-03 1d@05-04 1d@05-05",
		"raw 2026-05-06 00:00..2026-05-08 00:00"})
	// a day not built amid built ones: two runs of blocks, the day raw
	gap := q(Sessions, time.UTC, []Dimension{Country}, []Metric{Visitors})
	gap.Built = func(table string, level int, start time.Time) bool {
		return !start.Equal(day("2026-05-02", time.UTC))
	}
	add("a day not built amid built ones", gap, []string{
		"country_days 2026-05-01 00:00..2026-05-02 00:00 1d@05-01",
		"country_days 2026-05-03 00:00..2026-05-08 00:00 4d@05-03 1d@05-07",
		"raw 2026-05-02 00:00..2026-05-03 00:00"})
	// nothing built: no blocks, no rollup for the visitors
	none := q(Sessions, time.UTC, []Dimension{Country}, []Metric{Visitors})
	none.Built = nil
	add("no day built", none, nil)
	off := q(Sessions, time.UTC, []Dimension{Device}, []Metric{Visitors})
	off.Rollups = false
	add("rollups off", off, nil)

	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, ok := tt.q.rollupPlan()
			var got []string
			for _, part := range p.parts {
				table := "raw"
				if part.r != nil {
					table = part.r.table
				}
				line := table + " " + part.from.Format("2006-01-02 15:04") + ".." + part.to.Format("2006-01-02 15:04")
				for _, b := range part.blocks {
					line += fmt.Sprintf(" %dd@%s", 1<<b.level, b.start.Format("01-02"))
				}
				got = append(got, line)
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
			if ok != (len(tt.want) > 0 && strings.Contains(sql, " FROM "+strings.Fields(tt.want[0])[0]+" ")) {
				t.Errorf("rollup %v, SQL %s", ok, sql)
			}
		})
	}
}

// A query that reads a rollup reads no sample, so it is not scaled.
func TestRolledQueryReadsNoSample(t *testing.T) {
	from := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	q := Query{Table: Sessions, Site: "s1", From: from, To: from.AddDate(0, 0, 7), Dimensions: []Dimension{Device},
		Metrics: []Metric{Visitors}, SamplePercent: 10, Rollups: true, Built: func(string, int, time.Time) bool { return true }}
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

// A range of whole UTC days is covered by aligned blocks, each once, the
// longest that fit from the left.
func TestDyadicBlocks(t *testing.T) {
	day := func(s string) time.Time {
		d, err := time.Parse(time.DateOnly, s)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	var got []string
	all := func(block) bool { return true }
	blocks, unbuilt := dyadic(day("2026-10-26"), day("2026-11-25"), all)
	if unbuilt != nil {
		t.Errorf("every block usable: %v not built", unbuilt)
	}
	for _, b := range blocks {
		got = append(got, fmt.Sprintf("%dd@%s", 1<<b.level, b.start.Format(time.DateOnly)))
	}
	want := []string{"16d@2026-10-26", "4d@2026-11-11", "4d@2026-11-15", "4d@2026-11-19", "1d@2026-11-23", "1d@2026-11-24"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("30 days (-want +got):\n%s", diff)
	}
	// the same days when the blocks longer than a day from Nov 15 on are
	// not built yet
	got = nil
	blocks, unbuilt = dyadic(day("2026-10-26"), day("2026-11-25"), func(b block) bool { return b.level == 0 || b.start.Before(day("2026-11-15")) })
	for _, b := range blocks {
		got = append(got, fmt.Sprintf("%dd@%s", 1<<b.level, b.start.Format("01-02")))
	}
	want = []string{"16d@10-26", "4d@11-11", "1d@11-15", "1d@11-16", "1d@11-17", "1d@11-18", "1d@11-19", "1d@11-20",
		"1d@11-21", "1d@11-22", "1d@11-23", "1d@11-24"}
	if diff := cmp.Diff(want, got); diff != "" || unbuilt != nil {
		t.Errorf("30 days, the last 10 not built (-want +got):\n%s; unbuilt %v", diff, unbuilt)
	}
	// and when no day from Nov 20 on is built, nor Nov 12: those days are
	// left out, as two runs
	got = nil
	blocks, unbuilt = dyadic(day("2026-11-10"), day("2026-11-25"), func(b block) bool {
		return b.level == 0 && b.start.Before(day("2026-11-20")) && !b.start.Equal(day("2026-11-12"))
	})
	for _, b := range blocks {
		got = append(got, b.start.Format("02"))
	}
	want = []string{"10", "11", "13", "14", "15", "16", "17", "18", "19"}
	wantUnbuilt := [][2]time.Time{{day("2026-11-12"), day("2026-11-13")}, {day("2026-11-20"), day("2026-11-25")}}
	if diff := cmp.Diff(want, got); diff != "" || !slices.Equal(unbuilt, wantUnbuilt) {
		t.Errorf("days not built (-want +got):\n%s; unbuilt %v", diff, unbuilt)
	}
	for first := day("2026-01-01"); first.Before(day("2026-03-01")); first = first.AddDate(0, 0, 1) {
		for n := 1; n <= 120; n++ {
			last := first.AddDate(0, 0, n)
			blocks, _ := dyadic(first, last, all)
			at := first
			for _, b := range blocks {
				span := 24 * time.Hour << b.level
				if !b.start.Equal(at) || !slices.Contains(blockLevels, b.level) || b.start.Unix()%int64(span/time.Second) != 0 {
					t.Fatalf("%s + %d days: block %+v at %s", first.Format(time.DateOnly), n, b, at)
				}
				at = at.Add(span)
			}
			if !at.Equal(last) {
				t.Fatalf("%s + %d days: blocks end at %s", first.Format(time.DateOnly), n, at)
			}
			// at most three blocks of each shorter length on either side of
			// the longest ones
			if bound := 12 + n/16; len(blocks) > bound {
				t.Errorf("%s + %d days: %d blocks, more than %d", first.Format(time.DateOnly), n, len(blocks), bound)
			}
		}
	}
}

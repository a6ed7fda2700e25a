package stats

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestBuild(t *testing.T) {
	from := time.Date(2026, 5, 1, 4, 0, 0, 0, time.UTC)
	to := from.AddDate(0, 0, 7)
	tests := []struct {
		name     string
		q        Query
		wantSQL  string
		wantArgs []any
	}{
		{
			name: "totals",
			q:    Query{Table: Events, Site: "s1", From: from, To: to, Metrics: []Metric{Visitors, Pageviews}},
			wantSQL: "SELECT toFloat64(uniqCombinedIf(visitor_id, visitor_id != 0)) AS m0, toFloat64(sum(is_pageview)) AS m1 FROM events " +
				"WHERE site_key = cityHash64(?) AND ts >= ? AND ts < ? AND toDate(ts) >= toDate(?) - 1 AND toDate(ts) <= toDate(?) + 1",
			wantArgs: []any{"s1", from, to, from, to},
		},
		{
			name: "daily series in a time zone, filtered, sampled",
			q: Query{Table: Events, Site: "s1", From: from, To: to, Dimensions: []Dimension{Day("Asia/Tokyo")},
				Metrics: []Metric{Visitors}, Filters: []Filter{Eq(UTMSource, "x'); DROP"), NotEq(EventName, "pageview"), Eq(IsPageview, 0)}, SamplePercent: 25},
			wantSQL: "SELECT toString(toDate(ts, ?)) AS d0, toFloat64(uniqCombinedIf(visitor_id, visitor_id != 0)) AS m0 FROM events SAMPLE 25/100 " +
				"WHERE site_key = cityHash64(?) AND ts >= ? AND ts < ? AND toDate(ts) >= toDate(?) - 1 AND toDate(ts) <= toDate(?) + 1 AND utm_source = ? AND name != ? AND is_pageview = ? GROUP BY d0",
			wantArgs: []any{"Asia/Tokyo", "s1", from, to, from, to, "x'); DROP", "pageview", 0},
		},
		{
			name: "sessions by entry page, ordered and paged, among listed pages",
			q: Query{Table: Sessions, Site: "s1", From: from, To: to, Dimensions: []Dimension{EntryPage},
				Metrics: []Metric{SessionCount, Bounces}, Filters: []Filter{In(EntryPage, []string{"/a", "/b"})},
				Order: []Order{ByMetric(SessionCount), ByDimension(EntryPage)}, Limit: 10, Offset: 20},
			wantSQL: "SELECT toString(entry_page) AS d0, toFloat64(sum(sign)) AS m0, toFloat64(sum(sign * is_bounce)) AS m1 " +
				"FROM sessions WHERE site_key = cityHash64(?) AND started_at >= ? AND started_at < ? AND toDate(started_at) >= toDate(?) - 1 AND toDate(started_at) <= toDate(?) + 1 AND entry_page IN ? " +
				"GROUP BY d0 HAVING sum(sign) > 0 ORDER BY m0 DESC, d0 ASC LIMIT ? OFFSET ?",
			wantArgs: []any{"s1", from, to, from, to, Set{"/a", "/b"}, 10, 20},
		},
		{
			name: "an event by a prop's value, the key bound, rollups allowed but holding no props",
			q: Query{Table: Events, Site: "s1", From: from, To: to, Dimensions: []Dimension{PropValue("plan")},
				Metrics: []Metric{EventCount, Visitors}, Filters: []Filter{customEvents, Eq(EventName, "Signup")},
				Order: []Order{ByMetric(Visitors), ByMetric(EventCount), ByDimension(PropValue("plan"))}, Limit: 100, Rollups: true},
			wantSQL: "SELECT toString(if(has(props_keys, ?), props_values[indexOf(props_keys, ?)], ?)) AS d0, toFloat64(count()) AS m0, " +
				"toFloat64(uniqCombinedIf(visitor_id, visitor_id != 0)) AS m1 FROM events " +
				"WHERE site_key = cityHash64(?) AND ts >= ? AND ts < ? AND toDate(ts) >= toDate(?) - 1 AND toDate(ts) <= toDate(?) + 1 AND is_pageview != ? AND name = ? " +
				"GROUP BY d0 ORDER BY m1 DESC, m0 DESC, d0 ASC LIMIT ? OFFSET ?",
			wantArgs: []any{"plan", "plan", "(none)", "s1", from, to, from, to, 1, "Signup", 100, 0},
		},
		{
			name: "an event's prop keys, on a sample",
			q: Query{Table: Events, Site: "s1", From: from, To: to, Dimensions: []Dimension{PropKey},
				Metrics: []Metric{EventCount, Visitors}, Filters: []Filter{Eq(EventName, "Signup")}, SamplePercent: 10},
			wantSQL: "SELECT toString(arrayJoin(props_keys)) AS d0, toFloat64(count()) AS m0, toFloat64(uniqCombinedIf(visitor_id, visitor_id != 0)) AS m1 " +
				"FROM events SAMPLE 10/100 WHERE site_key = cityHash64(?) AND ts >= ? AND ts < ? AND toDate(ts) >= toDate(?) - 1 AND toDate(ts) <= toDate(?) + 1 " +
				"AND name = ? GROUP BY d0",
			wantArgs: []any{"s1", from, to, from, to, "Signup"},
		},
		{
			name: "sessions filtered by a page: the sessions with a pageview of it",
			q: Query{Table: Sessions, Site: "s1", From: from, To: to, Metrics: []Metric{SessionCount},
				Filters: []Filter{Eq(Source, "Google"), Eq(Pathname, "/pricing")}},
			wantSQL: "SELECT toFloat64(sum(sign)) AS m0 FROM sessions WHERE site_key = cityHash64(?) AND started_at >= ? AND started_at < ? AND toDate(started_at) >= toDate(?) - 1 AND toDate(started_at) <= toDate(?) + 1 " +
				"AND referrer_source = ? AND session_id IN (SELECT session_id FROM events WHERE site_key = cityHash64(?) " +
				"AND ts >= ? AND ts < ? AND toDate(ts) >= toDate(?) - 1 AND toDate(ts) <= toDate(?) + 1 AND pathname = ?)",
			wantArgs: []any{"s1", from, to, from, to, "Google", "s1", from, to.Add(24 * time.Hour), from, to.Add(24 * time.Hour), "/pricing"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sql, args, err := tt.q.Build()
			if err != nil {
				t.Fatal(err)
			}
			if sql != tt.wantSQL {
				t.Errorf("SQL\n got %s\nwant %s", sql, tt.wantSQL)
			}
			if diff := cmp.Diff(tt.wantArgs, args); diff != "" {
				t.Errorf("args (-want +got):\n%s", diff)
			}
			if strings.Count(sql, "?") != len(args) {
				t.Errorf("%d placeholders for %d args", strings.Count(sql, "?"), len(args))
			}
		})
	}
}

func TestBuildRejects(t *testing.T) {
	from := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	to := from.Add(time.Hour)
	for name, q := range map[string]Query{
		"no metric":                  {Table: Events, Site: "s", From: from, To: to},
		"no site":                    {Table: Events, From: from, To: to, Metrics: []Metric{Visitors}},
		"empty range":                {Table: Events, Site: "s", From: to, To: from, Metrics: []Metric{Visitors}},
		"unknown table":              {Table: "users", Site: "s", From: from, To: to, Metrics: []Metric{Visitors}},
		"metric not on table":        {Table: Events, Site: "s", From: from, To: to, Metrics: []Metric{Bounces}},
		"dimension not on table":     {Table: Sessions, Site: "s", From: from, To: to, Metrics: []Metric{SessionCount}, Dimensions: []Dimension{Pathname}},
		"filter not on table":        {Table: Events, Site: "s", From: from, To: to, Metrics: []Metric{Visitors}, Filters: []Filter{Eq(EntryPage, "/")}},
		"negated events-only filter": {Table: Sessions, Site: "s", From: from, To: to, Metrics: []Metric{SessionCount}, Filters: []Filter{NotEq(Pathname, "/")}},
		"events-only filter on bots": {Table: BotEvents, Site: "s", From: from, To: to, Metrics: []Metric{EventCount}, Filters: []Filter{Eq(Pathname, "/")}},
		"visitors by exit page":      {Table: Sessions, Site: "s", From: from, To: to, Metrics: []Metric{Visitors}, Dimensions: []Dimension{ExitPage}},
		"order by unselected metric": {Table: Events, Site: "s", From: from, To: to, Metrics: []Metric{Visitors}, Order: []Order{ByMetric(Pageviews)}},
		"offset without limit":       {Table: Events, Site: "s", From: from, To: to, Metrics: []Metric{Visitors}, Offset: 5},
		"empty In":                   {Table: Events, Site: "s", From: from, To: to, Metrics: []Metric{Visitors}, Filters: []Filter{In(Pathname, nil)}},
	} {
		if _, _, err := q.Build(); err == nil {
			t.Errorf("%s: Build succeeded", name)
		}
	}
}

// A sampled read names its share as a literal; a whole one has no clause.
func TestSampleClause(t *testing.T) {
	for percent, want := range map[int]string{0: "", -5: "", 100: "", 150: "", 1: " SAMPLE 1/100", 10: " SAMPLE 10/100", 99: " SAMPLE 99/100"} {
		if got := sampleClause(percent); got != want {
			t.Errorf("sampleClause(%d) = %q, want %q", percent, got, want)
		}
	}
}

package chstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/tally-analytics/tally/clickhouse"
	"github.com/tally-analytics/tally/internal/migrations"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/stats"
	"github.com/tally-analytics/tally/internal/testenv"
)

// The materialised views of 0005_page_rollups roll every inserted pageview
// up by UTC day and page; replaying the migration (its backfill from the
// events) rebuilds exactly those rollups rather than doubling them.
func TestPageRollups(t *testing.T) {
	s, _ := testenv.ClickHouse(t)
	ctx := context.Background()
	t0 := time.Date(2026, 5, 4, 23, 59, 0, 0, time.UTC)
	var rows []model.EventRow
	add := func(site model.SiteID, at time.Time, visitor uint64, name, path, prev string, onPrev uint32) {
		rows = append(rows, model.EventRow{SiteID: site, Timestamp: at, EventID: fmt.Sprint("e", len(rows)), Name: name,
			VisitorID: visitor, SessionID: visitor, Pathname: path, PrevPathname: prev, TimeOnPrev: onPrev})
	}
	add("s1", t0, 1, "pageview", "/a", "", 0)
	add("s1", t0.Add(30*time.Second), 1, "signup", "/a", "", 0)      // not a pageview
	add("s1", t0.Add(90*time.Second), 1, "pageview", "/b", "/a", 90) // May 5: its 90 s on /a count on May 5
	add("s1", t0.Add(2*time.Minute), 2, "pageview", "/a", "", 0)
	add("s1", t0.Add(3*time.Minute), 2, "pageview", "/a", "/a", 60)
	add("s2", t0, 3, "pageview", "/a", "", 0)
	if err := s.InsertEvents(ctx, "", rows[:3]); err != nil { // two inserts: two blocks through the views
		t.Fatal(err)
	}
	if err := s.InsertEvents(ctx, "", rows[3:]); err != nil {
		t.Fatal(err)
	}
	want := "s1 2026-05-04 /a 1 0 0 1|s1 2026-05-05 /a 2 150 2 1|s1 2026-05-05 /b 1 0 0 1|s2 2026-05-04 /a 1 0 0 1"
	if got := rollups(t, s); got != want {
		t.Errorf("rollups after inserts:\n got %s\nwant %s", got, want)
	}

	ms, err := migrations.Load(clickhouse.Migrations)
	if err != nil {
		t.Fatal(err)
	}
	replayed := false
	for _, m := range ms {
		if m.Name != "page_rollups" {
			continue
		}
		stmts, err := s.Rendered(m)
		if err != nil {
			t.Fatal(err)
		}
		for _, stmt := range stmts {
			if err := s.Exec(ctx, stmt); err != nil {
				t.Fatalf("replaying %s: %v", stmt, err)
			}
		}
		replayed = true
	}
	if !replayed {
		t.Fatal("no page_rollups migration")
	}
	if got := rollups(t, s); got != want {
		t.Errorf("rollups after replaying the migration:\n got %s\nwant %s", got, want)
	}
}

// rollups lists both rollup tables, merged, one "site day page pageviews
// time_sum time_count visitors" entry per page and day.
func rollups(t *testing.T, s interface {
	QueryRow(ctx context.Context, query string, args ...any) interface{ Scan(...any) error }
}) string {
	t.Helper()
	var out string
	err := s.QueryRow(context.Background(), `SELECT arrayStringConcat(groupArray(line), '|') FROM (
		SELECT concat(if(p.site_key = cityHash64('s1'), 's1', 's2'), ' ', toString(p.day), ' ', p.pathname, ' ',
			toString(p.pv), ' ', toString(p.ts), ' ', toString(p.tc), ' ', toString(v.visitors)) AS line
		FROM (SELECT site_key, day, pathname, sum(pageviews) AS pv, sum(time_sum) AS ts, sum(time_count) AS tc
			FROM page_days GROUP BY site_key, day, pathname) AS p
		ANY LEFT JOIN (SELECT site_key, day, pathname, uniqCombinedMerge(`+stats.PageStatePrecision+`)(visitors) AS visitors
			FROM page_visitor_days GROUP BY site_key, day, pathname) AS v USING (site_key, day, pathname)
		ORDER BY line)`).Scan(&out)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

package stats

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestNewPageRollup(t *testing.T) {
	day := func(d, h, m int) time.Time { return time.Date(2026, 5, d, h, m, 0, 0, time.UTC) }
	tests := []struct {
		name     string
		from, to time.Time
		ok       bool
		days     [2]time.Time
		edges    [][2]time.Time
	}{
		{"UTC week: whole days only", day(1, 0, 0), day(8, 0, 0), true, [2]time.Time{day(1, 0, 0), day(8, 0, 0)}, nil},
		{"New York week: the evening before and the first hours after", day(1, 4, 0), day(8, 4, 0), true,
			[2]time.Time{day(2, 0, 0), day(8, 0, 0)}, [][2]time.Time{{day(1, 4, 0), day(2, 0, 0)}, {day(8, 0, 0), day(8, 4, 0)}}},
		{"Kolkata (+5:30): half hours", day(1, 18, 30), day(3, 18, 30), true,
			[2]time.Time{day(2, 0, 0), day(3, 0, 0)}, [][2]time.Time{{day(1, 18, 30), day(2, 0, 0)}, {day(3, 0, 0), day(3, 18, 30)}}},
		{"one New York day holds no whole UTC day", day(1, 4, 0), day(2, 4, 0), false, [2]time.Time{}, nil},
		{"in another location, the same instants", day(1, 4, 0).In(time.FixedZone("x", -4*3600)), day(3, 4, 0), true,
			[2]time.Time{day(2, 0, 0), day(3, 0, 0)}, [][2]time.Time{{day(1, 4, 0), day(2, 0, 0)}, {day(3, 0, 0), day(3, 4, 0)}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, ok := newPageRollup("s1", tt.from, tt.to)
			if ok != tt.ok {
				t.Fatalf("ok = %v", ok)
			}
			if !ok {
				return
			}
			if r.days != tt.days {
				t.Errorf("days %v, want %v", r.days, tt.days)
			}
			if diff := cmp.Diff(tt.edges, r.edges); diff != "" {
				t.Errorf("edges (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPageRollupSQL(t *testing.T) {
	from, to := time.Date(2026, 5, 1, 4, 0, 0, 0, time.UTC), time.Date(2026, 5, 8, 4, 0, 0, 0, time.UTC)
	r, _ := newPageRollup("s1", from, to)
	sql, args, err := r.totals(10, 20)
	if err != nil {
		t.Fatal(err)
	}
	// one rollup read, two reads of events (pageviews, times) per partial day
	if n := strings.Count(sql, "FROM page_days"); n != 1 {
		t.Errorf("%d reads of page_days in %s", n, sql)
	}
	if n := strings.Count(sql, "FROM events"); n != 4 {
		t.Errorf("%d reads of events in %s", n, sql)
	}
	if !strings.HasSuffix(sql, "ORDER BY m0 DESC, d0 ASC LIMIT ? OFFSET ?") || strings.Count(sql, "?") != len(args) {
		t.Errorf("%s with %d args", sql, len(args))
	}
	if args[1] != "2026-05-02" || args[2] != "2026-05-08" || args[len(args)-2] != 10 || args[len(args)-1] != 20 {
		t.Errorf("args %v", args)
	}
	sql, args, err = r.visitors([]string{"/a", "/b"})
	if err != nil || strings.Count(sql, "pathname IN ?") != 3 || strings.Count(sql, "?") != len(args) {
		t.Errorf("visitors: %s with %d args, %v", sql, len(args), err)
	}
	if _, _, err := r.visitors(nil); err == nil {
		t.Error("visitors of no page built")
	}
	if _, _, err := r.totals(0, 5); err == nil {
		t.Error("an offset without a limit built")
	}
}

// Pageview goals from the page rollups: each condition's arguments bound
// in the order of the placeholders; the days read once, each partial day
// from events; the visitor states of the days only of matching pages.
func TestGoalRollupSQL(t *testing.T) {
	from, to := time.Date(2026, 5, 1, 4, 0, 0, 0, time.UTC), time.Date(2026, 5, 8, 4, 0, 0, 0, time.UTC)
	r, _ := newPageRollup("s1", from, to)
	conds := []condition{{"(pathname = ? OR startsWith(pathname, ?))", []any{"/a", "/a#"}}, {"match(pathname, ?)", []any{"^/b/[^#]*(#|$)"}}}
	condArgs := []any{"/a", "/a#", "^/b/[^#]*(#|$)"}
	day := []any{"s1", "2026-05-02", "2026-05-08"}
	// an edge binds its times twice: the times, and the days around them
	may2, may8 := time.Date(2026, 5, 2, 0, 0, 0, 0, time.UTC), time.Date(2026, 5, 8, 0, 0, 0, 0, time.UTC)
	first, last := []any{"s1", from, may2, from, may2}, []any{"s1", may8, to, may8, to}

	sql, args := r.goalPageviews(conds)
	want := append(append(append(append([]any{}, condArgs...), day...), first...), last...)
	if diff := cmp.Diff(want, args); diff != "" {
		t.Errorf("pageviews' args (-want +got):\n%s", diff)
	}
	if strings.Count(sql, "FROM page_days") != 1 || strings.Count(sql, "FROM events") != 2 || strings.Count(sql, "?") != len(args) ||
		!strings.HasPrefix(sql, "SELECT toFloat64(sumIf(pv, (pathname = ? OR startsWith(pathname, ?)))) AS m0, toFloat64(sumIf(pv, match(pathname, ?))) AS m1 FROM") {
		t.Errorf("pageviews: %s", sql)
	}

	sql, args = r.goalVisitors(conds)
	want = append(append(append(append(append([]any{}, condArgs...), day...), condArgs...), first...), last...)
	if diff := cmp.Diff(want, args); diff != "" {
		t.Errorf("visitors' args (-want +got):\n%s", diff)
	}
	if strings.Count(sql, "FROM page_visitor_days PREWHERE") != 1 || strings.Count(sql, "FROM events") != 2 ||
		strings.Count(sql, "?") != len(args) || !strings.Contains(sql, "((pathname = ? OR startsWith(pathname, ?)) OR match(pathname, ?))") {
		t.Errorf("visitors: %s", sql)
	}
}

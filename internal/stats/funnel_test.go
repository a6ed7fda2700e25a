package stats

import (
	"math"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/pagepattern"
)

// No funnel a client can define makes its query too long for ClickHouse:
// paths and names are bound arguments of bounded length, props digests of
// fixed length, and the query with every argument written in (as the
// driver does, quoted and escaped) stays far below max_query_size (256 KiB).
func TestFunnelQuerySizeIsBounded(t *testing.T) {
	// the longest of everything, in the characters that escape the most
	path := "/" + strings.Repeat(".", 1023)
	name := strings.Repeat("'", 120)
	props := map[string]string{}
	for i := range model.MaxProps {
		props[strings.Repeat("k", model.MaxPropKeyLen-1)+string(rune('a'+i))] = strings.Repeat("'", model.MaxPropValueLen)
	}
	steps := []model.FunnelStep{{Type: model.GoalPageview, PagePath: path}}
	for range maxFunnelSteps - 1 {
		steps = append(steps, model.FunnelStep{Type: model.GoalCustomEvent, EventName: name, Props: props})
	}
	steps[3] = model.FunnelStep{Type: model.GoalPageview, PagePath: path}
	// and eight pages with a wildcard: each in the query as its regular
	// expression and as the two ends of its range of paths
	var pages []model.FunnelStep
	for range maxFunnelSteps {
		pages = append(pages, model.FunnelStep{Type: model.GoalPageview, PagePath: path[:1022] + "/*"})
	}
	for _, tc := range []struct {
		steps   []model.FunnelStep
		filters []Filter
	}{{steps, nil}, {steps, []Filter{Eq(Country, "ZQ")}}, {pages, nil}} { // events_by_path, events
		steps, filters := tc.steps, tc.filters
		q := FunnelQuery{Site: "site'1", From: time.Unix(1e9, 0), To: time.Unix(1e9+86400, 0), Steps: steps, Window: time.Hour,
			BaseCurrency: "USD", Filters: filters}
		sql, args, err := q.Build()
		if err != nil {
			t.Fatal(err)
		}
		if placeholders := strings.Count(sql, "?"); placeholders != len(args) {
			t.Fatalf("%d placeholders for %d arguments", placeholders, len(args))
		}
		for _, bad := range []string{"''", "....", "site'1", "ZQ"} {
			if strings.Contains(sql, bad) {
				t.Errorf("the query's text holds %q rather than an argument", bad)
			}
		}
		size := len(sql)
		quoted := func(v string) int { return len(v) + 2 + strings.Count(v, "'") + strings.Count(v, `\`) }
		for _, a := range args {
			switch v := a.(type) {
			case string:
				size += quoted(v)
			case []string:
				for _, x := range v {
					size += quoted(x) + 2
				}
			default:
				size += 40 // a number, a time or a set's table name
			}
		}
		t.Logf("%d filters: %d bytes", len(filters), size)
		if size > 64<<10 {
			t.Errorf("the longest eight-step funnel makes a %d-byte query (%d filters)", size, len(filters))
		}
	}
	q := FunnelQuery{Site: "s", From: time.Unix(1e9, 0), To: time.Unix(1e9+86400, 0), Window: time.Hour}
	q.Steps = steps[:1]
	if _, _, err := q.Build(); err == nil {
		t.Error("a funnel of one step built")
	}
}

// A step's props are compared by the digests ClickHouse computes:
// hex(MD5('4:plan' || 'pro')) is A24179B6CB115207BE0D0826AECF1459.
func TestFunnelPropDigests(t *testing.T) {
	got := propDigests(map[string]string{"plan": "pro"})
	if want := []string{"A24179B6CB115207BE0D0826AECF1459"}; !cmp.Equal(got, want) {
		t.Errorf("propDigests = %v, want %v", got, want)
	}
}

func TestFunnelReportFigures(t *testing.T) {
	f := model.Funnel{ID: "f", Name: "F", Window: time.Hour, Steps: []model.FunnelStep{
		{Type: model.GoalPageview, PagePath: "/a"}, {Type: model.GoalCustomEvent, EventName: "E", Props: map[string]string{"b": "2", "a": "1"}},
		{Type: model.GoalPageview, PagePath: "/c"}}}
	// per step: visitors, median, revenue; nobody reached step 3 (its median is NaN)
	got := funnelReport(f, []float64{8, 0, 900, 3, 59.5, 500, 0, math.NaN(), 0}, 1)
	want := FunnelReport{Funnel: f, ConversionRate: 0, Steps: []FunnelStepReport{
		{Step: 1, Label: "/a", Visitors: 8, ConversionRate: 100, Revenue: 900},
		{Step: 2, Label: "E (a=1, b=2)", Visitors: 3, ConversionRate: 37.5, Dropoff: 5, DropoffRate: 62.5, MedianSecondsFromPrevious: ptr(59.5), Revenue: 500},
		{Step: 3, Label: "/c", Visitors: 0, ConversionRate: 0, Dropoff: 3, DropoffRate: 100},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("report (-want +got):\n%s", diff)
	}
	// a sample of a tenth: counts and money scaled back, medians not
	got = funnelReport(f, []float64{8, 0, 900, 3, 59.5, 500, 1, 10, 7}, 10)
	if got.Steps[0].Visitors != 80 || got.Steps[1].Revenue != 5000 || *got.Steps[2].MedianSecondsFromPrevious != 10 || got.ConversionRate != 12.5 {
		t.Errorf("scaled report %+v", got)
	}
}

func ptr(x float64) *float64 { return &x }

// A pattern without a wildcard is compared, not matched: a path is itself
// or itself and a route, a page with its route is itself; a pattern with one
// is matched by its regular expression; the comparisons keep exactly the
// pages the expression matches.
func TestPathConditionComparesPlainPaths(t *testing.T) {
	pages := []string{"/pricing", "/pricing/", "/Pricing", "/pricing#/plans", "/pricing#", "/pricings#/x", "/a.b", "/axb", "/a.b#/c",
		"/app#/settings", "/app#/settings/x", "/app", "/blog/post", "/blog/", "/docs/a/b", "/", "/#/x"}
	for _, tc := range []struct {
		pattern, cond string
		args          []any
	}{
		{"/pricing", "(pathname = ? OR startsWith(pathname, ?))", []any{"/pricing", "/pricing#"}},
		{"/a.b", "(pathname = ? OR startsWith(pathname, ?))", []any{"/a.b", "/a.b#"}},
		{"/", "(pathname = ? OR startsWith(pathname, ?))", []any{"/", "/#"}},
		{"/app#/settings", "pathname = ?", []any{"/app#/settings"}},
	} {
		cond, args := pathCondition(tc.pattern)
		if cond != tc.cond || !cmp.Equal(args, tc.args) {
			t.Errorf("%s: %q with %q, want %q with %q", tc.pattern, cond, args, tc.cond, tc.args)
		}
		pat, _ := pagepattern.Parse(tc.pattern)
		re := regexp.MustCompile(pat.Regexp())
		for _, p := range pages {
			kept := p == args[0] || (len(args) == 2 && strings.HasPrefix(p, args[1].(string)))
			if kept != re.MatchString(p) {
				t.Errorf("%s keeps %s: %v, its regular expression: %v", tc.pattern, p, kept, re.MatchString(p))
			}
		}
	}
	for _, pattern := range []string{"/blog/*", "/docs/**", "/*/pricing", "/app#", "/app#/admin/**"} {
		pat, _ := pagepattern.Parse(pattern)
		if cond, args := pathCondition(pattern); cond != "match(pathname, ?)" || !cmp.Equal(args, []any{pat.Regexp()}) {
			t.Errorf("%s: %q with %v, want match(pathname, ?) with its regular expression", pattern, cond, args)
		}
	}
	if cond, args := pathCondition("no slash"); cond != "0" || args != nil {
		t.Errorf("an invalid pattern: %q with %v, want 0 (no page)", cond, args)
	}
}

// A funnel without filters reads events_by_path, and there only the rows of
// its pages, or of the pages that begin as a wildcard's does; a filtered one
// reads events, which holds the filters' columns.
func TestFunnelQueryTable(t *testing.T) {
	steps := []model.FunnelStep{{Type: model.GoalPageview, PagePath: "/pricing"}, {Type: model.GoalCustomEvent, EventName: "signup"},
		{Type: model.GoalPageview, PagePath: "/checkout"}}
	q := FunnelQuery{Site: "s", From: time.Unix(1e9, 0), To: time.Unix(1e9+86400, 0), Steps: steps, Window: time.Hour, BaseCurrency: "USD"}
	for _, tt := range []struct {
		name          string
		filters       []Filter
		wildcard      bool
		want, notWant []string
	}{
		{"plain pages", nil, false, []string{"FROM events_by_path WHERE",
			"AND name = ? AND ((pathname = ? OR (pathname >= ? AND pathname < ?)) OR (pathname = ? OR (pathname >= ? AND pathname < ?))) AND e % 256"},
			[]string{"FROM events WHERE", "toDate(ts)"}},
		{"a wildcard", nil, true, []string{"FROM events_by_path WHERE",
			"AND name = ? AND ((pathname = ? OR (pathname >= ? AND pathname < ?)) OR (pathname >= ? AND pathname < ?)) AND e % 256"},
			[]string{"FROM events WHERE"}},
		{"filtered", []Filter{Eq(Country, "DE")}, false, []string{"FROM events WHERE", "toDate(ts) >= toDate(?)"}, []string{"events_by_path", "pathname >="}},
	} {
		q := q
		q.Filters = tt.filters
		q.Steps = append([]model.FunnelStep(nil), steps...)
		if tt.wildcard {
			q.Steps[2].PagePath = "/checkout/*"
		}
		sql, args, err := q.Build()
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(sql, "?"); n != len(args) {
			t.Errorf("%s: %d placeholders for %d arguments", tt.name, n, len(args))
		}
		for _, s := range tt.want {
			if !strings.Contains(sql, s) {
				t.Errorf("%s: the query lacks %q:\n%s", tt.name, s, sql)
			}
		}
		for _, s := range tt.notWant {
			if strings.Contains(sql, s) {
				t.Errorf("%s: the query holds %q:\n%s", tt.name, s, sql)
			}
		}
	}
}

// The walk of hand-made visitors, as FunnelQuery's rows arrive (sorted by
// visitor and key): steps /a (1), E (2), /c (4), a window of 100 s.
//
//	1: /a at 1000, E at 1050, /c at 1200 (past the window of 1000)  → step 2, 50 s
//	2: /a at 1000 and 1100, E at 1150, /c at 1160; paid 700          → step 3 from 1100: 50 s, 10 s
//	3: E at 900, then /a at 1000: E came first                      → step 1; paid 300
//	4: pays 900 and does no step                                     → nothing
//	5: /a at 2000, an event that is E and /c at 2010, /c at 2020     → step 3: 10 s, 10 s
func TestFunnelWalk(t *testing.T) {
	e := func(ts uint64, bits uint64) uint64 { return ts*256 + bits }
	rows := []struct {
		visitor, e uint64
		net        int64
	}{
		{1, e(1000, 1), 0}, {1, e(1050, 2), 0}, {1, e(1200, 4), 0},
		{2, 0, 700}, {2, e(1000, 1), 0}, {2, e(1100, 1), 0}, {2, e(1150, 2), 0}, {2, e(1160, 4), 0},
		{3, 0, 300}, {3, e(900, 2), 0}, {3, e(1000, 1), 0},
		{4, 0, 900},
		{5, e(2000, 1), 0}, {5, e(2010, 6), 0}, {5, e(2020, 4), 0},
	}
	w := newFunnelWalk(3, 100*time.Second)
	for _, r := range rows {
		w.add(r.visitor, r.e, r.net)
	}
	// step 1: 1 2 3 5, paid 700 + 300; step 2: 1 2 5, gaps 50, 50, 10 → 50;
	// step 3: 2 5, gaps 10, 10 → 10
	want := []float64{4, 0, 1000, 3, 50, 700, 2, 10, 700}
	if got := w.result(); !cmp.Equal(got, want) {
		t.Errorf("walk = %v, want %v", got, want)
	}
	if got := median([]int64{5, 1, 4, 2}); got != 3 {
		t.Errorf("median of 1 2 4 5 = %v, want 3", got)
	}
	if got := median(nil); !math.IsNaN(got) {
		t.Errorf("median of nothing = %v, want NaN", got)
	}
}

// A pattern's condition on sorted pages keeps exactly the pages that begin
// with its text before the first wildcard, or for a path without one, the
// path and its routes; every page it matches is kept.
func TestPathKeyCondition(t *testing.T) {
	for _, tt := range []struct {
		pattern, cond string
		args          []any
	}{
		{"/blog/*", "(pathname >= ? AND pathname < ?)", []any{"/blog/", "/blog0"}},
		{"/docs/**", "(pathname >= ? AND pathname < ?)", []any{"/docs/", "/docs0"}},
		{"/a*", "(pathname >= ? AND pathname < ?)", []any{"/a", "/b"}},
		{"/x\xff\xff*", "(pathname >= ? AND pathname < ?)", []any{"/x\xff\xff", "/y"}},
		{"/pricing", "(pathname = ? OR (pathname >= ? AND pathname < ?))", []any{"/pricing", "/pricing#", "/pricing$"}},
		{"/app#/settings", "pathname = ?", []any{"/app#/settings"}},
		{"/app#/admin/*", "(pathname >= ? AND pathname < ?)", []any{"/app#/admin/", "/app#/admin0"}},
		{"/app#", "(pathname >= ? AND pathname < ?)", []any{"/app", "/apq"}},
		{"no slash", "0", nil},
	} {
		cond, args := pathKeyCondition(tt.pattern)
		if cond != tt.cond || !cmp.Equal(args, tt.args) {
			t.Errorf("%q: %s with %q, want %s with %q", tt.pattern, cond, args, tt.cond, tt.args)
		}
	}
	pages := []string{"/blog", "/blog/", "/blog/a", "/blog/a/b", "/blog0", "/blog-x", "/bloh", "/a", "/", "/blog#/x", "/blog/a#/x",
		"/blog#", "/blog$", "/blog!", "/blog/a#", "/bloga"}
	for _, pattern := range []string{"/blog/*", "/blog/**", "/blog*", "/*/a", "/blog", "/blog#/x", "/blog#", "/blog/a#**"} {
		cond, args := pathKeyCondition(pattern)
		pat, _ := pagepattern.Parse(pattern)
		re := regexp.MustCompile(pat.Regexp())
		for _, p := range pages {
			var in bool
			switch cond {
			case "pathname = ?":
				in = p == args[0]
			case "(pathname = ? OR (pathname >= ? AND pathname < ?))":
				in = p == args[0] || p >= args[1].(string) && p < args[2].(string)
				if in != (p == args[0] || strings.HasPrefix(p, args[1].(string))) {
					t.Errorf("%s: %s kept %v, but is the path or one of its routes: %v", pattern, p, in, !in)
				}
			default:
				lo, hi := args[0].(string), args[1].(string)
				in = p >= lo && p < hi
				if in != strings.HasPrefix(p, lo) {
					t.Errorf("%s: %s in [%q, %q) is %v, but begins with %q: %v", pattern, p, lo, hi, in, lo, !in)
				}
			}
			if re.MatchString(p) && !in {
				t.Errorf("%s matches %s, which %s with %q leaves out", pattern, p, cond, args)
			}
		}
	}
}

package stats

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tally-analytics/tally/internal/errs"
)

func intp(n int) *int { return &n }

// Every refusal of a v2 query names its field.
func TestParseQueryBodyRefusals(t *testing.T) {
	ok := QueryBody{SiteID: "s1", DateRange: "7d", Metrics: []string{"visitors"}}
	with := func(f func(*QueryBody)) QueryBody { b := ok; f(&b); return b }
	tests := []struct {
		name  string
		body  QueryBody
		field string
	}{
		{"no site", with(func(b *QueryBody) { b.SiteID = " " }), "site_id"},
		{"no range", with(func(b *QueryBody) { b.DateRange = nil }), "date_range"},
		{"unknown range", with(func(b *QueryBody) { b.DateRange = "all" }), "date_range"},
		{"one date", with(func(b *QueryBody) { b.DateRange = []any{"2026-05-01"} }), "date_range"},
		{"bad date", with(func(b *QueryBody) { b.DateRange = []any{"2026-05-01", "2026-13-01"} }), "date_range"},
		{"reversed", with(func(b *QueryBody) { b.DateRange = []any{"2026-05-02", "2026-05-01"} }), "date_range"},
		{"over 5 years", with(func(b *QueryBody) { b.DateRange = []any{"2020-05-01", "2025-05-02"} }), "date_range"},
		{"no metrics", with(func(b *QueryBody) { b.Metrics = nil }), "metrics"},
		{"unknown metric", with(func(b *QueryBody) { b.Metrics = []string{"revenue"} }), "metrics"},
		{"conversion rate", with(func(b *QueryBody) { b.Metrics = []string{"conversion_rate"} }), "metrics"},
		{"percentage alone", with(func(b *QueryBody) { b.Metrics = []string{"percentage"} }), "metrics"},
		{"twice", with(func(b *QueryBody) { b.Metrics = []string{"visitors", "visitors"} }), "metrics"},
		{"unknown dimension", with(func(b *QueryBody) { b.Dimensions = []string{"visit:planet"} }), "dimensions"},
		{"goal and page", with(func(b *QueryBody) { b.Dimensions = []string{"event:goal", "event:page"} }), "dimensions"},
		{"pageviews by goal", with(func(b *QueryBody) {
			b.Dimensions, b.Metrics = []string{"event:goal"}, []string{"pageviews"}
		}), "metrics"},
		{"goal filter", with(func(b *QueryBody) { b.Filters = []any{[]any{"is", "event:goal", []any{"Signup"}}} }), "filters.0"},
		{"time", with(func(b *QueryBody) { b.Dimensions = []string{"time"} }), "dimensions"},
		{"four", with(func(b *QueryBody) {
			b.Dimensions = []string{"visit:os", "visit:device", "visit:browser", "visit:country"}
		}), "dimensions"},
		{"two times", with(func(b *QueryBody) { b.Dimensions = []string{"time:day", "time:week"} }), "dimensions"},
		{"visit metric by page", with(func(b *QueryBody) {
			b.Dimensions, b.Metrics = []string{"event:page"}, []string{"bounce_rate"}
		}), "metrics"},
		{"entry page with page", with(func(b *QueryBody) { b.Dimensions = []string{"event:page", "visit:entry_page"} }), "dimensions"},
		{"events by source", with(func(b *QueryBody) {
			b.Dimensions, b.Metrics = []string{"visit:source"}, []string{"events"}
		}), "metrics"},
		{"visitors by exit page", with(func(b *QueryBody) { b.Dimensions = []string{"visit:exit_page"} }), "metrics"},
		{"filter not a list", with(func(b *QueryBody) { b.Filters = []any{"is"} }), "filters.0"},
		{"or", with(func(b *QueryBody) { b.Filters = []any{[]any{"or", []any{}}} }), "filters.0"},
		{"operator", with(func(b *QueryBody) {
			b.Filters = []any{[]any{"is", "visit:os", []any{"iOS"}}, []any{"matches_wildcard", "visit:os", []any{"iOS*"}}}
		}), "filters.1"},
		{"or of an and", with(func(b *QueryBody) {
			b.Filters = []any{[]any{"or", []any{[]any{"and", []any{[]any{"is", "visit:os", []any{"iOS"}}, []any{"is", "visit:os", []any{"Linux"}}}}}}}
		}), "filters.0"},
		{"not of an and holding an or", with(func(b *QueryBody) {
			b.Filters = []any{[]any{"not", []any{"and", []any{[]any{"is", "visit:os", []any{"iOS"}},
				[]any{"or", []any{[]any{"is", "visit:country", []any{"DE"}}, []any{"is", "visit:os", []any{"Linux"}}}}}}}}
		}), "filters.0"},
		{"a segment in an or", with(func(b *QueryBody) {
			b.Filters = []any{[]any{"or", []any{[]any{"is", "segment", []any{"x"}}, []any{"is", "visit:os", []any{"Linux"}}}}}
		}), "filters.0"},
		{"an or of 21 dimensions' filters", with(func(b *QueryBody) {
			var fs []any
			for i := range 21 {
				dim := []string{"visit:os", "visit:browser"}[i%2]
				fs = append(fs, []any{"is", dim, []any{fmt.Sprint("x", i)}})
			}
			b.Filters = []any{[]any{"or", fs}}
		}), "filters.0"},
		{"an or's negated page with visits", with(func(b *QueryBody) {
			b.Metrics = []string{"visits"}
			b.Filters = []any{[]any{"or", []any{[]any{"is", "visit:os", []any{"iOS"}}, []any{"is_not", "event:page", []any{"/"}}}}}
		}), "filters.0"},
		{"a blank segment", with(func(b *QueryBody) { b.Filters = []any{[]any{"is", "segment", []any{"  "}}} }), "filters.0"},
		{"51 filters", with(func(b *QueryBody) {
			for i := range 51 {
				b.Filters = append(b.Filters, []any{"is_not", "event:page", []any{fmt.Sprint("/p", i)}})
			}
		}), "filters.50"},
		{"51 filters in ors", with(func(b *QueryBody) {
			var or []any
			for i := range 17 {
				or = append(or, []any{"is_not", "event:page", []any{fmt.Sprint("/p", i)}})
			}
			b.Filters = []any{[]any{"or", or}, []any{"or", or}, []any{"or", or}}
		}), "filters.2"},
		{"not of a segment", with(func(b *QueryBody) { b.Filters = []any{[]any{"not", []any{"is", "segment", []any{"x"}}}} }), "filters.0"},
		{"not of two", with(func(b *QueryBody) { b.Filters = []any{[]any{"not", []any{"is", "visit:os", []any{"iOS"}}, []any{}}} }), "filters.0"},
		{"has_done of a visit's dimension", with(func(b *QueryBody) {
			b.Filters = []any{[]any{"has_done", []any{"is", "visit:country", []any{"DE"}}}}
		}), "filters.0"},
		{"has_done of has_done", with(func(b *QueryBody) {
			b.Filters = []any{[]any{"has_done", []any{"has_done", []any{"is", "event:name", []any{"Signup"}}}}}
		}), "filters.0"},
		{"has_done of an and", with(func(b *QueryBody) {
			b.Filters = []any{[]any{"has_done", []any{"and", []any{[]any{"is", "event:name", []any{"Signup"}},
				[]any{"is", "event:page", []any{"/"}}}}}}
		}), "filters.0"},
		{"has_done of a goal", with(func(b *QueryBody) {
			b.Filters = []any{[]any{"has_done", []any{"is", "event:goal", []any{"Signup"}}}}
		}), "filters.0"},
		{"modifiers", with(func(b *QueryBody) {
			b.Filters = []any{[]any{"contains", "event:page", []any{"Blog"}, map[string]any{"case_sensitive": false}}}
		}), "filters.0"},
		{"too deep", with(func(b *QueryBody) {
			var f any = []any{"is", "visit:os", []any{"iOS"}}
			for range maxFilterDepth + 1 {
				f = []any{"not", f}
			}
			b.Filters = []any{[]any{"is", "visit:os", []any{"iOS"}}, f}
		}), "filters.1"},
		{"an or of over 100 values", with(func(b *QueryBody) {
			vs := make([]any, 60)
			for i := range vs {
				vs[i] = fmt.Sprintf("/p%d", i)
			}
			b.Filters = []any{[]any{"or", []any{[]any{"is", "event:page", vs}, []any{"is", "event:page", vs}}}}
		}), "filters.0"},
		{"a wildcard off the page", with(func(b *QueryBody) {
			b.Filters = []any{[]any{"matches_wildcard", "visit:source", []any{"Goo*"}}}
		}), "filters.0"},
		{"not a page pattern", with(func(b *QueryBody) {
			b.Filters = []any{[]any{"matches_wildcard_not", "event:page", []any{"blog/**"}}}
		}), "filters.0"},
		{"not a pattern", with(func(b *QueryBody) { b.Filters = []any{[]any{"matches", "event:page", []any{"/blog/("}}} }), "filters.0"},
		{"a named group", with(func(b *QueryBody) { b.Filters = []any{[]any{"matches", "event:page", []any{"(?<y>\\d+)"}}} }), "filters.0"},
		{"a pattern too large", with(func(b *QueryBody) { b.Filters = []any{[]any{"matches_not", "event:page", []any{"\\pL{100}"}}} }), "filters.0"},
		{"page contains_not with visits", with(func(b *QueryBody) {
			b.Metrics, b.Filters = []string{"visits"}, []any{[]any{"contains_not", "event:page", []any{"/blog"}}}
		}), "filters.0"},
		{"values", with(func(b *QueryBody) { b.Filters = []any{[]any{"is", "visit:os", "iOS"}} }), "filters.0"},
		{"bad country", with(func(b *QueryBody) { b.Filters = []any{[]any{"is", "visit:country", []any{"Germany"}}} }), "filters.0"},
		{"unfilterable", with(func(b *QueryBody) { b.Filters = []any{[]any{"is", "visit:entry_page", []any{"/"}}} }), "filters.0"},
		{"prop is_not", with(func(b *QueryBody) { b.Filters = []any{[]any{"is_not", "event:props:plan", []any{"pro"}}} }), "filters.0"},
		{"page is_not with visits", with(func(b *QueryBody) {
			b.Metrics, b.Filters = []string{"visits"}, []any{[]any{"is_not", "event:page", []any{"/"}}}
		}), "filters.0"},
		{"order by other", with(func(b *QueryBody) { b.OrderBy = [][]string{{"pageviews", "desc"}} }), "order_by.0"},
		{"order direction", with(func(b *QueryBody) { b.OrderBy = [][]string{{"visitors", "down"}} }), "order_by.0"},
		{"limit", with(func(b *QueryBody) { b.Limit = intp(10_001) }), "pagination.limit"},
		{"offset", with(func(b *QueryBody) { b.Offset = intp(-1) }), "pagination.offset"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseQueryBody(tt.body)
			var e *errs.Error
			if !errors.As(err, &e) || e.Field != tt.field || e.Kind != errs.Invalid {
				t.Fatalf("got %v, want a 400 naming %s", err, tt.field)
			}
		})
	}
}

// What a v2 query reads: the tables of its metrics and dimensions.
func TestQueryPlan(t *testing.T) {
	tests := []struct {
		name    string
		metrics []string
		dims    []string
		want    []queryPart
	}{
		{"aggregate as the overview", []string{"visitors", "bounce_rate", "events"}, nil,
			[]queryPart{{Events, []string{"visitors", "events"}}, {Sessions, []string{"bounce_rate"}}}},
		{"days", []string{"visits", "pageviews"}, []string{"time:day"},
			[]queryPart{{Events, []string{"pageviews"}}, {Sessions, []string{"visits"}}}},
		{"pages by country", []string{"visitors", "percentage"}, []string{"event:page", "visit:country"},
			[]queryPart{{Events, []string{"visitors", "percentage"}}}},
		{"sources", []string{"visitors", "bounce_rate"}, []string{"visit:source"},
			[]queryPart{{Sessions, []string{"visitors", "bounce_rate"}}}},
		{"sources by week", []string{"visits"}, []string{"visit:source", "time:week"},
			[]queryPart{{Sessions, []string{"visits"}}}},
		{"hours as the overview", []string{"visitors", "bounce_rate", "views_per_visit"}, []string{"time:hour"},
			[]queryPart{{Events, []string{"visitors"}}, {Sessions, []string{"bounce_rate", "views_per_visit"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, err := ParseQueryBody(QueryBody{SiteID: "s1", DateRange: "day", Metrics: tt.metrics, Dimensions: tt.dims})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, q.parts, cmp.AllowUnexported(queryPart{})); diff != "" {
				t.Errorf("parts (-want +got):\n%s", diff)
			}
		})
	}
}

// Relative ranges end today; months count whole from their first day.
func TestRelativeRange(t *testing.T) {
	today := time.Date(2026, 3, 31, 0, 0, 0, 0, time.UTC)
	d := func(s string) time.Time { t, _ := time.Parse(time.DateOnly, s); return t }
	for name, want := range map[string][2]time.Time{
		"day":   {today, today},
		"7d":    {d("2026-03-25"), today},
		"30d":   {d("2026-03-02"), today},
		"month": {d("2026-03-01"), today},
		"6mo":   {d("2025-10-01"), today},
		"12mo":  {d("2025-04-01"), today},
		"year":  {d("2026-01-01"), today},
	} {
		first, last := RelativeRange(name, today)
		if !first.Equal(want[0]) || !last.Equal(want[1]) {
			t.Errorf("%s: %s..%s, want %s..%s", name, first, last, want[0], want[1])
		}
	}
}

// contains is bound value by value, the dimension's arguments with each.
func TestContainFilter(t *testing.T) {
	from := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	q := Query{Table: Events, Site: "s1", From: from, To: from.AddDate(0, 0, 1), Metrics: []Metric{EventCount},
		Filters: []Filter{Contain(Pathname, []string{"/blog", "/docs"}), Contain(PropValue("plan"), []string{"pro"})}}
	sql, args, err := q.Build()
	if err != nil {
		t.Fatal(err)
	}
	want := "SELECT toFloat64(count()) AS m0 FROM events WHERE site_key = cityHash64(?) AND ts >= ? AND ts < ? AND " +
		"toDate(ts) >= toDate(?) - 1 AND toDate(ts) <= toDate(?) + 1 AND (position(pathname, ?) > 0 OR position(pathname, ?) > 0) AND " +
		"(position(if(has(props_keys, ?), props_values[indexOf(props_keys, ?)], ?), ?) > 0)"
	if sql != want {
		t.Errorf("sql:\n%s\nwant\n%s", sql, want)
	}
	wantArgs := []any{"s1", from, from.AddDate(0, 0, 1), from, from.AddDate(0, 0, 1), "/blog", "/docs", "plan", "plan", "(none)", "pro"}
	if diff := cmp.Diff(wantArgs, args); diff != "" {
		t.Errorf("args (-want +got):\n%s", diff)
	}
}

// Rows go by the order asked, ties by the dimensions; without one by the
// time dimension, hours by their instant, and an hour reads as local time.
func TestQuerySortAndLabels(t *testing.T) {
	q, err := ParseQueryBody(QueryBody{SiteID: "s1", DateRange: "day", Metrics: []string{"pageviews"}, Dimensions: []string{"time:hour"}})
	if err != nil {
		t.Fatal(err)
	}
	// 09:00 and 08:00 UTC on May 31, as the hour dimension reads them
	rows := []Row{{Dims: []string{"1780218000"}, Metrics: []float64{1}}, {Dims: []string{"1780214400"}, Metrics: []float64{5}}}
	if order := q.sortRows(rows); !cmp.Equal(order, []QueryOrder{{Key: "time:hour"}}) {
		t.Errorf("order %v", order)
	}
	tokyo, _ := time.LoadLocation("Asia/Tokyo")
	var got []string
	for _, r := range rows {
		got = append(got, q.labels(r.Dims, tokyo)[0])
	}
	if want := []string{"2026-05-31 17:00:00", "2026-05-31 18:00:00"}; !cmp.Equal(want, got) {
		t.Errorf("hours %v, want %v", got, want)
	}

	q, err = ParseQueryBody(QueryBody{SiteID: "s1", DateRange: "day", Metrics: []string{"visitors", "bounce_rate"},
		Dimensions: []string{"visit:country", "visit:device"}, OrderBy: [][]string{{"bounce_rate", "asc"}}})
	if err != nil {
		t.Fatal(err)
	}
	rows = []Row{
		{Dims: []string{"US", "Mobile"}, Metrics: []float64{1, 50}},
		{Dims: []string{"", "Desktop"}, Metrics: []float64{9, 10}},
		{Dims: []string{"DE", "Mobile"}, Metrics: []float64{3, 50}},
		{Dims: []string{"DE", "Desktop"}, Metrics: []float64{2, 50}},
	}
	q.sortRows(rows)
	var dims [][]string
	for _, r := range rows {
		dims = append(dims, q.labels(r.Dims, time.UTC))
	}
	want := [][]string{{"ZZ", "Desktop"}, {"DE", "Desktop"}, {"DE", "Mobile"}, {"US", "Mobile"}}
	if diff := cmp.Diff(want, dims); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
}

// A negated filter, a pattern, and an event's dimension selecting visits
// by a filter other than one value.
func TestNegatedAndMatchFilters(t *testing.T) {
	from := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	to := from.AddDate(0, 0, 1)
	q := Query{Table: Events, Site: "s1", From: from, To: to, Metrics: []Metric{EventCount},
		Filters: []Filter{Contain(Pathname, []string{"/blog", "/docs"}).Negate(), Match(Source, []string{"(?i)google"}),
			Match(Pathname, []string{`\.html$`}).Negate()}}
	sql, args, err := q.Build()
	if err != nil {
		t.Fatal(err)
	}
	want := "SELECT toFloat64(count()) AS m0 FROM events WHERE site_key = cityHash64(?) AND ts >= ? AND ts < ? AND " +
		"toDate(ts) >= toDate(?) - 1 AND toDate(ts) <= toDate(?) + 1 AND NOT ((position(pathname, ?) > 0 OR position(pathname, ?) > 0)) AND " +
		"(match(referrer_source, ?)) AND NOT ((match(pathname, ?)))"
	if sql != want {
		t.Errorf("sql:\n%s\nwant\n%s", sql, want)
	}
	wantArgs := []any{"s1", from, to, from, to, "/blog", "/docs", "(?:(?i)google)", `(?:\.html$)`}
	if diff := cmp.Diff(wantArgs, args); diff != "" {
		t.Errorf("args (-want +got):\n%s", diff)
	}

	// visits: the sessions with a pageview whose page contains /blog
	q = Query{Table: Sessions, Site: "s1", From: from, To: to, Metrics: []Metric{SessionCount},
		Filters: []Filter{Contain(Pathname, []string{"/blog"})}}
	sql, args, err = q.Build()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sql, " AND session_id IN (SELECT session_id FROM events WHERE site_key = cityHash64(?) AND ts >= ? AND ts < ? AND "+
		"toDate(ts) >= toDate(?) - 1 AND toDate(ts) <= toDate(?) + 1 AND (position(pathname, ?) > 0))") || args[len(args)-1] != "/blog" {
		t.Errorf("visits with a page containing /blog:\n%s\n%v", sql, args)
	}
	q.Filters = []Filter{Contain(Pathname, []string{"/blog"}).Negate()}
	if _, _, err := q.Build(); err == nil {
		t.Error("a negated page filter selected visits")
	}

	// a group: its filters joined by OR, each as it filters alone (a page
	// of sessions as the visits with one); no rollup holds it
	q = Query{Table: Sessions, Site: "s1", From: from, To: to, Metrics: []Metric{SessionCount}, Rollups: true,
		Filters: []Filter{AnyOf(Eq(Country, "DE"), Contain(Pathname, []string{"/blog"}))}}
	sql, args, err = q.Build()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(sql, " AND (country_code = ? OR session_id IN (SELECT session_id FROM events WHERE site_key = cityHash64(?) AND "+
		"ts >= ? AND ts < ? AND toDate(ts) >= toDate(?) - 1 AND toDate(ts) <= toDate(?) + 1 AND (position(pathname, ?) > 0)))") ||
		args[len(args)-7] != "DE" || args[len(args)-1] != "/blog" {
		t.Errorf("a group:\n%s\n%v", sql, args)
	}
	if _, rolled := q.rollupPlan(); rolled {
		t.Error("a group read a rollup")
	}
	q.Filters = []Filter{AnyOf(Eq(Country, "DE"), NotEq(Pathname, "/"))}
	if _, _, err := q.Build(); err == nil {
		t.Error("a group's negated page selected visits")
	}

	// has_not_done on events: the events of visits without a Signup, read
	// from a day before the range (a visit that started then) to a day after
	q = Query{Table: Events, Site: "s1", From: from, To: to, Metrics: []Metric{EventCount},
		Filters: []Filter{Eq(EventName, "Signup").OfVisits(true)}}
	sql, args, err = q.Build()
	if err != nil {
		t.Fatal(err)
	}
	want = "SELECT toFloat64(count()) AS m0 FROM events WHERE site_key = cityHash64(?) AND ts >= ? AND ts < ? AND " +
		"toDate(ts) >= toDate(?) - 1 AND toDate(ts) <= toDate(?) + 1 AND (session_id != 0 AND NOT (session_id IN (SELECT session_id FROM events " +
		"WHERE site_key = cityHash64(?) AND ts >= ? AND ts < ? AND toDate(ts) >= toDate(?) - 1 AND toDate(ts) <= toDate(?) + 1 AND name = ?)))"
	if sql != want {
		t.Errorf("sql:\n%s\nwant\n%s", sql, want)
	}
	lo, hi := from.Add(-24*time.Hour), to.Add(24*time.Hour)
	wantArgs = []any{"s1", from, to, from, to, "s1", lo, hi, lo, hi, "Signup"}
	if diff := cmp.Diff(wantArgs, args); diff != "" {
		t.Errorf("args (-want +got):\n%s", diff)
	}
	// no rollup holds a visit's events; the events' rollup holds their name
	q = Query{Table: Events, Site: "s1", From: from, To: to, Metrics: []Metric{EventCount}, Filters: []Filter{Eq(EventName, "Signup")},
		Rollups: true}
	if _, rolled := q.rollupPlan(); !rolled {
		t.Error("the Signups read no rollup")
	}
	q.Filters = []Filter{Eq(EventName, "Signup").OfVisits(false)}
	if _, rolled := q.rollupPlan(); rolled {
		t.Error("has_done read a rollup")
	}
}

// and, or and not come down to filters on one dimension each.
func TestLogicalFilters(t *testing.T) {
	is := func(dim string, vs ...any) []any { return []any{"is", dim, vs} }
	op := func(op string, fs ...any) []any { return []any{op, fs} }
	tests := []struct {
		name   string
		filter any
		want   []Filter
	}{
		{"and, nested", op("and", is("visit:os", "iOS"), op("and", is("visit:country", "de"))),
			[]Filter{Eq(OS, "iOS"), Eq(Country, "DE")}},
		{"or of one dimension", op("or", is("visit:country", "de"), is("visit:country", "FR", "gb")),
			[]Filter{In(Country, []string{"DE", "FR", "GB"})}},
		{"or of one", op("or", is("visit:os", "iOS")), []Filter{Eq(OS, "iOS")}},
		{"or of patterns", op("or", []any{"matches", "event:page", []any{"^/a"}}, []any{"matches", "event:page", []any{"^/b"}}),
			[]Filter{Match(Pathname, []string{"^/a", "^/b"})}},
		{"not", []any{"not", is("visit:os", "iOS")}, []Filter{NotEq(OS, "iOS")}},
		{"not of an or: none of them", []any{"not", op("or", is("visit:country", "de"), is("visit:country", "fr"))},
			[]Filter{In(Country, []string{"DE", "FR"}).Negate()}},
		{"not of contains", []any{"not", []any{"contains", "event:page", []any{"blog"}}},
			[]Filter{Contain(Pathname, []string{"blog"}).Negate()}},
		{"not of not", []any{"not", []any{"not", []any{"contains_not", "event:page", []any{"blog"}}}},
			[]Filter{Contain(Pathname, []string{"blog"}).Negate()}},
		{"not of matches_not", []any{"not", []any{"matches_not", "visit:source", []any{"(?i)google"}}},
			[]Filter{Match(Source, []string{"(?i)google"})}},
		{"has_done", []any{"has_done", is("event:name", "Signup")}, []Filter{Eq(EventName, "Signup").OfVisits(false)}},
		// a page pattern is the goals' (* one segment, ** any depth), matched
		{"matches_wildcard", []any{"matches_wildcard", "event:page", []any{"/blog/*", "/docs/**"}},
			[]Filter{Match(Pathname, []string{`^/blog/[^/#]+(#|$)`, `^/docs/[^#]*(#|$)`})}},
		{"not of matches_wildcard", []any{"not", []any{"matches_wildcard", "event:page", []any{"/"}}},
			[]Filter{Match(Pathname, []string{`^/(#|$)`}).Negate()}},
		{"has_not_done of an or", []any{"has_not_done", op("or", is("event:page", "/a"), is("event:page", "/b"))},
			[]Filter{In(Pathname, []string{"/a", "/b"}).OfVisits(true)}},
		{"not of has_done", []any{"not", []any{"has_done", []any{"is_not", "event:page", []any{"/"}}}},
			[]Filter{NotEq(Pathname, "/").OfVisits(true)}},
		// across dimensions, an or is a group; not of an and is one too
		{"or across dimensions", op("or", is("visit:country", "de"), []any{"contains", "event:page", []any{"blog"}}),
			[]Filter{AnyOf(Eq(Country, "DE"), Contain(Pathname, []string{"blog"}))}},
		{"or of ors", op("or", op("or", is("visit:os", "iOS"), is("visit:country", "de")), is("visit:os", "Linux")),
			[]Filter{AnyOf(Eq(OS, "iOS"), Eq(Country, "DE"), Eq(OS, "Linux"))}},
		{"or of negations", op("or", []any{"is_not", "visit:os", []any{"iOS"}}, []any{"is_not", "visit:os", []any{"Linux"}}),
			[]Filter{AnyOf(NotEq(OS, "iOS"), NotEq(OS, "Linux"))}},
		{"not of an and", []any{"not", op("and", is("visit:os", "iOS"), []any{"has_done", is("event:name", "Signup")})},
			[]Filter{AnyOf(NotEq(OS, "iOS"), Eq(EventName, "Signup").OfVisits(true))}},
		{"not of an or across dimensions: none of them", []any{"not", op("or", is("visit:os", "iOS"), is("visit:country", "de"))},
			[]Filter{NotEq(OS, "iOS"), NotEq(Country, "DE")}},
		{"has_done of an or across dimensions: has_done of either", []any{"has_done", op("or", is("event:name", "Signup"), is("event:page", "/a"))},
			[]Filter{AnyOf(Eq(EventName, "Signup").OfVisits(false), Eq(Pathname, "/a").OfVisits(false))}},
		{"has_not_done of an or across dimensions: of neither", []any{"has_not_done", op("or", is("event:name", "Signup"), is("event:page", "/a"))},
			[]Filter{Eq(EventName, "Signup").OfVisits(true), Eq(Pathname, "/a").OfVisits(true)}},
		{"has_done of a prop", []any{"has_done", is("event:props:plan", "pro")}, []Filter{Eq(PropFilter("plan"), "pro").OfVisits(false)}},
		// a prop filters by one value: an or of its values is a group
		{"or of a prop's values", op("or", is("event:props:plan", "pro"), is("event:props:plan", "free")),
			[]Filter{AnyOf(Eq(PropFilter("plan"), "pro"), Eq(PropFilter("plan"), "free"))}},
		{"has_done of an or of a prop's values", []any{"has_done", op("or", is("event:props:plan", "pro"), is("event:props:plan", "free"))},
			[]Filter{AnyOf(Eq(PropFilter("plan"), "pro").OfVisits(false), Eq(PropFilter("plan"), "free").OfVisits(false))}},
		// an empty value is its dimension's label (ZZ, Unknown, (none)) to a
		// filter, as to the rows
		{"the label of no country", is("visit:country", "zz", "de"), []Filter{In(Country, []string{"", "DE"})}},
		{"the label of no device", []any{"is_not", "visit:device", []any{"Unknown"}}, []Filter{NotEq(Device, "")}},
		{"a label that matches", []any{"matches_not", "visit:browser", []any{"^Chrome", "(?i)^unk"}},
			[]Filter{{Dim: Browser, Matches: []string{"^Chrome", "(?i)^unk"}, OrEmpty: true, Not: true}}},
		{"a label that contains", []any{"contains", "visit:utm_source", []any{"news", "(no"}},
			[]Filter{{Dim: UTMSource, Contains: []string{"news", "(no"}, OrEmpty: true}}},
		{"a label that does not", []any{"contains", "visit:utm_source", []any{"news"}}, []Filter{Contain(UTMSource, []string{"news"})}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, err := ParseQueryBody(QueryBody{SiteID: "s1", DateRange: "7d", Metrics: []string{"visitors"},
				Filters: []any{is("visit:device", "mobile"), tt.filter}})
			if err != nil {
				t.Fatal(err)
			}
			var got []Filter
			for i, qf := range q.filters {
				if want := min(i, 1); qf.index != want {
					t.Errorf("filter %d names filters.%d, want filters.%d", i, qf.index, want)
				}
				got = append(got, qf.filter)
			}
			want := append([]Filter{Eq(Device, "Mobile")}, tt.want...)
			if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b Dimension) bool { return a.Name == b.Name })); diff != "" {
				t.Errorf("filters (-want +got):\n%s", diff)
			}
		})
	}
}

// An or of has_not_done is a group: without one event or without another
// is no one filter (merged, it would keep the visits without either).
func TestOrOfHasNotDone(t *testing.T) {
	without := func(page string) []any { return []any{"has_not_done", []any{"is", "event:page", []any{page}}} }
	for _, f := range [][]any{
		{"or", []any{without("/a"), without("/b")}},
		{"or", []any{without("/a"), []any{"not", []any{"has_done", []any{"is", "event:page", []any{"/b"}}}}}},
	} {
		q, err := ParseQueryBody(QueryBody{SiteID: "s1", DateRange: "7d", Metrics: []string{"visits"}, Filters: []any{f}})
		if err != nil {
			t.Fatalf("%v: %v", f, err)
		}
		want := []Filter{AnyOf(Eq(Pathname, "/a").OfVisits(true), Eq(Pathname, "/b").OfVisits(true))}
		var got []Filter
		for _, qf := range q.filters {
			got = append(got, qf.filter)
		}
		if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b Dimension) bool { return a.Name == b.Name })); diff != "" {
			t.Errorf("%v (-want +got):\n%s", f, diff)
		}
	}
}

func TestCheckPattern(t *testing.T) {
	for _, p := range []string{`^/blog/[^/]+$`, `(?i)google|bing`, `\.html$`, `[a-z]{500}`, `\pL+`, `\Q/a.b\E`,
		`\p{Greek}`, `[\P{^Greek}\p{Han}\pN]`, `\p{Any}`, `\p{Lu}`, `\\p{greek}`, `\Q\p{greek}\E`} {
		if err := CheckPattern(p); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
	// RE2, as ClickHouse 18.16 and current releases have it, refuses what
	// Go reads: a \Q that runs to the end (and so past the group the
	// pattern is sent in), the classes Cn and LC, and the names Go takes
	// since 1.25 (aliases, ASCII, Assigned, any case)
	for _, p := range []string{`/blog/(`, `a{1001}`, `(?<y>\d+)`, `(?P<y>\d{4})`, `\pL{40}`, `\C`, `a**`, `(?z)a`,
		`\Q/a.b`, `x|\Q(`, `\p{Cn}`, `[\P{LC}]`, `\p{^Cn}`, `\p{ASCII}`, `\p{Assigned}`, `\p{Letter}`, `\p{greek}`,
		`\pl`, `\p{any}`, `\p{ lu }`, `a\PL\p{Lowercase_Letter}`} {
		if err := CheckPattern(p); err == nil {
			t.Errorf("%s was taken", p)
		}
	}
}

// A filter whose label of none matches keeps the empty values too.
func TestEmptyLabelCondition(t *testing.T) {
	f := Filter{Dim: Browser, Matches: []string{"^Chrome", "(?i)^unk"}, OrEmpty: true, Not: true}
	cond, args := f.condition("browser")
	if want := "NOT ((browser = ? OR match(browser, ?) OR match(browser, ?)))"; cond != want {
		t.Errorf("condition %s, want %s", cond, want)
	}
	if diff := cmp.Diff([]any{"", "(?:^Chrome)", "(?:(?i)^unk)"}, args); diff != "" {
		t.Errorf("args (-want +got):\n%s", diff)
	}
}

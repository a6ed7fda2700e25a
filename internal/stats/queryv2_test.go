package stats

import (
	"errors"
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
			b.Filters = []any{[]any{"is", "visit:os", []any{"iOS"}}, []any{"matches", "visit:os", []any{"iOS"}}}
		}), "filters.1"},
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

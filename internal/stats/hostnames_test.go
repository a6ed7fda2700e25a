package stats

import (
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/model"
)

// A hostname filter is a host as events store it: in lower case and
// punycode, without "www."; anything with a scheme, a path, a port, or
// longer than DNS allows is refused, naming hostname.
func TestHostnameFilterValue(t *testing.T) {
	for in, want := range map[string]string{
		"blog.example.com": "blog.example.com", " Blog.Example.COM ": "blog.example.com", "localhost": "localhost",
		"xn--bcher-kva.example": "xn--bcher-kva.example", "bücher.example": "xn--bcher-kva.example",
		"www.Example.com": "example.com", "example.com.": "example.com", "127.0.0.1": "127.0.0.1",
		strings.Repeat("a.", 126) + "a": strings.Repeat("a.", 126) + "a",
	} {
		fs, err := ParseFilters(url.Values{"hostname": {in}})
		if err != nil {
			t.Errorf("%q: %v", in, err)
			continue
		}
		if diff := cmp.Diff([]Filter{Eq(Hostname, want)}, fs, cmp.AllowUnexported(Dimension{})); diff != "" {
			t.Errorf("%q (-want +got):\n%s", in, diff)
		}
	}
	for _, in := range []string{"", "  ", "https://x", "x/y", "x:80", "[::1]", "x?y", "a b", "user@x",
		strings.Repeat("a.", 126) + "ab", strings.Repeat("a", 300)} {
		_, err := ParseFilters(url.Values{"hostname": {in}})
		var e *errs.Error
		if !errors.As(err, &e) || e.Kind != errs.Invalid || e.Field != "hostname" {
			t.Errorf("%q: %v; want a 400 naming hostname", in, err)
		}
	}
}

// The host is an event's: on events it filters the events of the host, on
// sessions it selects the visits with an event on it, and no rollup holds it.
func TestHostnameFilterSQL(t *testing.T) {
	from := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	to := from.AddDate(0, 0, 7)
	host := Eq(Hostname, "blog.example.com")
	events := Query{Table: Events, Site: "s1", From: from, To: to, Metrics: []Metric{Visitors, Pageviews},
		Filters: []Filter{host}, Rollups: true, Built: func(string, int, time.Time) bool { return true }}
	sql, args, err := events.Build()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(sql, " AND hostname = ?") || strings.Contains(sql, "_days") || args[len(args)-1] != "blog.example.com" {
		t.Errorf("events: %s %v", sql, args)
	}
	sessions := events
	sessions.Table, sessions.Metrics = Sessions, []Metric{SessionCount, Bounces}
	sql, args, err = sessions.Build()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sql, "FROM sessions WHERE") ||
		!strings.Contains(sql, " AND session_id IN (SELECT session_id FROM events WHERE ") ||
		!strings.HasSuffix(sql, " AND hostname = ?)") || args[len(args)-1] != "blog.example.com" {
		t.Errorf("sessions: %s %v", sql, args)
	}
	if _, ok := sessions.rollupPlan(); ok {
		t.Error("a rollup holds the host")
	}
	sessions.Filters = []Filter{NotEq(Hostname, "blog.example.com")}
	if _, _, err := sessions.Build(); err == nil {
		t.Error("sessions took a host by is_not")
	}
}

// Journeys select the sessions with an event on the host, as they do for
// a page; a funnel keeps the events on it.
func TestHostnameFilterJourneysAndFunnels(t *testing.T) {
	from := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	host := Eq(Hostname, "blog.example.com")
	j := JourneyQuery{Site: "s1", From: from, To: from.AddDate(0, 0, 1), Steps: 3, Limit: 10, Filters: []Filter{host}}
	sql, _, err := j.Build()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sql, "session_id IN (SELECT session_id FROM events WHERE") || !strings.Contains(sql, "AND hostname = ?)") {
		t.Errorf("journeys: %s", sql)
	}
	fsql, fargs, err := FunnelQuery{Site: "s1", From: from, To: from.AddDate(0, 0, 1), Window: time.Hour,
		Steps: []model.FunnelStep{{Type: model.GoalPageview, PagePath: "/"}, {Type: model.GoalPageview, PagePath: "/pricing"}}, Filters: []Filter{host}}.Build()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(fsql, " AND hostname = ?") || strings.Contains(fsql, " FROM "+eventsByPath) {
		t.Errorf("funnel: %s", fsql)
	}
	found := false
	for _, a := range fargs {
		found = found || a == "blog.example.com"
	}
	if !found {
		t.Errorf("funnel: the host is not bound: %v", fargs)
	}
}

// event:hostname is an event dimension and filter of v2, by is, is_not and
// contains; counting visits it filters by one value only.
func TestQueryV2Hostname(t *testing.T) {
	q, err := ParseQueryBody(QueryBody{SiteID: "s1", DateRange: "day", Metrics: []string{"visitors", "pageviews"},
		Dimensions: []string{"event:hostname"}, Filters: []any{[]any{"is_not", "event:hostname", []any{"App.Example.com"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]queryPart{{Events, []string{"visitors", "pageviews"}}}, q.parts, cmp.AllowUnexported(queryPart{})); diff != "" {
		t.Errorf("parts (-want +got):\n%s", diff)
	}
	if got := q.filters[0].filter; got.Dim.Name != "hostname" || got.Value != "app.example.com" || !got.Not {
		t.Errorf("filter %+v", got)
	}
	_, err = ParseQueryBody(QueryBody{SiteID: "s1", DateRange: "day", Metrics: []string{"bounce_rate"},
		Filters: []any{[]any{"is", "event:hostname", []any{"x/y"}}}})
	var e *errs.Error
	if !errors.As(err, &e) || e.Field != "filters.0" {
		t.Errorf("a bad host: %v", err)
	}
	_, err = ParseQueryBody(QueryBody{SiteID: "s1", DateRange: "day", Metrics: []string{"bounce_rate"},
		Filters: []any{[]any{"contains_not", "event:hostname", []any{"blog"}}}})
	if !errors.As(err, &e) || e.Field != "filters.0" {
		t.Errorf("visits without a host's part: %v", err)
	}
}

// The filter names a host as ingestion stored it, whichever form of the
// host the event's URL and the filter's value were given in.
func TestHostnameFilterMatchesStoredHost(t *testing.T) {
	for _, host := range []string{"example.com", "Blog.Example.com", "example.com.", "www.example.com.",
		"bücher.example.com", "Bücher.Example.com.", "xn--bcher-kva.example.com"} {
		fs, err := ParseFilters(url.Values{"hostname": {host}})
		if err != nil {
			t.Fatalf("%q: %v", host, err)
		}
		if got, stored := fs[0].Value, model.StoredHost(host); got != stored {
			t.Errorf("%q: the filter reads %q, an event of it is stored %q", host, got, stored)
		}
	}
}

// A stay's time is on the pageview after it, maybe on another host: the
// pages' times under a host filter keep the pageviews whose previous
// pageview (of the session, that page, the time before) was on the host,
// from a session's span before the range; a page filter keeps the stays
// of the page; the other filters stay.
func TestHostnameFilterStays(t *testing.T) {
	from := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	to := from.AddDate(0, 0, 7)
	q := Query{Table: Events, Site: "s1", From: from, To: to, Dimensions: []Dimension{PrevPathname},
		Metrics: []Metric{TimeOnPrevSum, EventCount}, Filters: []Filter{Eq(Hostname, "blog.example.com"), Eq(Country, "DE"), Eq(Pathname, "/a")}}
	q.Filters = stayFilters(q)
	sql, args, err := q.Build()
	if err != nil {
		t.Fatal(err)
	}
	want := " AND ((session_id, prev_pathname, ts - time_on_prev) IN (SELECT session_id, pathname, ts FROM events" +
		" WHERE site_key = cityHash64(?) AND ts >= ? AND ts < ?"
	if !strings.Contains(sql, want) || !strings.Contains(sql, " AND is_pageview = 1 AND hostname = ?)) = ? AND country_code = ? AND prev_pathname = ?") {
		t.Fatalf("stays: %s", sql)
	}
	if diff := cmp.Diff([]any{"s1", from.Add(-sessionSpan), to}, args[5:8]); diff != "" {
		t.Errorf("the pageviews left (-want +got):\n%s\n%v", diff, args)
	}
	// hosts by another test (several, a part, a negation: the v2 query's)
	// are those of the page left too
	for _, f := range []Filter{In(Hostname, []string{"blog.example.com", "example.com"}), Contain(Hostname, []string{"blog"}),
		NotEq(Hostname, "example.com"), AnyOf(Contain(Hostname, []string{"blog"}), Eq(Country, "DE"))} {
		q.Filters = stayFilters(Query{Table: Events, Site: "s1", From: from, To: to, Filters: []Filter{f}})
		sql, _, err := q.Build()
		if err != nil {
			t.Fatal(err)
		}
		left := "(session_id, prev_pathname, ts - time_on_prev) IN (SELECT session_id, pathname, ts FROM events WHERE "
		if !strings.Contains(sql, left) || strings.Count(sql, "hostname") != 1 {
			t.Errorf("stays by %+v, not by the host of the page left: %s", f, sql)
		}
	}
	// on a sample, the pageviews left are looked up among its visitors'
	q.Filters, q.SamplePercent = []Filter{Eq(Hostname, "blog.example.com")}, 10
	q.Filters = stayFilters(q)
	if sql, _, _ := q.Build(); strings.Count(sql, " FROM events SAMPLE 10/100 WHERE ") != 2 {
		t.Errorf("sampled stays: %s", sql)
	}
}

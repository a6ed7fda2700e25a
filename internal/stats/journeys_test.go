package stats

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tally-analytics/tally/internal/errs"
)

// A journeys query binds every page and number it is given: none of them
// is written into its text, and a sample is its one literal.
func TestJourneyQueryBindsItsValues(t *testing.T) {
	from := time.Date(2026, 6, 10, 0, 0, 0, 0, time.UTC)
	q := JourneyQuery{Site: "s1", From: from, To: from.AddDate(0, 0, 2), Steps: 4, Start: "/it's", End: "/done?x=1",
		Filters: []Filter{Eq(Pathname, "/about"), Eq(Device, "Mobile")}, SamplePercent: 12, Limit: 7}
	sql, args, err := q.Build()
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"/it's", "/done", "/about", "Mobile", "s1"} {
		if strings.Contains(sql, v) {
			t.Errorf("%q is written into the SQL: %s", v, sql)
		}
	}
	if !strings.Contains(sql, " SAMPLE 12/100 ") || strings.Count(sql, "?") != len(args) {
		t.Errorf("%d placeholders for %d arguments, or no sample: %s", strings.Count(sql, "?"), len(args), sql)
	}
	// the part's pages and length first, then the site and range, the page
	// (pageviews only), the filters, and the limit last
	want := []any{"/it's", "/done?x=1", 4, "s1", from, from.AddDate(0, 0, 2), from, from.AddDate(0, 0, 2), "pageview",
		"s1", from, from.AddDate(0, 0, 2), from, from.AddDate(0, 0, 2), "/about", "Mobile", 7}
	if diff := cmp.Diff(want, args); diff != "" {
		t.Errorf("arguments (-want +got):\n%s", diff)
	}
	q.SamplePercent = 100
	if sql, _, _ = q.Build(); strings.Contains(sql, "SAMPLE") {
		t.Errorf("a sample of 100 %% is no sample: %s", sql)
	}
}

func TestJourneyQueryRefuses(t *testing.T) {
	from := time.Date(2026, 6, 10, 0, 0, 0, 0, time.UTC)
	good := JourneyQuery{Site: "s1", From: from, To: from.AddDate(0, 0, 1), Steps: 3, Limit: 10}
	for name, change := range map[string]func(*JourneyQuery){
		"1 step": func(q *JourneyQuery) { q.Steps = 1 }, "7 steps": func(q *JourneyQuery) { q.Steps = 7 },
		"no limit": func(q *JourneyQuery) { q.Limit = 0 }, "no site": func(q *JourneyQuery) { q.Site = "" },
		"empty range":    func(q *JourneyQuery) { q.To = q.From },
		"a set of pages": func(q *JourneyQuery) { q.Filters = []Filter{In(Pathname, []string{"/a", "/b"})} },
	} {
		q := good
		change(&q)
		if _, _, err := q.Build(); err == nil {
			t.Errorf("%s: built", name)
		}
	}
	if _, _, err := good.Build(); err != nil {
		t.Errorf("a good query: %v", err)
	}
}

func TestCheckJourney(t *testing.T) {
	for _, tc := range []struct {
		steps      int
		start, end string
		given      bool
		field      string
	}{
		{3, "", "", false, ""}, {2, "/a", "/b", true, ""}, {6, "/", "/", true, ""},
		{1, "", "", false, "steps"}, {7, "", "", false, "steps"}, {-1, "", "", false, "steps"},
		{3, "", "/b", true, "start"}, {3, "a", "/b", true, "start"}, {3, "/a", "b", true, "end"},
		{3, "/" + strings.Repeat("x", 1024), "/b", true, "start"},
	} {
		err := CheckJourney(tc.steps, tc.start, tc.end, tc.given, tc.given)
		var e *errs.Error
		switch {
		case tc.field == "" && err != nil:
			t.Errorf("%+v: %v", tc, err)
		case tc.field != "" && (!errors.As(err, &e) || e.Field != tc.field || e.Kind != errs.Invalid):
			t.Errorf("%+v: %v, want invalid %s", tc, err, tc.field)
		}
	}
}

package stats

import (
	"math"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tally-analytics/tally/internal/goals"
	"github.com/tally-analytics/tally/internal/model"
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
	q := FunnelQuery{Site: "site'1", From: time.Unix(1e9, 0), To: time.Unix(1e9+86400, 0), Steps: steps, Window: time.Hour,
		BaseCurrency: "USD", Filters: []Filter{Eq(Country, "ZQ")}}
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
	if size > 64<<10 {
		t.Errorf("the longest eight-step funnel makes a %d-byte query", size)
	}
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

// A pattern without a wildcard is compared, not matched, and the comparison
// keeps exactly the paths its regular expression would; a pattern with one
// is matched by its regular expression.
func TestPathConditionComparesPlainPaths(t *testing.T) {
	paths := []string{"/pricing", "/pricing/", "/Pricing", "/a.b", "/axb", "/blog/post", "/blog/", "/docs/a/b", "/"}
	for _, pattern := range []string{"/pricing", "/a.b", "/"} {
		cond, arg := pathCondition(pattern)
		if cond != "pathname = ?" || arg != pattern {
			t.Errorf("%s: %q with %v, want pathname = ? with the pattern", pattern, cond, arg)
		}
		re := regexp.MustCompile(goals.PathRegexp(pattern))
		for _, p := range paths {
			if (p == pattern) != re.MatchString(p) {
				t.Errorf("%s keeps %s: %v, its regular expression: %v", pattern, p, p == pattern, re.MatchString(p))
			}
		}
	}
	for _, pattern := range []string{"/blog/*", "/docs/**", "/*/pricing"} {
		if cond, arg := pathCondition(pattern); cond != "match(pathname, ?)" || arg != goals.PathRegexp(pattern) {
			t.Errorf("%s: %q with %v, want match(pathname, ?) with its regular expression", pattern, cond, arg)
		}
	}
}

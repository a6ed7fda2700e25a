package stats

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/pkg/api"
)

// No value of a funnel is written into its query: paths, names and props
// travel as sets, and the query's length does not grow with them.
func TestFunnelQueryKeepsValuesOut(t *testing.T) {
	long := "/" + strings.Repeat("a", 1000)
	steps := []model.FunnelStep{{Type: model.GoalPageview, PagePath: long + "/*"}}
	for range 7 {
		steps = append(steps, model.FunnelStep{Type: model.GoalCustomEvent, EventName: "Ev'ent" + long,
			Props: map[string]string{"k": strings.Repeat("v", 2000), "x'; DROP": "y"}})
	}
	q := FunnelQuery{Site: "site'1", From: time.Unix(1e9, 0), To: time.Unix(1e9+86400, 0), Steps: steps, Window: time.Hour,
		BaseCurrency: "USD", Filters: []Filter{Eq(Country, "ZQ")}}
	sql, args, err := q.Build()
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"aaaa", "Ev'ent", "DROP", "site'1", "ZQ"} {
		if strings.Contains(sql, bad) {
			t.Errorf("the query holds %q", bad)
		}
	}
	if len(sql) > 16<<10 {
		t.Errorf("an eight-step query is %d bytes", len(sql))
	}
	sets, placeholders := 0, strings.Count(sql, "?")
	for _, a := range args {
		if _, ok := a.(Set); ok {
			sets++
		}
	}
	// per step its path or name, and props for the seven events
	if sets != 15 || placeholders != len(args) {
		t.Errorf("%d sets, %d placeholders for %d arguments", sets, placeholders, len(args))
	}
	q.Steps = steps[:1]
	if _, _, err := q.Build(); err == nil {
		t.Error("a funnel of one step built")
	}
}

func TestFunnelReportFigures(t *testing.T) {
	f := model.Funnel{ID: "f", Name: "F", Window: time.Hour, Steps: []model.FunnelStep{
		{Type: model.GoalPageview, PagePath: "/a"}, {Type: model.GoalCustomEvent, EventName: "E", Props: map[string]string{"b": "2", "a": "1"}},
		{Type: model.GoalPageview, PagePath: "/c"}}}
	// per step: visitors, median, revenue; nobody reached step 3 (its median is NaN)
	got := funnelReport(f, []float64{8, 0, 900, 3, 59.5, 500, 0, math.NaN(), 0}, 1)
	want := api.FunnelReport{FunnelID: "f", Name: "F", WindowSeconds: 3600, ConversionRate: 0, Steps: []api.FunnelReportStep{
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

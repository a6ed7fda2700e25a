package web

import (
	"regexp"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tally-analytics/tally/internal/stats"
)

// Each label of the chart's axis says the value of its grid line. The plot
// is 200 high from y = 12, and a label sits 4 below its line: the value v of
// a chart whose top is s is at 212 - 200 × v / s, its label at 4 more.
func TestChartAxisLabelsSayTheirLines(t *testing.T) {
	day := func(d int, dc stats.DayCount) stats.DayCount {
		dc.Date = time.Date(2026, 5, d, 0, 0, 0, 0, time.UTC)
		return dc
	}
	type label struct{ Y, Text string }
	tests := []struct {
		name   string
		key    string
		points []stats.DayCount
		want   []label
	}{
		// top 5: lines at the whole counts 0, 1, 2, 3 and 5 (of 5 × 1/4,
		// 2/4, 3/4: 1.25, 2.5 and 3.75, no count)
		{"counts", "", []stats.DayCount{day(1, stats.DayCount{Visitors: 5, Pageviews: 5}), day(2, stats.DayCount{Visitors: 2, Pageviews: 3})},
			[]label{{"216.0", "0"}, {"176.0", "1"}, {"136.0", "2"}, {"96.0", "3"}, {"16.0", "5"}}},
		// top 0.15, the chart's 0.2: quarters of 0.05
		{"views per visit", "views_per_visit", []stats.DayCount{day(1, stats.DayCount{ViewsPerVisit: 0.15}), day(2, stats.DayCount{ViewsPerVisit: 0.1})},
			[]label{{"216.0", "0"}, {"166.0", "0.05"}, {"116.0", "0.1"}, {"66.0", "0.15"}, {"16.0", "0.2"}}},
		// every visit 0 s: whole seconds up to 4, as counts
		{"visits of 0 s", "visit_duration", []stats.DayCount{day(1, stats.DayCount{}), day(2, stats.DayCount{})},
			[]label{{"216.0", "0s"}, {"166.0", "1s"}, {"116.0", "2s"}, {"66.0", "3s"}, {"16.0", "4s"}}},
		// top 30 s, the chart's 50 s: whole seconds 12, 25 and 37 (212 -
		// 200 × 12/50 = 164, 212 - 200 × 37/50 = 64)
		{"visits of 30 s", "visit_duration", []stats.DayCount{day(1, stats.DayCount{VisitDuration: 30}), day(2, stats.DayCount{VisitDuration: 10})},
			[]label{{"216.0", "0s"}, {"168.0", "12s"}, {"116.0", "25s"}, {"68.0", "37s"}, {"16.0", "50s"}}},
	}
	re := regexp.MustCompile(`<text class="` + chartAxisLabelClass + `" x="[^"]*" y="([^"]*)" text-anchor="end">([^<]*)</text>`)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []label
			for _, m := range re.FindAllStringSubmatch(string(chartSVG(tt.points, nil, stats.IntervalDay, tt.key)), -1) {
				got = append(got, label{m[1], m[2]})
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("axis labels (-want +got):\n%s", diff)
			}
		})
	}
}

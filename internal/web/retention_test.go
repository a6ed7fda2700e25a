package web

import (
	"testing"

	"github.com/tally-analytics/tally/internal/stats"
)

// A cell is unshaded only when nobody of the cohort came back: 1 visitor of
// 3,000 is 0.033 %, which the report writes as 0.0, and is still somebody.
func TestRetentionShade(t *testing.T) {
	for _, tc := range []struct {
		ret  stats.Return
		want int
	}{
		{stats.Return{Visitors: 0, Percentage: 0}, 0},
		{stats.Return{Visitors: 1, Percentage: 0}, 1},
		{stats.Return{Visitors: 1, Percentage: 10}, 1},
		{stats.Return{Visitors: 1, Percentage: 10.1}, 2},
		{stats.Return{Visitors: 1, Percentage: 25}, 2},
		{stats.Return{Visitors: 2, Percentage: 50}, 3},
		{stats.Return{Visitors: 3, Percentage: 75}, 4},
		{stats.Return{Visitors: 4, Percentage: 100}, 5},
	} {
		if got := retentionShade(tc.ret); got != tc.want {
			t.Errorf("%+v: shade %d, want %d", tc.ret, got, tc.want)
		}
	}
}

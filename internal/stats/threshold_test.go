package stats

import "testing"

// The lowest threshold that is set applies; none set is never sampling.
func TestLowestThreshold(t *testing.T) {
	for _, tc := range []struct {
		in   []int64
		want int64
	}{
		{[]int64{20_000_000, 4_000_000, 300_000}, 300_000},
		{[]int64{0, 4_000_000, 0}, 4_000_000},
		{[]int64{20_000_000, 0}, 20_000_000},
		{[]int64{1000, 4_000_000, 300_000}, 1000},
		{[]int64{0, 0, 0}, 0},
	} {
		if got := lowestThreshold(tc.in...); got != tc.want {
			t.Errorf("lowestThreshold(%v) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

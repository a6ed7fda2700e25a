package stats

import (
	"testing"
	"time"
)

func TestRetentionIntervalFor(t *testing.T) {
	day := func(s string) time.Time { d, _ := time.Parse(time.DateOnly, s); return d }
	for _, tc := range []struct{ from, to, want string }{
		{"2026-05-01", "2026-05-14", IntervalDay},   // 14 days
		{"2026-05-01", "2026-05-15", IntervalWeek},  // 15 days, 3 weeks from Monday Apr 27
		{"2026-05-01", "2026-05-30", IntervalWeek},  // 30 days: 5 weeks
		{"2026-01-05", "2026-07-05", IntervalWeek},  // Monday Jan 5 to Sunday Jul 5: 26 weeks
		{"2026-01-05", "2026-07-06", IntervalMonth}, // a 27th week
		{"2025-06-01", "2026-05-31", IntervalMonth}, // 12 months
	} {
		if got := RetentionIntervalFor(day(tc.from), day(tc.to)); got != tc.want {
			t.Errorf("%s..%s: %s, want %s", tc.from, tc.to, got, tc.want)
		}
		// what the dashboard shows is always a report the API gives
		if _, err := parseRetentionInterval(RetentionIntervalFor(day(tc.from), day(tc.to)), day(tc.from), day(tc.to)); err != nil {
			t.Errorf("%s..%s: %v", tc.from, tc.to, err)
		}
	}
	// the longest range (5 years) by the month is 61 cohorts
	if _, err := parseRetentionInterval(IntervalMonth, day("2021-01-01"), day("2026-01-01")); err != nil {
		t.Errorf("5 years by the month: %v", err)
	}
	// 90 days by the day is the most; 91 are too many
	if _, err := parseRetentionInterval(IntervalDay, day("2026-01-01"), day("2026-03-31")); err != nil {
		t.Errorf("90 days: %v", err)
	}
	if _, err := parseRetentionInterval(IntervalDay, day("2026-01-01"), day("2026-04-01")); err == nil {
		t.Error("91 days by the day: no error")
	}
}

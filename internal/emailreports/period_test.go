package emailreports

import (
	"testing"
	"time"

	"github.com/tally-analytics/tally/internal/model"
)

func TestLatest(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	day := func(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }
	for _, c := range []struct {
		kind        model.ReportKind
		now         time.Time
		first, last time.Time
		due         time.Time
	}{
		// Monday 8 June 2026, 06:00 in Berlin: the week of 1–7 June, due from 04:00
		{model.ReportWeekly, time.Date(2026, 6, 8, 4, 0, 0, 0, time.UTC), day(2026, 6, 1), day(2026, 6, 7),
			time.Date(2026, 6, 8, 4, 0, 0, 0, berlin)},
		// Sunday 23:30 UTC is Monday 01:30 in Berlin: the week just ended (due at 04:00)
		{model.ReportWeekly, time.Date(2026, 6, 7, 23, 30, 0, 0, time.UTC), day(2026, 6, 1), day(2026, 6, 7),
			time.Date(2026, 6, 8, 4, 0, 0, 0, berlin)},
		// Wednesday: still the week before's Monday's period, late
		{model.ReportWeekly, time.Date(2026, 6, 10, 12, 0, 0, 0, time.UTC), day(2026, 6, 1), day(2026, 6, 7),
			time.Date(2026, 6, 8, 4, 0, 0, 0, berlin)},
		// Sunday noon: the week before
		{model.ReportWeekly, time.Date(2026, 6, 7, 12, 0, 0, 0, time.UTC), day(2026, 5, 25), day(2026, 5, 31),
			time.Date(2026, 6, 1, 4, 0, 0, 0, berlin)},
		// 1 July: June; 1 March 2028: February of a leap year
		{model.ReportMonthly, time.Date(2026, 7, 1, 6, 0, 0, 0, time.UTC), day(2026, 6, 1), day(2026, 6, 30),
			time.Date(2026, 7, 1, 4, 0, 0, 0, berlin)},
		{model.ReportMonthly, time.Date(2028, 3, 15, 6, 0, 0, 0, time.UTC), day(2028, 2, 1), day(2028, 2, 29),
			time.Date(2028, 3, 1, 4, 0, 0, 0, berlin)},
		// 1 January: December of the year before
		{model.ReportMonthly, time.Date(2027, 1, 1, 3, 0, 0, 0, time.UTC), day(2026, 12, 1), day(2026, 12, 31),
			time.Date(2027, 1, 1, 4, 0, 0, 0, berlin)},
	} {
		p := Latest(c.kind, c.now, berlin)
		if !p.First.Equal(c.first) || !p.Last.Equal(c.last) || !p.Due.Equal(c.due) {
			t.Errorf("%s at %v: %v–%v due %v; want %v–%v due %v", c.kind, c.now, p.First, p.Last, p.Due, c.first, c.last, c.due)
		}
	}
}

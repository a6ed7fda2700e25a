package stats

import (
	"testing"
	"time"
)

// America/Santiago skips midnight on 2026-09-06 (Saturday 24:00 -04 is
// Sunday 01:00 -03): Sep 6 begins at 04:00 UTC, where Sep 5 ends. time.Date
// gives the missing midnight as Sep 5, 23:00.
func TestDaysWhoseMidnightIsSkipped(t *testing.T) {
	loc, err := time.LoadLocation("America/Santiago")
	if err != nil {
		t.Fatal(err)
	}
	sc := scope{loc: loc}
	sep5, sep6 := time.Date(2026, 9, 5, 0, 0, 0, 0, time.UTC), time.Date(2026, 9, 6, 0, 0, 0, 0, time.UTC)
	change := time.Date(2026, 9, 6, 4, 0, 0, 0, time.UTC)
	if from, to := sc.bounds(sep6, sep6); !from.Equal(change) || !to.Equal(time.Date(2026, 9, 7, 3, 0, 0, 0, time.UTC)) {
		t.Errorf("Sep 6 in Santiago: [%v, %v), want [04:00Z, Sep 7 03:00Z)", from, to)
	}
	if from, to := sc.bounds(sep5, sep5); !from.Equal(time.Date(2026, 9, 5, 4, 0, 0, 0, time.UTC)) || !to.Equal(change) {
		t.Errorf("Sep 5 in Santiago: [%v, %v), want [04:00Z, Sep 6 04:00Z)", from, to)
	}
	// the days of a range over the change are counted, and the count ends
	done := make(chan bool, 1)
	go func() {
		done <- alignedDays("America/Santiago", time.Date(2026, 9, 5, 4, 0, 0, 0, time.UTC),
			time.Date(2026, 9, 8, 3, 0, 0, 0, time.UTC), quarterGrain)
	}()
	select {
	case aligned := <-done:
		if !aligned {
			t.Error("Santiago's days over the change are not aligned to quarters of an hour")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("alignedDays over Santiago's skipped midnight has not returned after 5 s")
	}
}

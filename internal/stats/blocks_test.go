package stats

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// At noon of 2026-11-27 a block is closed when it ended by 09:00 on Nov 26
// (27 hours back): of the blocks of 4 days (aligned on day numbers that 4
// divides: …, Nov 19, Nov 23) the last closed is Nov 19–23, of 16 days
// (…, Oct 26, Nov 11) Oct 26–Nov 11. The window looks back 400 days from
// Nov 26, to 2025-10-22, a day before one that 16 divides (Oct 26, 2026 is
// one, and 368 = 23 × 16 days before it is 2025-10-23): blocks of 4 days
// from 2025-10-23 to Nov 19, 392 / 4 + 1 = 99 of them, and of 16 days from
// 2025-10-23 to Oct 26, 368 / 16 + 1 = 24; 123 for each blocks table.
func TestBlockBuilds(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	every := func(string, time.Time) bool { return true }
	builds := BlockBuilds(nil, every, now)
	if len(builds) != 4*123 {
		t.Fatalf("%d builds, want %d", len(builds), 4*123)
	}
	last := map[int]time.Time{}
	n := map[int]int{}
	for _, b := range builds {
		if b.Table != "device_days_blocks" {
			continue
		}
		n[b.Level]++
		if b.Start.After(last[b.Level]) {
			last[b.Level] = b.Start
		}
		for _, st := range []Statement{b.Insert, b.Record} {
			if c := strings.Count(st.SQL, "?"); c != len(st.Args) {
				t.Errorf("%d placeholders, %d arguments: %s", c, len(st.Args), st.SQL)
			}
		}
	}
	day := func(m time.Month, d int) time.Time { return time.Date(2026, m, d, 0, 0, 0, 0, time.UTC) }
	if n[2] != 99 || n[4] != 24 || !last[2].Equal(day(11, 19)) || !last[4].Equal(day(10, 26)) {
		t.Errorf("device blocks: %v of each level, the last %v", n, last)
	}
	built := func(table string, level int, start time.Time) bool {
		return table == "device_days_blocks" && level == 4 && start.Equal(day(10, 26))
	}
	for _, b := range BlockBuilds(built, every, now) {
		if b.Table == "device_days_blocks" && b.Level == 4 && b.Start.Equal(day(10, 26)) {
			t.Error("a built block is built again")
		}
	}
	if got := len(BlockBuilds(built, every, now)); got != 4*123-1 {
		t.Errorf("%d builds with one built, want %d", got, 4*123-1)
	}
	// the block of Nov 23 of 4 days ends at midnight on Nov 27: closed 27
	// hours later
	has := func(now time.Time) bool {
		for _, b := range BlockBuilds(nil, every, now) {
			if b.Table == "device_days_blocks" && b.Level == 2 && b.Start.Equal(day(11, 23)) {
				return true
			}
		}
		return false
	}
	if has(time.Date(2026, 11, 28, 2, 59, 0, 0, time.UTC)) || !has(time.Date(2026, 11, 28, 3, 0, 0, 0, time.UTC)) {
		t.Error("the block of Nov 23–27 is not built from 03:00 on Nov 28 on")
	}
	// a block none of whose days holds a state needs no build: of the
	// devices' blocks with a state on Nov 1 only, those of Oct 26 (16 days)
	// and Oct 30 (4 days: Oct 26 + 4)
	nov1 := func(table string, d time.Time) bool { return table == "device_days_blocks" && d.Equal(day(11, 1)) }
	var got []string
	for _, b := range BlockBuilds(nil, nov1, now) {
		got = append(got, fmt.Sprintf("%s %d %s", b.Table, b.Level, b.Start.Format("01-02")))
	}
	if want := []string{"device_days_blocks 4 10-26", "device_days_blocks 2 10-30"}; !slices.Equal(got, want) {
		t.Errorf("builds of Nov 1's states: %v, want %v", got, want)
	}
	q := FilledDays(now)
	if c := strings.Count(q.SQL, "?"); c != len(q.Args) || c != 8 {
		t.Errorf("%d placeholders, %d arguments: %s", c, len(q.Args), q.SQL)
	}
}

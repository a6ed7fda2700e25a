package stats

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// At noon of 2026-11-27 a block is closed when it ended by 09:00 on Nov 27
// (3 hours back), so the days up to Nov 26 are. Day numbers (since
// 1970-01-01): 2026-01-01 is 20,454 (56 years, 14 of them leap), Nov 27 is
// 330 days on, 20,784. The window looks back 400 days from 09:00 on Nov 27,
// to day 20,384 (2025-10-23), which 16 divides (20,384 = 1,274 × 16): 400
// days to build, Oct 23, 2025 to Nov 26, 2026. Blocks of 4 days from day
// 20,384 to the last closed, Nov 23–26 (20,780): 396 / 4 + 1 = 100 of them;
// of 16 days to Nov 11–26 (20,768): 384 / 16 + 1 = 25; 125 for each blocks
// table, built once their days are.
func TestBlockBuilds(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	day := func(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }
	every := func(string, time.Time) bool { return true }
	count := func(builds []BlockBuild) (n map[int]int, first, last map[int]time.Time) {
		n, first, last = map[int]int{}, map[int]time.Time{}, map[int]time.Time{}
		for _, b := range builds {
			for _, st := range []Statement{b.Insert, b.Record} {
				if c := strings.Count(st.SQL, "?"); c != len(st.Args) {
					t.Errorf("%d placeholders, %d arguments: %s", c, len(st.Args), st.SQL)
				}
			}
			if b.Table != "device_days_blocks" {
				continue
			}
			n[b.Level]++
			if f, ok := first[b.Level]; !ok || b.Start.Before(f) {
				first[b.Level] = b.Start
			}
			if b.Start.After(last[b.Level]) {
				last[b.Level] = b.Start
			}
		}
		return n, first, last
	}

	// nothing built: the days first, no longer block before its days
	builds := BlockBuilds(nil, every, now)
	n, first, last := count(builds)
	if len(builds) != 4*400 || n[0] != 400 || !first[0].Equal(day(2025, 10, 23)) || !last[0].Equal(day(2026, 11, 26)) {
		t.Errorf("nothing built: %d builds, device blocks %v of each level from %v to %v", len(builds), n, first, last)
	}
	if !strings.Contains(builds[0].Insert.SQL, " FROM sessions ") {
		t.Errorf("a day is not built from the session rows: %s", builds[0].Insert.SQL)
	}

	// every day built: the blocks of 4 and 16 days, from the days' states
	days := func(table string, level int, start time.Time) bool { return level == 0 }
	builds = BlockBuilds(days, every, now)
	n, _, last = count(builds)
	if len(builds) != 4*125 || n[2] != 100 || n[4] != 25 || !last[2].Equal(day(2026, 11, 23)) || !last[4].Equal(day(2026, 11, 11)) {
		t.Errorf("the days built: %d builds, device blocks %v of each level, the last %v", len(builds), n, last)
	}
	if !strings.Contains(builds[0].Insert.SQL, " FROM source_days_blocks WHERE level = 0 AND ") {
		t.Errorf("a block of days is not built from its days: %s", builds[0].Insert.SQL)
	}
	oneMore := func(table string, level int, start time.Time) bool {
		return level == 0 || table == "device_days_blocks" && level == 4 && start.Equal(day(2026, 11, 11))
	}
	for _, b := range BlockBuilds(oneMore, every, now) {
		if b.Table == "device_days_blocks" && b.Level == 4 && b.Start.Equal(day(2026, 11, 11)) {
			t.Error("a built block is built again")
		}
	}
	if got := len(BlockBuilds(oneMore, every, now)); got != 4*125-1 {
		t.Errorf("%d builds with one built, want %d", got, 4*125-1)
	}

	// Nov 26 ends at midnight on Nov 27: closed 3 hours later, and so the
	// block of 4 days from Nov 23, once its days are built
	has := func(built Built, level int, start, now time.Time) bool {
		for _, b := range BlockBuilds(built, every, now) {
			if b.Table == "device_days_blocks" && b.Level == level && b.Start.Equal(start) {
				return true
			}
		}
		return false
	}
	at259, at300 := time.Date(2026, 11, 27, 2, 59, 0, 0, time.UTC), time.Date(2026, 11, 27, 3, 0, 0, 0, time.UTC)
	if has(nil, 0, day(2026, 11, 26), at259) || !has(nil, 0, day(2026, 11, 26), at300) {
		t.Error("Nov 26 is not built from 03:00 on Nov 27 on")
	}
	if has(days, 2, day(2026, 11, 23), at259) || !has(days, 2, day(2026, 11, 23), at300) {
		t.Error("the block of Nov 23–26 is not built from 03:00 on Nov 27 on")
	}

	// a block none of whose days holds a row needs no build: of the
	// devices' blocks with rows on Nov 1 only, that day, then those of Oct
	// 26 (16 days) and Oct 30 (4 days: Oct 26 + 4) once it is built
	nov1 := func(table string, d time.Time) bool {
		return table == "device_days_blocks" && d.Equal(day(2026, 11, 1))
	}
	list := func(built Built, filled func(string, time.Time) bool) []string {
		var got []string
		for _, b := range BlockBuilds(built, filled, now) {
			got = append(got, fmt.Sprintf("%s %d %s", b.Table, b.Level, b.Start.Format("01-02")))
		}
		return got
	}
	if got, want := list(nil, nov1), []string{"device_days_blocks 0 11-01"}; !slices.Equal(got, want) {
		t.Errorf("builds of Nov 1's rows: %v, want %v", got, want)
	}
	nov1Built := func(table string, level int, start time.Time) bool {
		return level == 0 && start.Equal(day(2026, 11, 1))
	}
	if got, want := list(nov1Built, nov1), []string{"device_days_blocks 4 10-26", "device_days_blocks 2 10-30"}; !slices.Equal(got, want) {
		t.Errorf("builds of Nov 1's rows, the day built: %v, want %v", got, want)
	}
	// with rows on Nov 1 and 2 and only Nov 1 built, the longer blocks wait
	// for Nov 2
	nov12 := func(table string, d time.Time) bool {
		return table == "device_days_blocks" && (d.Equal(day(2026, 11, 1)) || d.Equal(day(2026, 11, 2)))
	}
	if got, want := list(nov1Built, nov12), []string{"device_days_blocks 0 11-02"}; !slices.Equal(got, want) {
		t.Errorf("builds of Nov 1 and 2, Nov 1 built: %v, want %v", got, want)
	}

	q := FilledDays(now)
	if c := strings.Count(q.SQL, "?"); c != len(q.Args) || c != 8 || !strings.Contains(q.SQL, " FROM device_days WHERE ") {
		t.Errorf("%d placeholders, %d arguments: %s", c, len(q.Args), q.SQL)
	}
}

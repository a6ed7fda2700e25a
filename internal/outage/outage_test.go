package outage

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// 10,000 failures over 95 s make four lines (the first, then one per 30 s,
// each with the failures since the one before) and one when it is over.
// Failure i comes at 19 ms × ⌈i/2⌉: the lines fall on failures 0, 3157
// (30.001 s), 6315 (60.002 s) and 9473 (90.003 s); the last failure is at
// 95 s.
func TestReporterLogsOncePerInterval(t *testing.T) {
	var buf bytes.Buffer
	r := New(slog.New(slog.NewTextHandler(&buf, nil)), "store unavailable", 30*time.Second)
	now := time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)
	r.now = func() time.Time { return now }
	r.OK() // nothing to end
	for i := range 10_000 {
		now = now.Add(time.Duration(i%2) * 19 * time.Millisecond) // 95 s in all
		r.Fail(1, errors.New("connection refused"))
	}
	r.OK()
	r.OK()
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	want := []string{`msg="store unavailable" failures=1`, `msg="store unavailable (continuing)" failures=3157`,
		`msg="store unavailable (continuing)" failures=3158`, `msg="store unavailable (continuing)" failures=3158`,
		`msg="store unavailable (over)" failures=10000 outage=1m35s`}
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), buf.String())
	}
	for i, w := range want {
		if !strings.Contains(lines[i], w) {
			t.Errorf("line %d = %s\nwant it to hold %s", i, lines[i], w)
		}
	}
}

package web

import (
	"net/url"
	"testing"
	"time"

	"github.com/tally-analytics/tally/internal/model"
)

// Each preset range is days of the site's time zone, counted from its
// today: at 10:00 UTC on May 15, 2026 (a Friday) in UTC, on January 10 (the
// year before reaches back), and at 20:00 UTC on May 31 in Auckland, where
// it is already June 1.
func TestPresetRanges(t *testing.T) {
	for _, c := range []struct {
		zone, now, rng, from, to, interval string
	}{
		{"UTC", "2026-05-15T10:00:00Z", "today", "2026-05-15", "2026-05-15", "hour"},
		{"UTC", "2026-05-15T10:00:00Z", "yesterday", "2026-05-14", "2026-05-14", "hour"},
		{"UTC", "2026-05-15T10:00:00Z", "7d", "2026-05-09", "2026-05-15", "day"},
		{"UTC", "2026-05-15T10:00:00Z", "30d", "2026-04-16", "2026-05-15", "day"},
		{"UTC", "2026-05-15T10:00:00Z", "month", "2026-05-01", "2026-05-15", "day"},
		{"UTC", "2026-05-15T10:00:00Z", "last-month", "2026-04-01", "2026-04-30", "day"},
		{"UTC", "2026-05-15T10:00:00Z", "year", "2026-01-01", "2026-05-15", "week"},
		{"UTC", "2026-05-15T10:00:00Z", "12mo", "2025-06-01", "2026-05-15", "week"},
		{"UTC", "2026-01-10T10:00:00Z", "last-month", "2025-12-01", "2025-12-31", "day"},
		{"UTC", "2026-01-10T10:00:00Z", "year", "2026-01-01", "2026-01-10", "day"},
		{"UTC", "2026-01-10T10:00:00Z", "12mo", "2025-02-01", "2026-01-10", "week"},
		{"UTC", "2026-03-31T10:00:00Z", "last-month", "2026-02-01", "2026-02-28", "day"},
		{"Pacific/Auckland", "2026-05-31T20:00:00Z", "yesterday", "2026-05-31", "2026-05-31", "hour"},
		{"Pacific/Auckland", "2026-05-31T20:00:00Z", "last-month", "2026-05-01", "2026-05-31", "day"},
		{"Pacific/Auckland", "2026-05-31T20:00:00Z", "month", "2026-06-01", "2026-06-01", "hour"},
	} {
		now, err := time.Parse(time.RFC3339, c.now)
		if err != nil {
			t.Fatal(err)
		}
		v, err := parseView(url.Values{"range": {c.rng}}, model.Site{ID: "s", Timezone: c.zone}, "/sites/s", now)
		if err != nil {
			t.Errorf("%s at %s in %s: %v", c.rng, c.now, c.zone, err)
			continue
		}
		from, to := v.From.Format(time.DateOnly), v.To.Format(time.DateOnly)
		if from != c.from || to != c.to || v.interval() != c.interval {
			t.Errorf("%s at %s in %s: %s to %s by the %s, want %s to %s by the %s", c.rng, c.now, c.zone, from, to, v.interval(),
				c.from, c.to, c.interval)
		}
	}
	if _, err := parseView(url.Values{"range": {"decade"}}, model.Site{ID: "s", Timezone: "UTC"}, "/sites/s", time.Now()); err == nil {
		t.Error("an unknown range is a range")
	}
}

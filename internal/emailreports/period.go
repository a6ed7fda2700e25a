package emailreports

import (
	"time"

	"github.com/tally-analytics/tally/internal/model"
)

// SendHour is the hour of the site's day from which a period's report is
// due, on the day after the period: late events (waiting in a server's
// write-ahead log through a short ClickHouse outage) have come in by then,
// and the mail arrives before the working day.
const SendHour = 4

// Period is the span of one report: its inclusive dates (at 00:00 UTC, as
// stats.Request takes them; days of the site's zone) and the instant it
// is due.
type Period struct {
	Kind        model.ReportKind
	First, Last time.Time
	Due         time.Time
}

// Latest is the last period of kind that ended before now's day in loc:
// the week from Monday to Sunday before this week's Monday, or the month
// before this one. Only it is ever sent: after an outage of any length the
// worker sends the latest period's report, never older ones.
func Latest(kind model.ReportKind, now time.Time, loc *time.Location) Period {
	t := now.In(loc)
	today := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	var next time.Time // the first day after the period, when it is sent
	p := Period{Kind: kind}
	switch kind {
	case model.ReportMonthly:
		next = today.AddDate(0, 0, 1-today.Day())
		p.First = next.AddDate(0, -1, 0)
	default:
		next = today.AddDate(0, 0, -((int(today.Weekday()) + 6) % 7))
		p.First = next.AddDate(0, 0, -7)
	}
	p.Last = next.AddDate(0, 0, -1)
	p.Due = time.Date(next.Year(), next.Month(), next.Day(), SendHour, 0, 0, 0, loc)
	return p
}

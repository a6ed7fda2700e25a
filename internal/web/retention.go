package web

import (
	"context"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/present"
	"github.com/tally-analytics/tally/internal/stats"
)

// retentionCard is the retention table: a row per cohort, a column per
// later interval, each cell its share of the cohort, shaded by it.
type retentionCard struct {
	View   view
	Tabs   []cardTab
	Report stats.Retention
	// Columns name the periods: "Week 0" (the cohort's own) to the last.
	Columns  []string
	Rows     []retentionRow
	Returned bool // anyone of any cohort came back
}

type retentionRow struct {
	Label    string // the cohort's first day, in words
	Date     string // YYYY-MM-DD
	Visitors int64
	Cells    []retentionCell
	// Blank has an entry for each column the row has no interval for
	// (the range ends before them): the table's cells left empty.
	Blank []struct{}
}

type retentionCell struct {
	Period     int
	Visitors   int64
	Percentage float64
	Shade      int // 0 (nobody) to 5 (more than three in four)
	// Count says Visitors in words ("1 visitor"), for the cell's title and
	// for screen readers.
	Count string
}

// retentionUnits name the intervals a retention table may go by, in the
// order of the card's tabs.
var retentionUnits = [][2]string{{stats.IntervalDay, "Days"}, {stats.IntervalWeek, "Weeks"}, {stats.IntervalMonth, "Months"}}

// retentionCard shows the view's retention by the interval of its tab,
// else by the one that suits the range (stats.RetentionIntervalFor); the
// tabs offer the intervals that give at most stats.MaxCohorts cohorts.
func (s *Server) retentionCard(c echo.Context, ctx context.Context, p auth.Principal, v view, r stats.Request, tab string) error {
	r.Interval = stats.RetentionIntervalFor(r.DateFrom, r.DateTo)
	var units [][2]string
	for _, u := range retentionUnits {
		if stats.CohortsOf(u[0], r.DateFrom, r.DateTo) > stats.MaxCohorts {
			continue
		}
		units = append(units, u)
		if u[0] == tab {
			r.Interval = tab
		}
	}
	res, err := s.deps.Stats.Retention(ctx, p, r)
	if err != nil {
		return err
	}
	card := retentionCard{View: v, Tabs: tabs(v, "retention", r.Interval, units...), Report: res}
	for k := range res.Cohorts {
		card.Columns = append(card.Columns, periodName(res.Interval, k))
	}
	for i, co := range res.Cohorts {
		row := retentionRow{Label: cohortLabel(co, res.Interval), Date: co.Date.Format(time.DateOnly), Visitors: co.Visitors,
			Blank: make([]struct{}, i)}
		for k, ret := range co.Returns {
			row.Cells = append(row.Cells, retentionCell{Period: k, Visitors: ret.Visitors, Percentage: ret.Percentage,
				Shade: retentionShade(ret), Count: visitorsText(ret.Visitors)})
			if k > 0 && ret.Visitors > 0 {
				card.Returned = true
			}
		}
		card.Rows = append(card.Rows, row)
	}
	return s.renderCard(c, "retention", card)
}

// cohortLabel writes a cohort's first day: "May 4", or "May 2026" for a
// month.
func cohortLabel(c stats.Cohort, interval string) string {
	if interval == stats.IntervalMonth {
		return c.Date.Format("Jan 2006")
	}
	return c.Date.Format("Jan 2")
}

// retentionShade is the shade of a share of a cohort: none for nobody, then
// up to 10 %, 25 %, 50 %, 75 % and beyond. Returns are mostly a few percent
// and the cohort itself is 100 %, so the small shares get shades of their
// own. Nobody is no visitor, not a share written as 0.0 (1 of 3,000).
func retentionShade(r stats.Return) int {
	switch pct := r.Percentage; {
	case r.Visitors <= 0:
		return 0
	case pct <= 10:
		return 1
	case pct <= 25:
		return 2
	case pct <= 50:
		return 3
	case pct <= 75:
		return 4
	}
	return 5
}

// visitorsText writes a number of visitors: "1 visitor", "1,204 visitors".
func visitorsText(n int64) string {
	if n == 1 {
		return "1 visitor"
	}
	return present.Number(n) + " visitors"
}

// periodName is a column's header: "Week 0", "Day 3".
func periodName(unit string, k int) string {
	word := map[string]string{stats.IntervalDay: "Day", stats.IntervalWeek: "Week", stats.IntervalMonth: "Month"}[unit]
	return word + " " + strconv.Itoa(k)
}

package stats

import (
	"cmp"
	"context"
	"strconv"
	"time"

	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/model"
)

// Overview is the headline metrics and the daily time series of the range,
// with the previous period of equal length when asked.
func (s *Service) Overview(ctx context.Context, p auth.Principal, r Request) (Overview, error) {
	sc, err := s.resolve(ctx, p, r)
	if err != nil {
		return Overview{}, err
	}
	prevFrom, prevTo := previous(r)
	var cur, prev periodStats
	var bots []Row
	fns := []func(context.Context) error{
		func(ctx context.Context) (err error) {
			cur, err = s.period(ctx, sc, r.DateFrom, r.DateTo, r.Interval)
			return err
		},
		func(ctx context.Context) (err error) {
			bots, err = s.rows(ctx, Query{Table: BotEvents, Site: sc.site.ID, From: sc.from, To: sc.to,
				Dimensions: []Dimension{BotReason}, Metrics: []Metric{EventCount}, Rollups: sc.rollups})
			return err
		},
	}
	if r.Compare {
		fns = append(fns, func(ctx context.Context) (err error) {
			prev, err = s.period(ctx, sc, prevFrom, prevTo, r.Interval)
			return err
		})
	}
	if err := parallel(ctx, fns...); err != nil {
		return Overview{}, err
	}
	res := Overview{Metrics: cur.metrics, Series: cur.series, Interval: cmp.Or(r.Interval, IntervalDay), Bots: botTraffic(bots)}
	if r.Compare {
		res.Comparison = &Comparison{From: prevFrom, To: prevTo, Metrics: prev.metrics, Series: prev.series,
			Change: change(cur, prev)}
	}
	res.Meta = sc.meta()
	return res, nil
}

// previous is the period r compares with: the dates a year before
// (CompareYear; a 29 February is then 1 March), else the period of equal
// length just before.
func previous(r Request) (from, to time.Time) {
	if r.CompareYear {
		return r.DateFrom.AddDate(-1, 0, 0), r.DateTo.AddDate(-1, 0, 0)
	}
	days := int(r.DateTo.Sub(r.DateFrom).Hours()/24+0.5) + 1
	return r.DateFrom.AddDate(0, 0, -days), r.DateFrom.AddDate(0, 0, -1)
}

// botTraffic adds up bot events by reason into their categories.
func botTraffic(rows []Row) BotTraffic {
	var by BotTraffic
	for _, r := range rows {
		n := count(r.Metrics[0])
		switch model.BotCategory(r.Dims[0]) {
		case model.BotAIAgent:
			by.AIAgent += n
		case model.BotMonitor:
			by.Monitor += n
		case model.BotAutomation:
			by.Automation += n
		case model.BotOther:
			by.Other += n
		default:
			by.Crawler += n
		}
	}
	return by
}

type periodStats struct {
	metrics Metrics
	series  []DayCount
	// the sums the metrics come from, unrounded: the change compares them
	visitors, pageviews float64
	visits              visitSums
}

// visitSums are the sums the visit metrics of sessions come from.
type visitSums struct{ sessions, bounces, durationSum, pageviews float64 }

// visitSumMetrics are the metrics visitSums are read by.
var visitSumMetrics = []Metric{SessionCount, Bounces, DurationSum, Pageviews}

func visitSumsOf(vals []float64) visitSums {
	return visitSums{sessions: vals[0], bounces: vals[1], durationSum: vals[2], pageviews: vals[3]}
}

// period computes the metrics of the inclusive dates first..last, and
// their series by interval: visitors and pageviews from the events, the
// visit metrics from the sessions that started in each unit.
func (s *Service) period(ctx context.Context, sc scope, first, last time.Time, interval string) (periodStats, error) {
	sc.from, sc.to = sc.bounds(first, last)
	var totals, sessions []float64
	var daily, visits []Row
	err := parallel(ctx,
		func(ctx context.Context) (err error) {
			q := sc.query(Events, []Dimension{Bucket(interval, sc.tz)}, []Metric{Visitors, Pageviews})
			q.WithTotals = true
			daily, totals, err = s.rowsAndTotals(ctx, q)
			return err
		},
		func(ctx context.Context) (err error) {
			q := sc.query(Sessions, []Dimension{Bucket(interval, sc.tz)}, visitSumMetrics)
			q.WithTotals = true
			visits, sessions, err = s.rowsAndTotals(ctx, q)
			return err
		},
	)
	if err != nil {
		return periodStats{}, err
	}
	sums := visitSumsOf(sessions)
	ps := periodStats{visitors: totals[0], pageviews: totals[1], visits: sums}
	ps.metrics = sums.metrics(count(totals[0]), count(totals[1]))
	byKey := map[string]Row{}
	for _, r := range daily {
		byKey[r.Dims[0]] = r
	}
	visitsByKey := map[string]visitSums{}
	for _, r := range visits {
		visitsByKey[r.Dims[0]] = visitSumsOf(r.Metrics)
	}
	for _, b := range buckets(interval, first, last, sc.from, sc.to, sc.loc) {
		var visitors, pageviews int64
		if r, ok := byKey[b.key]; ok {
			visitors, pageviews = count(r.Metrics[0]), count(r.Metrics[1])
		}
		m := visitsByKey[b.key].metrics(visitors, pageviews)
		ps.series = append(ps.series, DayCount{Date: b.start, Visitors: m.Visitors, Visits: m.Visits, Pageviews: m.Pageviews,
			ViewsPerVisit: m.ViewsPerVisit, BounceRate: m.BounceRate, VisitDuration: m.VisitDuration})
	}
	return ps, nil
}

// metrics are a period's, or a unit's, headline metrics: the visitors and
// pageviews of its events, and the visit metrics of v.
func (v visitSums) metrics(visitors, pageviews int64) Metrics {
	return Metrics{Visitors: visitors, Visits: count(v.sessions), Pageviews: pageviews,
		ViewsPerVisit: viewsPerVisit(v.pageviews, v.sessions), BounceRate: bounceRate(v.sessions, v.bounces),
		VisitDuration: meanSeconds(v.durationSum, v.sessions)}
}

// bucket is a unit of a series: its start, and its key as Bucket's
// dimension reads it.
type bucket struct {
	start time.Time
	key   string
}

// buckets are the units of interval that the inclusive dates first..last
// touch, [from, to) in loc: days, weeks and months as dates (a week from
// its Monday, a month from its first, even before first); hours as the
// instants they start in loc, 15 minutes apart at most, as zones' offsets
// are (an hour a clock change repeats is two, one it skips none).
func buckets(interval string, first, last, from, to time.Time, loc *time.Location) []bucket {
	var out []bucket
	date := func(d time.Time) bucket { return bucket{start: d, key: d.Format(time.DateOnly)} }
	switch interval {
	case IntervalHour:
		for t := from; t.Before(to); t = t.Add(15 * time.Minute) {
			local := t.In(loc)
			start := t.Add(-time.Duration(local.Minute())*time.Minute - time.Duration(local.Second())*time.Second)
			if n := len(out); n == 0 || !out[n-1].start.Equal(start) {
				out = append(out, bucket{start: start.In(loc), key: strconv.FormatInt(start.Unix(), 10)})
			}
		}
	case IntervalWeek:
		monday := first.AddDate(0, 0, -(int(first.Weekday())+6)%7)
		for d := monday; !d.After(last); d = d.AddDate(0, 0, 7) {
			out = append(out, date(d))
		}
	case IntervalMonth:
		for d := time.Date(first.Year(), first.Month(), 1, 0, 0, 0, 0, time.UTC); !d.After(last); d = d.AddDate(0, 1, 0) {
			out = append(out, date(d))
		}
	default:
		for d := first; !d.After(last); d = d.AddDate(0, 0, 1) {
			out = append(out, date(d))
		}
	}
	return out
}

// change compares cur with prev: the percent change of each metric, the
// bounce rate in points. It compares the figures as they are, not as
// rounded for show: 16.67 % → 33.33 % is 16.7 points, where the rounded
// rates would give 33.3 - 16.7 = 16.6.
func change(cur, prev periodStats) Change {
	c, p := cur.visits, prev.visits
	return Change{
		Visitors:      percentChange(cur.visitors, prev.visitors),
		Visits:        percentChange(c.sessions, p.sessions),
		Pageviews:     percentChange(cur.pageviews, prev.pageviews),
		ViewsPerVisit: percentChange(ratio(c.pageviews, c.sessions), ratio(p.pageviews, p.sessions)),
		BounceRate:    round1(bounceShare(c.sessions, c.bounces) - bounceShare(p.sessions, p.bounces)),
		VisitDuration: percentChange(ratio(c.durationSum, c.sessions), ratio(p.durationSum, p.sessions)),
	}
}

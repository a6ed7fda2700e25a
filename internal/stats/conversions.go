package stats

import (
	"context"
	"time"

	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/model"
)

// GoalLister lists a site's goals.
type GoalLister interface {
	GoalsBySite(ctx context.Context, site model.SiteID) ([]model.Goal, error)
}

// Conversions computes every goal of the site for the range and for the
// previous period of equal length: one ClickHouse query per period holds all
// goals.
func (s *Service) Conversions(ctx context.Context, p auth.Principal, r Request) (Conversions, error) {
	var res Conversions
	sc, err := s.resolve(ctx, p, r)
	if err != nil {
		return res, err
	}
	goals, err := s.goals.GoalsBySite(ctx, sc.site.ID)
	if err != nil {
		return res, err
	}
	days := int(r.DateTo.Sub(r.DateFrom).Hours()/24+0.5) + 1
	var cur, prev []float64
	err = parallel(ctx,
		func(ctx context.Context) (err error) {
			cur, err = s.goalCounts(ctx, sc, goals, r.DateFrom, r.DateTo)
			return err
		},
		func(ctx context.Context) (err error) {
			prev, err = s.goalCounts(ctx, sc, goals, r.DateFrom.AddDate(0, 0, -days), r.DateFrom.AddDate(0, 0, -1))
			return err
		})
	if err != nil {
		return res, err
	}
	res.Goals = make([]GoalConversion, len(goals))
	for i, g := range goals {
		completions, converters := cur[1+2*i], cur[2+2*i]
		rate, prevRate := percent(completions, cur[0]), percent(prev[1+2*i], prev[0])
		res.Goals[i] = GoalConversion{Goal: g, Completions: count(completions), Converters: count(converters), Rate: rate,
			VisitorRate: percent(converters, cur[0]), PrevRate: prevRate, Change: percentChange(rate, prevRate)}
	}
	res.Meta, res.Visitors = sc.meta(), count(cur[0])
	return res, nil
}

// goalsPerQuery bounds the goals one query counts: each adds its pattern
// (up to ~2 KiB once escaped) twice to the query's text, which ClickHouse
// caps (max_query_size, 256 KiB).
const goalsPerQuery = 20

// goalCounts returns, for the inclusive dates first..last, all visitors and
// then each goal's completions and converters, goalsPerQuery goals a query.
func (s *Service) goalCounts(ctx context.Context, sc scope, goals []model.Goal, first, last time.Time) ([]float64, error) {
	sc.from, sc.to = sc.bounds(first, last)
	chunks := (len(goals) + goalsPerQuery - 1) / goalsPerQuery
	parts := make([][]float64, max(chunks, 1))
	fns := make([]func(context.Context) error, len(parts))
	for i := range parts {
		chunk := goals[min(i*goalsPerQuery, len(goals)):min((i+1)*goalsPerQuery, len(goals))]
		fns[i] = func(ctx context.Context) (err error) {
			metrics := []Metric{Visitors}
			for _, g := range chunk {
				metrics = append(metrics, Completions(g), Converters(g))
			}
			parts[i], err = s.total(ctx, sc.query(Events, nil, metrics))
			return err
		}
	}
	if err := parallel(ctx, fns...); err != nil {
		return nil, err
	}
	out := []float64{parts[0][0]}
	for _, p := range parts {
		out = append(out, p[1:]...)
	}
	return out, nil
}

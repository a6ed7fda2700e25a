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
	var cur, prev goalFigures
	err = parallel(ctx,
		func(ctx context.Context) (err error) {
			cur, err = s.goalCounts(ctx, sc, goals, r.DateFrom, r.DateTo, true)
			return err
		},
		func(ctx context.Context) (err error) {
			// the previous period's rates need no converters
			prev, err = s.goalCounts(ctx, sc, goals, r.DateFrom.AddDate(0, 0, -days), r.DateFrom.AddDate(0, 0, -1), false)
			return err
		})
	if err != nil {
		return res, err
	}
	res.Goals = make([]GoalConversion, len(goals))
	for i, g := range goals {
		completions, converters := cur.completions[i], cur.converters[i]
		// the change compares the rates as they are, not as rounded for show
		change := percentChange(ratio(completions, cur.visitors), ratio(prev.completions[i], prev.visitors))
		res.Goals[i] = GoalConversion{Goal: g, Completions: count(completions), Converters: count(converters),
			Rate: conversionRate(completions, cur.visitors), VisitorRate: percent(converters, cur.visitors),
			PrevRate: conversionRate(prev.completions[i], prev.visitors), Change: change}
	}
	res.Meta, res.Visitors = sc.meta(), count(cur.visitors)
	return res, nil
}

// goalFigures are a range's visitors and, for each goal in order, its
// completions and converters.
type goalFigures struct {
	visitors                float64
	completions, converters []float64
}

// goalsPerQuery bounds the pageview goals one query counts: each adds its
// condition (pathCondition, up to ~4.6 KiB once escaped) twice to the
// query's text, which ClickHouse caps (max_query_size, 256 KiB): 20 take
// at most ~185 KiB.
const goalsPerQuery = 20

// goalCounts counts the visitors of the inclusive dates first..last and
// each goal's completions, and its converters when converters is set. The
// queries run side by side: the visitors; the custom-event goals, one query
// grouped by event name (which the event rollup holds); the pageview goals,
// goalsPerQuery a query, from the page rollups when the range allows them.
func (s *Service) goalCounts(ctx context.Context, sc scope, list []model.Goal, first, last time.Time, converters bool) (goalFigures, error) {
	sc.from, sc.to = sc.bounds(first, last)
	out := goalFigures{completions: make([]float64, len(list)), converters: make([]float64, len(list))}
	var names []string
	var pages []int // the pageview goals' indexes
	for i, g := range list {
		if g.Type == model.GoalPageview {
			pages = append(pages, i)
		} else {
			names = append(names, g.EventName)
		}
	}
	fns := []func(context.Context) error{func(ctx context.Context) (err error) {
		out.visitors, err = s.visitors(ctx, sc)
		return err
	}}
	if len(names) > 0 {
		fns = append(fns, func(ctx context.Context) error {
			metrics := []Metric{EventCount}
			if converters {
				metrics = append(metrics, Visitors)
			}
			rows, err := s.rows(ctx, sc.query(Events, []Dimension{EventName}, metrics, customEvents, In(EventName, names)))
			if err != nil {
				return err
			}
			byName := byDim(rows)
			for i, g := range list {
				if v, ok := byName[g.EventName]; ok && g.Type != model.GoalPageview {
					out.completions[i] = v[0]
					if converters {
						out.converters[i] = v[1]
					}
				}
			}
			return nil
		})
	}
	ru, rolled := s.planRollup(sc)
	for len(pages) > 0 {
		chunk := pages[:min(len(pages), goalsPerQuery)]
		pages = pages[len(chunk):]
		conds := make([]condition, len(chunk))
		for j, i := range chunk {
			conds[j].sql, conds[j].args = pathCondition(list[i].PagePath)
		}
		// figures[j] are the completions (and converters) of goal chunk[j]
		into := func(dst []float64) func(figures []float64) {
			return func(figures []float64) {
				for j, i := range chunk {
					dst[i] = figures[j]
				}
			}
		}
		if rolled {
			sql, args := ru.goalPageviews(conds)
			fns = append(fns, s.totalSQL(sql, args, len(chunk), into(out.completions)))
			if converters {
				sql, args := ru.goalVisitors(conds)
				fns = append(fns, s.totalSQL(sql, args, len(chunk), into(out.converters)))
			}
			continue
		}
		fns = append(fns, func(ctx context.Context) error {
			// the chunk's completions, then its converters
			metrics := make([]Metric, 0, 2*len(chunk))
			for _, i := range chunk {
				metrics = append(metrics, Completions(list[i]))
			}
			if converters {
				for _, i := range chunk {
					metrics = append(metrics, Converters(list[i]))
				}
			}
			total, err := s.total(ctx, sc.query(Events, nil, metrics))
			if err != nil {
				return err
			}
			into(out.completions)(total[:len(chunk)])
			if converters {
				into(out.converters)(total[len(chunk):])
			}
			return nil
		})
	}
	return out, parallel(ctx, fns...)
}

// totalSQL runs built SQL whose one row is metrics metrics, and hands them
// to set (zeros when no row came back).
func (s *Service) totalSQL(sql string, args []any, metrics int, set func([]float64)) func(context.Context) error {
	return func(ctx context.Context) error {
		res, err := s.runSQL(ctx, sql, args, 0, metrics)
		if err == nil {
			set(firstMetrics(res.Rows, metrics))
		}
		return err
	}
}

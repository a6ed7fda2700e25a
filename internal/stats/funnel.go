package stats

import (
	"context"
	"math"
	"sort"
	"strings"

	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/model"
)

// FunnelSource finds the funnel of a report: a funnel of another site is
// funnel_not_found (the funnels service).
type FunnelSource interface {
	Of(ctx context.Context, site model.SiteID, id model.FunnelID) (model.Funnel, error)
}

// Funnel reports how many visitors went through a funnel's steps, how long
// each step took them (median) and what they paid: one ClickHouse query (see
// FunnelQuery) walked visitor by visitor (funnelWalk). The filters select
// the events of matching visits, as they do for the other reports, except
// pathname: the steps name the pages. A host filter keeps the steps
// completed on that host.
func (s *Service) Funnel(ctx context.Context, p auth.Principal, r Request) (FunnelReport, error) {
	var res FunnelReport
	sc, err := s.access(ctx, p, r)
	if err != nil {
		return res, err
	}
	if _, ok := sc.req.Filter(Pathname); ok {
		return res, errs.InvalidField("pathname", "the funnel report cannot be filtered by page: its steps name the pages")
	}
	for _, f := range sc.req.Filters {
		if f.Dim.visit {
			return res, errs.InvalidField(f.Dim.Name, "the funnel report cannot be filtered by a prop: its steps name the props")
		}
	}
	if s.funnels == nil {
		return res, errs.E(errs.NotFound, "funnel_not_found", "funnel not found")
	}
	f, err := s.funnels.Of(ctx, sc.site.ID, r.FunnelID)
	if err != nil {
		return res, err
	}
	if sc.sample, err = s.rawSampleRate(ctx, sc); err != nil {
		return res, err
	}
	q := FunnelQuery{Site: sc.site.ID, From: sc.from, To: sc.to, Steps: f.Steps, Window: f.Window, Filters: sc.req.Filters,
		SamplePercent: sc.sample, BaseCurrency: sc.site.BaseCurrency, ClientRevenue: sc.site.ClientRevenue.Included}
	sql, args, err := q.Build()
	if err != nil {
		return res, err
	}
	walk := newFunnelWalk(len(f.Steps), f.Window)
	var visitor, e uint64
	var net int64
	if err := s.store.Each(ctx, sql, args, []any{&visitor, &e, &net}, func() { walk.add(visitor, e, net) }); err != nil {
		return res, queryError(err)
	}
	row := walk.result()
	res = funnelReport(f, row, sc.rawScale())
	res.Currency = sc.site.BaseCurrency
	res.Meta = sc.meta()
	return res, nil
}

// funnelReport turns the query's row (per step: visitors, median, revenue)
// into the report.
func funnelReport(f model.Funnel, row []float64, scale float64) FunnelReport {
	rep := FunnelReport{Funnel: f, Steps: make([]FunnelStepReport, len(f.Steps))}
	var first, prev int64
	for i, step := range f.Steps {
		visitors := count(row[3*i] * scale)
		st := FunnelStepReport{Step: i + 1, Label: StepLabel(step), Visitors: visitors, Revenue: count(row[3*i+2] * scale)}
		if i == 0 {
			first = visitors
		} else {
			st.Dropoff = prev - visitors
			st.DropoffRate = percent(float64(st.Dropoff), float64(prev))
			if med := row[3*i+1]; visitors > 0 && !math.IsNaN(med) {
				m := round1(med)
				st.MedianSecondsFromPrevious = &m
			}
		}
		st.ConversionRate = percent(float64(visitors), float64(first))
		rep.Steps[i] = st
		prev = visitors
	}
	rep.ConversionRate = percent(float64(prev), float64(first))
	return rep
}

// StepLabel names a step: its page path, or its event name with the props it
// requires ("Signup (plan=pro)").
func StepLabel(s model.FunnelStep) string {
	if s.Type == model.GoalPageview {
		return s.PagePath
	}
	if len(s.Props) == 0 {
		return s.EventName
	}
	props := make([]string, 0, len(s.Props))
	for k, v := range s.Props {
		props = append(props, k+"="+v)
	}
	sort.Strings(props)
	return s.EventName + " (" + strings.Join(props, ", ") + ")"
}

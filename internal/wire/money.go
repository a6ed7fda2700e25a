package wire

import (
	"time"

	"github.com/tally-analytics/tally/internal/stats"
	"github.com/tally-analytics/tally/pkg/api"
)

// Conversions is the body of GET /api/v1/goals/conversions.
func Conversions(c stats.Conversions) api.ConversionsResponse {
	return api.ConversionsResponse{
		Data: each(c.Goals, func(g stats.GoalConversion) api.Conversion {
			return api.Conversion{GoalID: string(g.Goal.ID), GoalName: g.Goal.Name, GoalType: string(g.Goal.Type),
				TotalConversions: g.Completions, UniqueVisitors: g.Converters, ConversionRate: g.Rate,
				VisitorConversionRate: g.VisitorRate, PreviousPeriodRate: g.PrevRate, ChangePercent: g.Change}
		}),
		Meta: api.ConversionsMeta{SiteID: string(c.Meta.Site), DateFrom: date(c.Meta.From), DateTo: date(c.Meta.To),
			TotalUniqueVisitors: c.Visitors},
	}
}

// Revenue is the body of GET /api/v1/stats/revenue.
func Revenue(r stats.RevenueReport) api.RevenueResponse {
	t := r.Totals
	return api.RevenueResponse{
		Data: api.RevenueReport{Currency: r.Currency,
			Totals: api.RevenueSummary{RevenueTotals: api.RevenueTotals(t.RevenueTotals), Visitors: t.Visitors,
				RevenuePerVisitor: t.RevenuePerVisitor, PayingVisitorRate: t.PayingVisitorRate},
			Breakdown: each(r.Breakdown, func(row stats.RevenueRow) api.RevenueRow {
				return api.RevenueRow{Value: row.Value, RevenueTotals: api.RevenueTotals(row.RevenueTotals)}
			}),
			Timeseries: each(r.Series, func(d stats.RevenueDay) api.RevenuePoint {
				return api.RevenuePoint{Date: date(d.Date), Revenue: d.Revenue, Refunds: d.Refunds, Net: d.Net, ClientReported: d.ClientReported}
			}),
		},
		Meta: api.RevenueMeta{StatsMeta: meta(r.Meta), Breakdown: r.By, Attribution: r.Attribution, Model: r.LegacyModel,
			PendingConversion: r.Pending, ClientRevenueIncluded: r.ClientRevenueIncluded},
	}
}

// Funnel is the body of GET /api/v1/stats/funnel.
func Funnel(f stats.FunnelReport) api.FunnelReportResponse {
	return api.FunnelReportResponse{
		Data: api.FunnelReport{FunnelID: string(f.Funnel.ID), Name: f.Funnel.Name, WindowSeconds: int64(f.Funnel.Window / time.Second),
			ConversionRate: f.ConversionRate, Currency: f.Currency,
			Steps: each(f.Steps, func(s stats.FunnelStepReport) api.FunnelReportStep { return api.FunnelReportStep(s) })},
		Meta: meta(f.Meta),
	}
}

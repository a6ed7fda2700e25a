// Package wire turns the stats service's reports into the public wire
// types of pkg/api: one function per report. The API answers with them
// (JSON, or CSV through export.Table) and the dashboard's download writes
// its files with them, so both write the same bytes.
package wire

import (
	"time"

	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/stats"
	"github.com/tally-analytics/tally/pkg/api"
)

// Overview is the body of GET /api/v1/stats/overview.
func Overview(o stats.Overview) api.OverviewResponse {
	var res api.OverviewResponse
	point := func(d stats.DayCount) api.TimeseriesPoint {
		return api.TimeseriesPoint{Date: SeriesDate(d.Date, o.Interval), Visitors: d.Visitors, Visits: d.Visits,
			Pageviews: d.Pageviews, ViewsPerVisit: d.ViewsPerVisit, BounceRate: d.BounceRate, VisitDuration: d.VisitDuration}
	}
	res.Data = api.Overview{Metrics: api.Metrics(o.Metrics), Timeseries: each(o.Series, point)}
	if c := o.Comparison; c != nil {
		res.Data.Comparison = &api.Comparison{DateFrom: date(c.From), DateTo: date(c.To), Metrics: api.Metrics(c.Metrics),
			Timeseries: each(c.Series, point), Change: api.Change(c.Change)}
	}
	res.Meta = api.OverviewMeta{StatsMeta: meta(o.Meta), FilteredBotTraffic: o.Bots.Total(),
		FilteredBotTrafficByCategory: api.BotTraffic(o.Bots)}
	return res
}

// SeriesDate is how a series' unit is written: its first day
// (YYYY-MM-DD), or an hour's start with the offset of its zone then
// (2026-05-04T13:00:00+02:00: two hours a clock change repeats differ).
func SeriesDate(t time.Time, interval string) string {
	if interval == stats.IntervalHour {
		return t.Format(time.RFC3339)
	}
	return date(t)
}

// Pages is the body of GET /api/v1/stats/pages.
func Pages(p stats.Pages) api.PagesResponse {
	var res api.PagesResponse
	res.Data.Pages = each(p.Rows, func(r stats.PageRow) api.Page {
		return api.Page{Pathname: r.Path, Pageviews: r.Pageviews, Visitors: r.Visitors, BounceRate: r.BounceRate,
			AvgTimeOnPage: r.AvgTimeOnPage, ScrollDepth: r.ScrollDepth}
	})
	res.Data.Pagination = api.Pagination{Total: p.Total, Page: p.Page, Limit: p.Limit}
	res.Meta = meta(p.Meta)
	return res
}

// Hostnames is the body of GET /api/v1/stats/hostnames.
func Hostnames(h stats.Hostnames) api.HostnamesResponse {
	var res api.HostnamesResponse
	res.Data.Hostnames = each(h.Rows, func(r stats.HostnameRow) api.HostnameRow {
		return api.HostnameRow{Hostname: r.Hostname, Visitors: r.Visitors, Pageviews: r.Pageviews, Percentage: r.Percentage}
	})
	res.Data.Pagination = api.Pagination{Total: h.Total, Page: h.Page, Limit: h.Limit}
	res.Meta = meta(h.Meta)
	return res
}

// Sources is the body of GET /api/v1/stats/sources.
func Sources(l stats.List[stats.SourceRow]) (res api.SourcesResponse) {
	list(l, &res.Data.Sources, &res.Meta, func(r stats.SourceRow) api.SourceRow {
		return api.SourceRow{Source: r.Source, SourceType: r.Type, Visitors: r.Visitors, Pageviews: r.Pageviews, BounceRate: r.BounceRate}
	})
	return res
}

// Channels is the body of GET /api/v1/stats/channels.
func Channels(l stats.List[stats.ChannelRow]) (res api.ChannelsResponse) {
	list(l, &res.Data.Channels, &res.Meta, func(r stats.ChannelRow) api.ChannelRow {
		return api.ChannelRow{Channel: r.Channel, Visitors: r.Visitors, Percentage: r.Percentage, Visits: r.Visits,
			Pageviews: r.Pageviews, BounceRate: r.BounceRate, VisitDuration: r.VisitDuration}
	})
	return res
}

// EntryPages is the body of GET /api/v1/stats/entry-pages.
func EntryPages(l stats.List[stats.EntryRow]) (res api.EntryPagesResponse) {
	list(l, &res.Data.EntryPages, &res.Meta, func(r stats.EntryRow) api.EntryPage {
		return api.EntryPage{Pathname: r.Path, Entries: r.Entries, EntryRate: r.EntryRate, BounceRate: r.BounceRate}
	})
	return res
}

// ExitPages is the body of GET /api/v1/stats/exit-pages.
func ExitPages(l stats.List[stats.ExitRow]) (res api.ExitPagesResponse) {
	list(l, &res.Data.ExitPages, &res.Meta, func(r stats.ExitRow) api.ExitPage {
		return api.ExitPage{Pathname: r.Path, Exits: r.Exits, ExitRate: r.ExitRate}
	})
	return res
}

// Events is the body of GET /api/v1/stats/events.
func Events(l stats.List[stats.EventRow]) (res api.EventsResponse) {
	list(l, &res.Data.Events, &res.Meta, func(r stats.EventRow) api.EventRow {
		return api.EventRow{EventName: r.Name, TotalCount: r.Count, UniqueVisitors: r.Visitors, ConversionRate: r.ConversionRate}
	})
	return res
}

// EventProperties is the body of GET /api/v1/stats/event-properties: the
// event's keys (api.EventPropertyKeysResponse), or, for a property, its
// values (api.EventPropertyValuesResponse). Either is a table (export.Table).
func EventProperties(r stats.EventProperties) interface{ CSVRows() any } {
	m := api.EventPropertiesMeta{StatsMeta: meta(r.Meta), EventName: r.Event, Property: r.Property}
	if r.Property == "" {
		return api.EventPropertyKeysResponse{Meta: m, Data: each(r.Keys, func(k stats.PropertyKeyRow) api.EventPropertyKey {
			return api.EventPropertyKey{Property: k.Key, TotalCount: k.Count, UniqueVisitors: k.Visitors}
		})}
	}
	return api.EventPropertyValuesResponse{Meta: m, Data: each(r.Values, func(v stats.PropertyValueRow) api.EventPropertyValue {
		return api.EventPropertyValue{Value: v.Value, TotalCount: v.Count, UniqueVisitors: v.Visitors, ConversionRate: v.ConversionRate}
	})}
}

// Retention is the body of GET /api/v1/stats/retention.
func Retention(r stats.Retention) api.RetentionResponse {
	return api.RetentionResponse{Meta: meta(r.Meta), Data: api.Retention{Interval: r.Interval,
		Cohorts: each(r.Cohorts, func(c stats.Cohort) api.RetentionCohort {
			periods := make([]api.RetentionPeriod, len(c.Returns))
			for k, ret := range c.Returns {
				periods[k] = api.RetentionPeriod{Period: k, Visitors: ret.Visitors, Percentage: ret.Percentage}
			}
			return api.RetentionCohort{Date: date(c.Date), Visitors: c.Visitors, Periods: periods}
		})}}
}

// Realtime is the body of GET /api/v1/stats/realtime.
func Realtime(rt stats.Realtime) api.RealtimeResponse {
	var res api.RealtimeResponse
	res.Data = api.Realtime{ActiveVisitors: rt.Visitors,
		CurrentPages: each(rt.Pages, func(c model.VisitorCount) api.RealtimePage {
			return api.RealtimePage{Pathname: c.Value, Visitors: c.Visitors}
		}),
		CurrentSources: each(rt.Sources, func(c model.VisitorCount) api.RealtimeSrc {
			return api.RealtimeSrc{Source: c.Value, Visitors: c.Visitors}
		})}
	res.Meta.Timestamp = rt.At
	return res
}

// Ingestion is the body of GET /api/v1/stats/ingestion.
func Ingestion(in stats.Ingestion) api.IngestionResponse {
	return api.IngestionResponse{Meta: meta(in.Meta), Data: api.IngestionReport{
		Totals:          api.IngestionCounts(in.Totals),
		BotsByCategory:  api.BotTraffic(in.Bots),
		RefusedByReason: each(in.Refused, func(r stats.RefusalCount) api.RefusalCount { return api.RefusalCount(r) }),
		Timeseries: each(in.Series, func(d stats.IngestionDay) api.IngestionPoint {
			return api.IngestionPoint{Date: date(d.Date), Accepted: d.Accepted, Bots: d.Bots, Refused: d.Refused, Excluded: d.Excluded}
		}),
	}}
}

// meta is the meta object of the stats reports.
func meta(m stats.Meta) api.StatsMeta {
	return api.StatsMeta{SiteID: string(m.Site), DateFrom: date(m.From), DateTo: date(m.To), Timezone: m.Timezone, Sampled: m.Sampled}
}

// date writes a date as the API does.
func date(t time.Time) string { return t.Format(time.DateOnly) }

// list fills the rows and the meta of a list report.
func list[S, W any](l stats.List[S], rows *[]W, m *api.StatsMeta, conv func(S) W) {
	*rows, *m = each(l.Rows, conv), meta(l.Meta)
}

// each converts every row of a list; an empty list stays a list ([] in
// JSON, never null).
func each[S, W any](rows []S, conv func(S) W) []W {
	out := make([]W, len(rows))
	for i, r := range rows {
		out[i] = conv(r)
	}
	return out
}

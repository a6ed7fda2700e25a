package web

import (
	"context"

	"github.com/labstack/echo/v4"

	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/present"
	"github.com/tally-analytics/tally/internal/stats"
)

// sourcesCard lists where visits came from by its tab: their sources,
// their channels, or the values of a UTM parameter. Each row filters the
// dashboard by itself.
func (s *Server) sourcesCard(c echo.Context, ctx context.Context, p auth.Principal, v view, r stats.Request, tab string) error {
	card := tableCard{View: v, Card: "sources", Tabs: tabs(v, "sources", or(tab, "sources"), [2]string{"sources", "Sources"},
		[2]string{"channels", "Channels"}, [2]string{"utm_campaign", "Campaigns"}, [2]string{"utm_source", "UTM sources"},
		[2]string{"utm_medium", "UTM mediums"})}
	if _, ok := stats.UTMDimensions[tab]; ok {
		r.UTMBy = tab
		res, err := s.deps.Stats.Campaigns(ctx, p, r)
		if err != nil {
			return err
		}
		card.Columns = []string{card.tabLabel(), "Visitors", "Share", "Pageviews", "Bounce rate"}
		for _, row := range head(res.Rows) {
			card.Rows = append(card.Rows, cardRow{Label: row.Value, Link: v.link(tab, row.Value),
				Cells: []cardCell{countCell("visitors", row.Visitors), pctCell("percentage", row.Percentage),
					countCell("pageviews", row.Pageviews), pctCell("bounce_rate", row.BounceRate)}})
		}
		card.Empty = "No visits with UTM parameters in this range."
		return s.renderTable(c, card)
	}
	if tab == "channels" {
		return s.channelsTab(c, ctx, p, v, r, card)
	}
	res, err := s.deps.Stats.Sources(ctx, p, r)
	if err != nil {
		return err
	}
	card.Columns = []string{"Source", "Visitors", "Pageviews", "Bounce rate"}
	for _, row := range head(res.Rows) {
		card.Rows = append(card.Rows, cardRow{Label: row.Source, Link: v.link("source", row.Source),
			Cells: []cardCell{countCell("visitors", row.Visitors), countCell("pageviews", row.Pageviews), pctCell("bounce_rate", row.BounceRate)}})
	}
	return s.renderTable(c, card)
}

// channelsTab is the sources card's Channels tab: visits by acquisition
// channel (Organic Search, Paid Social, Direct…), the rows of the channels
// report.
func (s *Server) channelsTab(c echo.Context, ctx context.Context, p auth.Principal, v view, r stats.Request, card tableCard) error {
	res, err := s.deps.Stats.Channels(ctx, p, r)
	if err != nil {
		return err
	}
	card.Columns = []string{"Channel", "Visitors", "Share", "Visits", "Bounce rate", "Visit duration"}
	for _, row := range head(res.Rows) {
		card.Rows = append(card.Rows, cardRow{Label: row.Channel, Link: v.link("channel", row.Channel),
			Cells: []cardCell{countCell("visitors", row.Visitors), pctCell("percentage", row.Percentage),
				countCell("visits", row.Visits), pctCell("bounce_rate", row.BounceRate),
				{Name: "visit_duration", Text: present.Duration(row.VisitDuration), Value: rawFloat(row.VisitDuration)}}})
	}
	return s.renderTable(c, card)
}

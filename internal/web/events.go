package web

import (
	"context"
	"html/template"

	"github.com/labstack/echo/v4"

	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/stats"
)

// eventsCard lists the custom events, each opening its props in the card:
// with event, the prop keys it carried; with a property too, the event by
// that key's values. The keys are the card's tabs, after one back to every
// event and one to the keys.
func (s *Server) eventsCard(c echo.Context, ctx context.Context, p auth.Principal, v view, r stats.Request, event, property string) error {
	if event != "" {
		return s.eventPropertiesCard(c, ctx, p, v, r, event, property)
	}
	res, err := s.deps.Stats.Events(ctx, p, r)
	if err != nil {
		return err
	}
	card := tableCard{View: v, Card: "events", Columns: []string{"Event", "Visitors", "Events", "Conversion rate"},
		Empty: "No custom events in this range. Send them with <code>analytics('event', 'Signup')</code>."}
	for _, row := range head(res.Rows) {
		card.Rows = append(card.Rows, cardRow{Label: row.Name, Drill: v.cardURLWith("events", "event", row.Name),
			DrillTitle: "Break " + row.Name + " down by its properties",
			Cells: []cardCell{countCell("unique_visitors", row.Visitors), countCell("total_count", row.Count),
				pctCell("conversion_rate", row.ConversionRate)}})
	}
	return s.renderTable(c, card)
}

// eventPropertiesCard is the events card on one event (see eventsCard).
func (s *Server) eventPropertiesCard(c echo.Context, ctx context.Context, p auth.Principal, v view, r stats.Request,
	event, property string) error {
	r.EventName, r.Property, r.Limit = event, "", cardRows
	keys, err := s.deps.Stats.EventProperties(ctx, p, r)
	if err != nil {
		return err
	}
	card := tableCard{View: v, Card: "event-properties", Note: "Properties of " + event,
		Tabs: []cardTab{{Label: "All events", URL: v.cardURL("events", "")},
			{Label: "Properties", URL: v.cardURLWith("events", "event", event), Active: property == ""}},
		Empty: template.HTML("No properties on " + template.HTMLEscapeString(event) + " in this range. Send them with " +
			"<code>analytics('event', 'Signup', {props: {plan: 'pro'}})</code>.")}
	for _, k := range keys.Keys {
		card.Tabs = append(card.Tabs, cardTab{Label: k.Key, URL: v.cardURLWith("events", "event", event, "property", k.Key),
			Active: k.Key == property})
	}
	if property == "" {
		card.Columns = []string{"Property", "Visitors", "Events"}
		for _, k := range keys.Keys {
			card.Rows = append(card.Rows, cardRow{Label: k.Key, Drill: v.cardURLWith("events", "event", event, "property", k.Key),
				DrillTitle: "Break " + event + " down by " + k.Key,
				Cells:      []cardCell{countCell("unique_visitors", k.Visitors), countCell("total_count", k.Count)}})
		}
		return s.renderTable(c, card)
	}
	r.Property = property
	values, err := s.deps.Stats.EventProperties(ctx, p, r)
	if err != nil {
		return err
	}
	card.Note = event + " by " + property
	card.Columns = []string{property, "Visitors", "Events", "Conversion rate"}
	param, props := stats.PropParam(property), 0
	for _, f := range r.Filters {
		if stats.IsPropFilter(f) {
			props++
		}
	}
	_, filtered := v.query[param]
	for _, row := range values.Values {
		link := ""
		// a value filters the dashboard, but for the events without the
		// key, and a fourth prop
		if row.Value != stats.NoneLabel && (filtered || props < stats.MaxPropFilters) {
			link = v.link(param, row.Value)
		}
		card.Rows = append(card.Rows, cardRow{Label: row.Value, Link: link, Cells: []cardCell{countCell("unique_visitors", row.Visitors),
			countCell("total_count", row.Count), pctCell("conversion_rate", row.ConversionRate)}})
	}
	return s.renderTable(c, card)
}

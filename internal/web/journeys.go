package web

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/stats"
)

// journeysCard is the dashboard's journeys: the most common paths of the
// view, with tabs for their length and a form for the pages they begin and
// end at.
type journeysCard struct {
	View view
	Tabs []cardTab
	// Action is the card's URL, which the form sends its pages to, with
	// Hidden (the view's parameters and the path length) beside them.
	Action     string
	Hidden     []hiddenField
	Start, End string
	// Error says why the pages were refused ("" when they were not), and
	// ErrorField names the parameter (start, end or steps).
	Error, ErrorField string
	Data              stats.Journeys
	Rows              []journeyRow
	// Clear is the card without its start and end ("" when it has none).
	Clear string
}

type hiddenField struct{ Name, Value string }

// journeyFields name the card's parameters for people.
var journeyFields = map[string]string{"start": "From page", "end": "To page", "steps": "Steps"}

// journeyRow is a path: its pages, each a link filtering the dashboard by
// it, its label (the pages joined by arrows) and its bar.
type journeyRow struct {
	Label string
	Pages []journeyPage
	Bar   string
	Row   stats.JourneyRow
}

type journeyPage struct{ Path, Link string }

// journeysCard shows the view's journeys with the card's own parameters:
// steps (the tab), start and end.
func (s *Server) journeysCard(c echo.Context, ctx context.Context, p auth.Principal, v view, r stats.Request) error {
	// a page left empty is none (a form sent without the script sends it);
	// spaces typed around a page are no part of it
	steps, start, end := c.QueryParam("steps"), strings.TrimSpace(c.QueryParam("start")), strings.TrimSpace(c.QueryParam("end"))
	r.Steps, r.StartPage, r.EndPage = stats.JourneySteps(c.QueryParams()), start, end
	card := journeysCard{View: v, Action: v.Base + "/cards/journeys", Start: start, End: end}
	for n := stats.MinJourneySteps; n <= stats.MaxJourneySteps; n++ {
		ns := strconv.Itoa(n)
		card.Tabs = append(card.Tabs, cardTab{Label: ns + " steps", URL: v.cardURLWith("journeys", "steps", ns, "start", start, "end", end),
			Active: n == r.Steps})
	}
	for _, k := range slices.Sorted(maps.Keys(v.query)) {
		card.Hidden = append(card.Hidden, hiddenField{k, v.query.Get(k)})
	}
	if steps != "" {
		card.Hidden = append(card.Hidden, hiddenField{"steps", steps})
	}
	if start != "" || end != "" {
		card.Clear = v.cardURLWith("journeys", "steps", steps)
	}
	res, err := s.deps.Stats.Journeys(ctx, p, r)
	if errs.KindOf(err) == errs.Invalid {
		var e *errs.Error
		if errors.As(err, &e) {
			card.Error, card.ErrorField = e.Message, e.Field
			if label, ok := journeyFields[e.Field]; ok {
				card.Error = label + ": " + e.Message
			}
		}
		return s.renderCard(c, "journeys", card)
	}
	if err != nil {
		return err
	}
	card.Data = res
	var top int64
	for _, row := range res.Rows {
		top = max(top, row.Sessions)
	}
	for _, row := range res.Rows {
		jr := journeyRow{Label: strings.Join(row.Pages, " → "), Bar: barWidth(row.Sessions, top), Row: row}
		for _, page := range row.Pages {
			jr.Pages = append(jr.Pages, journeyPage{Path: page, Link: v.link("pathname", page)})
		}
		card.Rows = append(card.Rows, jr)
	}
	return s.renderCard(c, "journeys", card)
}

package web

import (
	"context"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/stats"
)

// healthCard is the site's tracking health over the range: the events
// counted, those filtered as bots (by category), those the site's
// exclusions kept out, and those refused (by reason). Filters do not apply: it is about every event sent.
func (s *Server) healthCard(c echo.Context, ctx context.Context, p auth.Principal, v view, r stats.Request) error {
	r.Filters = nil
	res, err := s.deps.Stats.Ingestion(ctx, p, r)
	if err != nil {
		return err
	}
	card := tableCard{View: v, Card: "health", Columns: []string{"Events", "Count"},
		Empty: "No events were sent in this range."}
	if len(v.Filters) > 0 {
		card.Note = "Every event of the range: the filters do not apply here."
	}
	add := func(label, name string, n int64) {
		card.Rows = append(card.Rows, cardRow{Label: label, Cells: []cardCell{countCell(name, n)}})
	}
	d := res
	if d.Totals.Accepted+d.Totals.Bots+d.Totals.Refused+d.Totals.Excluded == 0 {
		return s.renderTable(c, card)
	}
	add("Counted", "accepted", d.Totals.Accepted)
	for _, b := range []struct {
		label string
		n     int64
	}{{"crawlers", d.Bots.Crawler}, {"AI agents", d.Bots.AIAgent}, {"monitors", d.Bots.Monitor},
		{"automation", d.Bots.Automation}, {"other", d.Bots.Other}} {
		if b.n > 0 {
			add("Bots: "+b.label, "bots", b.n)
		}
	}
	if d.Totals.Excluded > 0 {
		add("Excluded by the site's settings", "excluded", d.Totals.Excluded)
	}
	for _, rc := range d.Refused {
		if rc.Count > 0 {
			add("Refused: "+or(refusalLabels[rc.Reason], rc.Reason), "refused:"+rc.Reason, rc.Count)
		}
	}
	if d.Totals.Refused == 0 {
		card.Note = strings.TrimSpace(card.Note + " Nothing was refused.")
	}
	return s.renderTable(c, card)
}

// refusalLabels say each refusal reason in words.
var refusalLabels = map[string]string{
	model.RefusedInvalidPayload: "invalid payload",
	model.RefusedInvalidProps:   "invalid props",
	model.RefusedBodyTooLarge:   "body too large",
	model.RefusedHostMismatch:   "page not on the site's domain",
	model.RefusedRateLimited:    "over a rate limit",
	model.RefusedOverWALBudget:  "buffer full",
	model.RefusedUnavailable:    "server unavailable",
}

package httpapi

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/tally-analytics/tally/internal/stats"
	"github.com/tally-analytics/tally/internal/wire"
	"github.com/tally-analytics/tally/pkg/api"
)

// maxQueryBody bounds the body of a v2 query (filters of 100 values of up
// to 1 KB fit many times over).
const maxQueryBody = 256 << 10

// queryRoutes registers the Plausible-compatible Stats API v2 on g.
func (s *Server) queryRoutes(g *echo.Group, mw ...echo.MiddlewareFunc) {
	g.POST("/query", s.query, append(mw, bodyLimit(maxQueryBody))...)
}

// query answers POST /api/v2/query.
func (s *Server) query(c echo.Context) error {
	var req api.QueryRequest
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	body := stats.QueryBody{SiteID: req.SiteID, DateRange: req.DateRange, Metrics: req.Metrics, Dimensions: req.Dimensions,
		Filters: req.Filters, OrderBy: req.OrderBy}
	if p := req.Pagination; p != nil {
		body.Limit, body.Offset = p.Limit, p.Offset
	}
	if req.Include != nil {
		body.TotalRows, body.TimeLabels = req.Include.TotalRows, req.Include.TimeLabels
	}
	q, err := stats.ParseQueryBody(body)
	if err != nil {
		return err
	}
	res, err := s.deps.Stats.Query(c.Request().Context(), principal(c), q)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, wire.Query(res))
}

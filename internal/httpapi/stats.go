package httpapi

import (
	"context"
	"net/http"
	"path"

	"github.com/labstack/echo/v4"

	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/export"
	"github.com/tally-analytics/tally/internal/stats"
	"github.com/tally-analytics/tally/pkg/api"
)

// Stats answers the stats endpoints: the reports a download holds, and the
// realtime view.
type Stats interface {
	export.Reports
	Realtime(ctx context.Context, p auth.Principal, r stats.Request) (api.RealtimeResponse, error)
	Ingestion(ctx context.Context, p auth.Principal, r stats.Request) (api.IngestionResponse, error)
}

// statsRoutes registers the stats endpoints on g.
func (s *Server) statsRoutes(g *echo.Group, mw ...echo.MiddlewareFunc) {
	st := s.deps.Stats
	g.GET("/stats/overview", report(stats.Endpoint{AcceptCompare: true}, st.Overview), mw...)
	g.GET("/stats/pages", report(stats.Endpoint{AcceptPaging: true}, st.Pages), mw...)
	g.GET("/stats/sources", report(stats.Endpoint{}, st.Sources), mw...)
	g.GET("/stats/campaigns", report(stats.Endpoint{AcceptUTMBy: true}, st.Campaigns), mw...)
	g.GET("/stats/entry-pages", report(stats.Endpoint{}, st.EntryPages), mw...)
	g.GET("/stats/exit-pages", report(stats.Endpoint{}, st.ExitPages), mw...)
	g.GET("/stats/devices", report(stats.Endpoint{}, st.Devices), mw...)
	g.GET("/stats/browsers", report(stats.Endpoint{}, st.Browsers), mw...)
	g.GET("/stats/operating-systems", report(stats.Endpoint{}, st.OperatingSystems), mw...)
	g.GET("/stats/countries", report(stats.Endpoint{}, st.Countries), mw...)
	g.GET("/stats/regions", report(stats.Endpoint{RequireCountry: true}, st.Regions), mw...)
	g.GET("/stats/cities", report(stats.Endpoint{RequireRegion: true}, st.Cities), mw...)
	g.GET("/stats/events", report(stats.Endpoint{AcceptEventName: true}, st.Events), mw...)
	g.GET("/stats/realtime", report(stats.Endpoint{NoDates: true}, st.Realtime), mw...)
	g.GET("/stats/ingestion", report(stats.Endpoint{NoFilters: true}, st.Ingestion), mw...)
}

// report is the one handler shape of every stats endpoint: parse the query
// string, call the service, answer 200 with its result: JSON, or CSV (see
// wantsCSV) named after the last segment of the route's path.
func report[T export.Table](e stats.Endpoint, call func(context.Context, auth.Principal, stats.Request) (T, error)) echo.HandlerFunc {
	return func(c echo.Context) error {
		c.Response().Header().Add(echo.HeaderVary, echo.HeaderAccept)
		asCSV, err := wantsCSV(c.Request())
		if err != nil {
			return err
		}
		req, err := stats.ParseRequest(c.QueryParams(), e)
		if err != nil {
			return err
		}
		res, err := call(c.Request().Context(), principal(c), req)
		if err != nil {
			return err
		}
		if asCSV {
			return respondCSV(c, export.FileName(path.Base(c.Path()), req), res)
		}
		return c.JSON(http.StatusOK, res)
	}
}

package httpapi

import (
	"context"
	"net/http"
	"path"

	"github.com/labstack/echo/v4"

	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/export"
	"github.com/tally-analytics/tally/internal/stats"
	"github.com/tally-analytics/tally/internal/wire"
)

// Stats answers the stats endpoints: the reports a download holds, the
// realtime view and the tracking health.
type Stats interface {
	export.Reports
	Realtime(ctx context.Context, p auth.Principal, r stats.Request) (stats.Realtime, error)
	Ingestion(ctx context.Context, p auth.Principal, r stats.Request) (stats.Ingestion, error)
	EventProperties(ctx context.Context, p auth.Principal, r stats.Request) (stats.EventProperties, error)
	// Query answers a query of the Plausible-compatible Stats API v2.
	Query(ctx context.Context, p auth.Principal, q stats.V2Query) (stats.V2Result, error)
}

// statsRoutes registers the stats endpoints on g.
func (s *Server) statsRoutes(g *echo.Group, mw ...echo.MiddlewareFunc) {
	st := s.deps.Stats
	g.GET("/stats/overview", report(stats.Endpoint{AcceptCompare: true}, st.Overview, wire.Overview), mw...)
	g.GET("/stats/pages", report(stats.Endpoint{AcceptPaging: true}, st.Pages, wire.Pages), mw...)
	g.GET("/stats/hostnames", report(stats.Endpoint{AcceptPaging: true}, st.Hostnames, wire.Hostnames), mw...)
	g.GET("/stats/sources", report(stats.Endpoint{}, st.Sources, wire.Sources), mw...)
	g.GET("/stats/channels", report(stats.Endpoint{}, st.Channels, wire.Channels), mw...)
	g.GET("/stats/campaigns", report(stats.Endpoint{AcceptUTMBy: true}, st.Campaigns, wire.Campaigns), mw...)
	g.GET("/stats/entry-pages", report(stats.Endpoint{}, st.EntryPages, wire.EntryPages), mw...)
	g.GET("/stats/exit-pages", report(stats.Endpoint{}, st.ExitPages, wire.ExitPages), mw...)
	g.GET("/stats/devices", report(stats.Endpoint{}, st.Devices, wire.Devices), mw...)
	g.GET("/stats/browsers", report(stats.Endpoint{}, st.Browsers, wire.Browsers), mw...)
	g.GET("/stats/operating-systems", report(stats.Endpoint{}, st.OperatingSystems, wire.OperatingSystems), mw...)
	g.GET("/stats/countries", report(stats.Endpoint{}, st.Countries, wire.Countries), mw...)
	g.GET("/stats/browser-versions", report(stats.Endpoint{Require: "browser"}, st.BrowserVersions, wire.BrowserVersions), mw...)
	g.GET("/stats/os-versions", report(stats.Endpoint{Require: "os"}, st.OSVersions, wire.OSVersions), mw...)
	g.GET("/stats/regions", report(stats.Endpoint{Require: "country"}, st.Regions, wire.Regions), mw...)
	g.GET("/stats/cities", report(stats.Endpoint{Require: "region"}, st.Cities, wire.Cities), mw...)
	g.GET("/stats/events", report(stats.Endpoint{AcceptEventName: true}, st.Events, wire.Events), mw...)
	g.GET("/stats/event-properties", report(stats.Endpoint{EventProperties: true}, st.EventProperties, wire.EventProperties), mw...)
	g.GET("/stats/journeys", report(stats.Endpoint{Journeys: true}, st.Journeys, wire.Journeys), mw...)
	g.GET("/stats/retention", report(stats.Endpoint{Retention: true}, st.Retention, wire.Retention), mw...)
	g.GET("/stats/realtime", report(stats.Endpoint{NoDates: true}, st.Realtime, wire.Realtime), mw...)
	g.GET("/stats/ingestion", report(stats.Endpoint{NoFilters: true}, st.Ingestion, wire.Ingestion), mw...)
}

// report is the one handler shape of every stats endpoint: parse the query
// string, call the service, answer 200 with its report in its wire shape
// (toWire): JSON, or CSV (see wantsCSV) named after the last segment of the
// route's path.
func report[R any, T export.Table](e stats.Endpoint, call func(context.Context, auth.Principal, stats.Request) (R, error),
	toWire func(R) T) echo.HandlerFunc {
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
		rep, err := call(c.Request().Context(), principal(c), req)
		if err != nil {
			return err
		}
		res := toWire(rep)
		if asCSV {
			return respondCSV(c, export.FileName(path.Base(c.Path()), req), res)
		}
		return c.JSON(http.StatusOK, res)
	}
}

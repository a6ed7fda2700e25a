package httpapi

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/tally-analytics/tally/internal/ingest"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/ratelimit"
	"github.com/tally-analytics/tally/internal/tracker"
	"github.com/tally-analytics/tally/pkg/api"
)

// trackerRoutes serves the script, its ingestion endpoint and the pixel.
func (s *Server) trackerRoutes() {
	s.echo.GET("/js/tally.js", s.script)
	s.echo.OPTIONS("/e", s.preflight)
	s.echo.POST("/e", s.trackerEvent, s.cors, s.countRefusals(sitesInBody(false)), s.limitByClient, bodyLimit(s.deps.MaxEventBody))
	// the pixel shares /e's allowance per client address
	s.echo.GET("/p.gif", s.pixel, s.countRefusals(sitesInQuery), s.limitByClient)
	s.echo.HEAD("/p.gif", s.pixelHead)
}

// script serves tally.js with an ETag, cacheable for an hour: compressed
// once at start (tracker.Gzipped) for a client that accepts gzip, each
// encoding with an ETag of its own.
func (s *Server) script(c echo.Context) error {
	h := c.Response().Header()
	h.Set("Cache-Control", "public, max-age=3600")
	h.Set("Cross-Origin-Resource-Policy", "cross-origin") // pages of other origins load it
	h.Add(echo.HeaderVary, echo.HeaderAcceptEncoding)
	body, etag := tracker.Script, tracker.ETag
	if AcceptsGzip(c.Request()) {
		body, etag = tracker.Gzipped, tracker.GzipETag
		h.Set(echo.HeaderContentEncoding, "gzip")
	}
	h.Set("ETag", etag)
	if c.Request().Header.Get("If-None-Match") == etag {
		h.Del(echo.HeaderContentEncoding)
		return c.NoContent(http.StatusNotModified)
	}
	return c.Blob(http.StatusOK, "application/javascript; charset=utf-8", body)
}

// cors lets pages on any origin post to /e: which sites accept events is
// decided by the site and domain check, not by the browser.
func (s *Server) cors(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		h := c.Response().Header()
		h.Set("Access-Control-Allow-Origin", "*")
		h.Set("Access-Control-Expose-Headers", "X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After")
		return next(c)
	}
}

func (s *Server) preflight(c echo.Context) error {
	h := c.Response().Header()
	h.Set("Access-Control-Allow-Origin", "*")
	h.Set("Access-Control-Allow-Methods", "POST, OPTIONS")
	h.Set("Access-Control-Allow-Headers", "Content-Type")
	h.Set("Access-Control-Max-Age", "86400")
	return c.NoContent(http.StatusNoContent)
}

// limitByClient limits tracker events per client address (hashed in the
// Redis key: addresses are never stored in the clear).
func (s *Server) limitByClient(next echo.HandlerFunc) echo.HandlerFunc {
	return s.rateLimit(limitTrackerName, func(c echo.Context) (string, ratelimit.Limit) {
		return "e:" + hashed(clientOf(c.RealIP())), ratelimit.PerMinute(s.deps.Limits.TrackerPerMinute)
	})(next)
}

// trackerEvent accepts the script's events: 202 with no body.
func (s *Server) trackerEvent(c echo.Context) error {
	var req api.TrackerEvent
	// the script sends text/plain, which needs no CORS preflight
	if err := decodeJSON(c, &req, "text/plain"); err != nil {
		return err
	}
	in := ingest.Input{Pageview: req.EventName == ingest.PageviewName, SiteID: req.SiteID, URL: req.URL, Referrer: req.Referrer,
		VisitorID: req.VisitorID, EventName: req.EventName, Props: req.Props, CheckoutSession: req.CheckoutSessionID,
		Revenue: revenueInput(req.Revenue), HashRoutes: req.HashRoutes, ScrollDepth: string(req.ScrollDepth)}
	if err := s.trackBrowser(c, in); err != nil {
		return err
	}
	return c.NoContent(http.StatusAccepted)
}

// trackBrowser hands one event of a page (the script's, or the pixel's) to
// the ingest service, with what the request itself tells of its sender:
// the user agent, the client address, and whether it carried
// Accept-Language.
func (s *Server) trackBrowser(c echo.Context, in ingest.Input) error {
	r := c.Request()
	in.UserAgent, in.IPAddress = r.UserAgent(), c.RealIP()
	in.AcceptsLanguage = r.Header.Get("Accept-Language") != ""
	// unsigned revenue: a site takes a bounded number per hour
	spend := func(site model.SiteID) error {
		key := "client-revenue:" + hashed(string(site))
		return s.checkLimit(c, limitClientRevenueName, key, ratelimit.PerHour(s.deps.Limits.ClientRevenuePerHour), 1)
	}
	markIngested(c)
	_, err := s.deps.Ingest.TrackBrowser(r.Context(), in, spend)
	return err
}

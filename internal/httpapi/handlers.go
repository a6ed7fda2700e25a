package httpapi

import (
	"crypto/subtle"
	"net"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/httpapi/openapi"
	"github.com/tally-analytics/tally/internal/ingest"
	"github.com/tally-analytics/tally/pkg/api"
)

func (s *Server) health(c echo.Context) error {
	return c.JSON(http.StatusOK, api.Health{Status: "ok"})
}

func (s *Server) login(c echo.Context) error {
	var req api.LoginRequest
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	for _, l := range LoginLimits(req.Email, c.RealIP(), s.deps.Limits.LoginAttempts) {
		if err := s.checkLimit(c, limitLoginName, l.Key, l.Limit, 1); err != nil {
			return err
		}
	}
	res, err := s.deps.Auth.Login(c.Request().Context(), auth.Credentials{Email: req.Email, Password: req.Password, OTP: req.OTP})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, api.LoginResponse{
		Token:     res.Token,
		User:      api.User{ID: string(res.User.ID), Email: res.User.Email, Name: res.User.Name},
		ExpiresAt: res.ExpiresAt,
	})
}

func (s *Server) verify(c echo.Context) error {
	p := principal(c)
	if p.IsKey() {
		scopes := make([]string, len(p.Scopes))
		for i, sc := range p.Scopes {
			scopes[i] = string(sc)
		}
		return c.JSON(http.StatusOK, api.VerifyResponse{Authenticated: true, KeyID: string(p.KeyID), Scopes: scopes})
	}
	return c.JSON(http.StatusOK, api.VerifyResponse{Authenticated: true, UserID: string(p.UserID)})
}

func (s *Server) pageview(c echo.Context) error {
	var req api.PageviewRequest
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	return s.track(c, pageviewInput(req))
}

func (s *Server) custom(c echo.Context) error {
	var req api.CustomEventRequest
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	in := pageviewInput(req.PageviewRequest)
	in.Pageview, in.EventName, in.Props, in.Revenue = false, req.EventName, req.Props, revenueInput(req.Revenue)
	return s.track(c, in)
}

func revenueInput(r *api.Revenue) *ingest.Revenue {
	if r == nil {
		return nil
	}
	return &ingest.Revenue{Amount: r.Amount.String(), Currency: r.Currency}
}

func pageviewInput(r api.PageviewRequest) ingest.Input {
	return ingest.Input{Pageview: true, SiteID: r.SiteID, URL: r.URL, Referrer: r.Referrer, UserAgent: r.UserAgent,
		IPAddress: r.IPAddress, VisitorID: r.VisitorID}
}

func (s *Server) track(c echo.Context, in ingest.Input) error {
	markIngested(c)
	id, err := s.deps.Ingest.Track(c.Request().Context(), principal(c), in)
	if err != nil {
		return err
	}
	return eventCreated(c, id)
}

// openAPI serves the API's OpenAPI 3.1 document.
func (s *Server) openAPI(c echo.Context) error {
	doc, err := openapi.JSON()
	if err != nil {
		return err
	}
	c.Response().Header().Set("Cache-Control", "public, max-age=300")
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, doc)
}

// metrics serves the Prometheus metrics: with a configured token to
// whoever presents it, otherwise to loopback clients only.
func (s *Server) metrics(c echo.Context) error {
	if s.deps.Metrics == nil {
		return errs.E(errs.NotFound, "not_found", "metrics are not enabled")
	}
	if tok := s.deps.MetricsToken; tok != "" {
		got, _ := strings.CutPrefix(c.Request().Header.Get(echo.HeaderAuthorization), "Bearer ")
		if subtle.ConstantTimeCompare([]byte(got), []byte(tok)) != 1 {
			return errs.E(errs.Unauthenticated, "unauthorized", "GET /metrics needs the metrics token as Bearer credential")
		}
	} else if len(s.deps.TrustedProxies) > 0 || !directLoopback(c.Request()) {
		// behind a proxy every client may arrive from loopback: only the
		// token tells them apart
		return errs.E(errs.Forbidden, "forbidden",
			"metrics are served to loopback clients only, and only without trusted proxies, unless TALLY_METRICS_TOKEN is set")
	}
	s.deps.Metrics.Handler().ServeHTTP(c.Response(), c.Request())
	return nil
}

// directLoopback reports whether the connection itself comes from loopback
// (X-Forwarded-For is not consulted: a proxy on the same host would make
// every client look local).
func directLoopback(r *http.Request) bool {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

package httpapi

import (
	"net"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
)

// maxAnyBody bounds every request body; routes that take bodies set tighter
// limits, except the batch route, whose own limit may be larger.
const maxAnyBody = 1 << 20

// batchRoute is the route whose body limit is its own (MaxBatchBody).
const batchRoute = "/api/v1/events/batch"

// ownLimit are the routes that set their own body limit (the ingest
// routes: the batch route's may be larger than maxAnyBody), behind which
// countRefusals counts what a body too large carried.
var ownLimit = map[string]bool{batchRoute: true, "/api/v1/events/pageview": true, "/api/v1/events/custom": true, "/e": true}

// limitAnyBody applies maxAnyBody to every route but those with their own limit.
func limitAnyBody(next echo.HandlerFunc) echo.HandlerFunc {
	limited := bodyLimit(maxAnyBody)(next)
	return func(c echo.Context) error {
		if ownLimit[c.Path()] {
			return next(c)
		}
		return limited(c)
	}
}

// securityHeaders sets the headers every answer carries. API answers are
// JSON that no browser should render, frame or sniff; the script is the one
// resource other sites load.
func (s *Server) securityHeaders(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		h := c.Response().Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'")
		if s.deps.ForceHTTPS {
			h.Set("Strict-Transport-Security", "max-age=31536000; includeSubDomains")
		}
		return next(c)
	}
}

// redirectHTTPS answers a plain-HTTP request with 308 to the same URL over
// HTTPS. X-Forwarded-Proto counts only from a trusted proxy. /health and
// /metrics stay reachable over HTTP for local health checks and scrapers:
// tally itself serves no TLS, and a metrics token sent over plain HTTP was
// sent before any redirect.
func (s *Server) redirectHTTPS(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		if !s.deps.ForceHTTPS || !plainHTTP(r, s.deps.TrustedProxies) || r.URL.Path == "/health" || r.URL.Path == "/metrics" {
			return next(c)
		}
		return c.Redirect(http.StatusPermanentRedirect, "https://"+r.Host+r.URL.RequestURI())
	}
}

// RedirectHTTPS is redirectHTTPS for another handler (the dashboard's).
func RedirectHTTPS(trusted []*net.IPNet, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if plainHTTP(r, trusted) {
			http.Redirect(w, r, "https://"+r.Host+r.URL.RequestURI(), http.StatusPermanentRedirect)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// Scheme is the scheme a request reached tally by, the one rule behind
// every scheme decision (the redirect to HTTPS, the URLs tally shows):
// "https" when it arrived over TLS, or from a trusted proxy saying
// X-Forwarded-Proto: https; else "http". Nobody else's X-Forwarded-Proto
// (nor X-Forwarded-Ssl, X-Url-Scheme…) counts: any client can send them.
func Scheme(r *http.Request, trusted []*net.IPNet) string {
	if r.TLS != nil || fromTrustedProxy(r, trusted) && strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https") {
		return "https"
	}
	return "http"
}

// plainHTTP reports whether r came over plain HTTP (see Scheme).
func plainHTTP(r *http.Request, trusted []*net.IPNet) bool { return Scheme(r, trusted) == "http" }

func fromTrustedProxy(r *http.Request, trusted []*net.IPNet) bool {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	ip := net.ParseIP(host)
	for _, n := range trusted {
		if ip != nil && n.Contains(ip) {
			return true
		}
	}
	return false
}

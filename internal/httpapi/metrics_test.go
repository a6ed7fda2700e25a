package httpapi

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tally-analytics/tally/internal/metrics"
)

// Without a token, /metrics answers only connections from loopback; the
// client's X-Forwarded-For does not make it local. With trusted proxies
// configured (a reverse proxy, which may run on the same host and connect
// from loopback for every client) it needs the token.
func TestMetricsLoopbackOnly(t *testing.T) {
	deps := Deps{Auth: stubAuth{}, Ingest: validating{}, Stats: struct{ Stats }{}, Goals: struct{ Goals }{},
		Limiter: allowAll{}, Log: discardLog(), MaxEventBody: 1024, Metrics: metrics.New()}
	direct := New(deps)
	_, loopbackNet, _ := net.ParseCIDR("127.0.0.0/8")
	deps.TrustedProxies = []*net.IPNet{loopbackNet}
	proxied := New(deps)
	for _, tc := range []struct {
		s           *Server
		remote, xff string
		status      int
	}{
		{direct, "127.0.0.1:5000", "", 200},
		{direct, "[::1]:5000", "", 200},
		{direct, "192.0.2.7:5000", "", 403},
		{direct, "192.0.2.7:5000", "127.0.0.1", 403},
		{proxied, "127.0.0.1:5000", "", 403},
		{proxied, "127.0.0.1:5000", "192.0.2.7", 403},
	} {
		s := tc.s
		req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
		req.RemoteAddr = tc.remote
		if tc.xff != "" {
			req.Header.Set("X-Forwarded-For", tc.xff)
		}
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, req)
		if rec.Code != tc.status {
			t.Errorf("from %s (XFF %q): %d, want %d", tc.remote, tc.xff, rec.Code, tc.status)
		}
		if tc.status == 200 && !strings.Contains(rec.Body.String(), "go_goroutines") {
			t.Errorf("from %s: no runtime metrics in %.200s", tc.remote, rec.Body)
		}
	}
}

// A production server redirects plain HTTP to HTTPS, but not /metrics: a
// scraper on loopback (or one with the token) reaches tally itself, which
// serves no TLS, and a token sent over plain HTTP was sent before any
// redirect could help.
func TestMetricsNotRedirected(t *testing.T) {
	deps := Deps{Auth: stubAuth{}, Ingest: validating{}, Stats: struct{ Stats }{}, Goals: struct{ Goals }{},
		Limiter: allowAll{}, Log: discardLog(), MaxEventBody: 1024, Metrics: metrics.New(), ForceHTTPS: true}
	loopback := New(deps)
	deps.MetricsToken = "metrics-token"
	withToken := New(deps)
	for _, tc := range []struct {
		s              *Server
		remote, bearer string
		status         int
	}{
		{loopback, "127.0.0.1:5000", "", 200},
		{loopback, "192.0.2.7:5000", "", 403},
		{withToken, "192.0.2.7:5000", "metrics-token", 200},
		{withToken, "192.0.2.7:5000", "wrong", 401},
	} {
		req := httptest.NewRequest(http.MethodGet, "http://tally.internal:8080/metrics", nil)
		req.RemoteAddr = tc.remote
		if tc.bearer != "" {
			req.Header.Set("Authorization", "Bearer "+tc.bearer)
		}
		rec := httptest.NewRecorder()
		tc.s.Handler().ServeHTTP(rec, req)
		if rec.Code != tc.status {
			t.Errorf("plain HTTP from %s (token %q): %d (Location %q), want %d", tc.remote, tc.bearer, rec.Code,
				rec.Header().Get("Location"), tc.status)
		}
	}
	// every other API path still goes to HTTPS
	req := httptest.NewRequest(http.MethodGet, "http://tally.internal:8080/api/v1/auth/verify", nil)
	req.RemoteAddr = "127.0.0.1:5000"
	rec := httptest.NewRecorder()
	loopback.Handler().ServeHTTP(rec, req)
	if rec.Code != http.StatusPermanentRedirect {
		t.Errorf("plain HTTP to the API: %d, want 308", rec.Code)
	}
}

package httpapi

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tally-analytics/tally/internal/metrics"
)

// Without a token, /metrics answers only connections from loopback; the
// client's X-Forwarded-For does not make it local.
func TestMetricsLoopbackOnly(t *testing.T) {
	s := New(Deps{Auth: stubAuth{}, Ingest: validating{}, Stats: struct{ Stats }{}, Goals: struct{ Goals }{},
		Limiter: allowAll{}, Log: discardLog(), MaxEventBody: 1024, Metrics: metrics.New()})
	for _, tc := range []struct {
		remote, xff string
		status      int
	}{
		{"127.0.0.1:5000", "", 200},
		{"[::1]:5000", "", 200},
		{"192.0.2.7:5000", "", 403},
		{"192.0.2.7:5000", "127.0.0.1", 403},
	} {
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

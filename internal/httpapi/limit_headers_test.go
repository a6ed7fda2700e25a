package httpapi

import (
	"net/http"
	"testing"
	"time"

	"github.com/tally-analytics/tally/internal/ratelimit"
)

// The limit headers are set under their canonical keys, so that Get and
// the wire see them as Set would have written them.
func TestLimitHeadersAreCanonical(t *testing.T) {
	h := http.Header{}
	SetLimitHeaders(h, ratelimit.Result{Limit: 1000, Remaining: 998, ResetAfter: 1500 * time.Millisecond})
	want := map[string]string{"X-RateLimit-Limit": "1000", "X-RateLimit-Remaining": "998", "X-RateLimit-Reset": "2"}
	if len(h) != len(want) {
		t.Errorf("headers %v, want the three of %v", h, want)
	}
	for k, v := range want {
		if got := h.Get(k); got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
		if len(h[http.CanonicalHeaderKey(k)]) != 1 {
			t.Errorf("%s is not under its canonical key: %v", k, h)
		}
	}
}

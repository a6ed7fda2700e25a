package testenv

import (
	"testing"

	"github.com/tally-analytics/tally/internal/faultproxy"
)

// NewProxy puts a fault proxy in front of target for the test's duration.
func NewProxy(t testing.TB, target string) *faultproxy.Proxy {
	t.Helper()
	p, err := faultproxy.Start(target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

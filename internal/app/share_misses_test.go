package app_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tally-analytics/tally/pkg/api"
)

// Failed lookups of shared links' tokens are bounded per client address (an
// IPv6 /64 being one): 50 misses — unknown, deleted or malformed tokens, on
// the page and its cards alike — and the 51st lookup from that address is a
// 429 with Retry-After, unlooked-up, whatever the token (a valid one too),
// until the first miss is 15 minutes old. Other addresses are not held
// back, and a valid token's lookups are never counted.
func TestShareLookupMissesBoundedPerAddress(t *testing.T) {
	h := newHarnessWith(t, testenvConfigWith(t, func(c *configT) { c.TrustedProxies = []string{"127.0.0.1/32"} }))
	ctx := context.Background()
	c := h.client(h.key)
	valid, err := c.CreateSharedLink(ctx, string(h.siteID), api.SharedLinkRequest{Label: "valid"})
	if err != nil {
		t.Fatal(err)
	}
	deleted, err := c.CreateSharedLink(ctx, string(h.siteID), api.SharedLinkRequest{Label: "deleted"})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteSharedLink(ctx, string(h.siteID), deleted.ID); err != nil {
		t.Fatal(err)
	}
	unknown := strings.Repeat("A", len(valid.Token))
	anon := newWebUser(t, h)
	get := func(addr, path string, header http.Header) (int, string) {
		t.Helper()
		hd := http.Header{"X-Forwarded-For": {addr}}
		for k, v := range header {
			hd[k] = v
		}
		status, _, body := anon.doWith(http.MethodGet, path, nil, hd)
		return status, body
	}

	// a valid token's lookups are not counted: 60 of them, then a miss is a 404
	for i := range 60 {
		if status, _ := get("203.0.113.9", "/share/"+valid.Token, nil); status != http.StatusOK {
			t.Fatalf("valid page %d: %d", i+1, status)
		}
	}
	if status, _ := get("203.0.113.9", "/share/"+unknown, nil); status != http.StatusNotFound {
		t.Fatalf("a miss after 60 valid lookups: %d, want 404", status)
	}

	t0 := h.clock.Now()
	misses := []string{"/share/" + unknown, "/share/" + unknown + "/cards/pages", "/share/" + deleted.Token,
		"/share/" + deleted.Token + "/cards/devices", "/share/short", "/share/short/cards/realtime"}
	for i := range 50 { // from 50 addresses of one /64, over 10 minutes
		h.clock.Set(t0.Add(time.Duration(i) * 12 * time.Second))
		addr := fmt.Sprintf("2001:db8:1:2::%x", i+1)
		if status, _ := get(addr, misses[i%len(misses)], nil); status != http.StatusNotFound {
			t.Fatalf("miss %d (%s from %s): %d, want 404", i+1, misses[i%len(misses)], addr, status)
		}
	}
	h.clock.Set(t0.Add(10 * time.Minute)) // the first miss (+0) leaves the window at +15 min
	for _, path := range []string{"/share/" + unknown, "/share/" + valid.Token, "/share/" + valid.Token + "/cards/devices"} {
		status, body := get("2001:db8:1:2:ffff::1", path, nil)
		if status != http.StatusTooManyRequests || anon.header.Get("Retry-After") != "300" || !strings.Contains(body, "Too many unknown shared links") {
			t.Errorf("%s past the bound: %d, Retry-After %q, want 429 and 300", path, status, anon.header.Get("Retry-After"))
		}
		checkShareHeaders(t, path+" past the bound", anon.header)
	}
	status, body := get("2001:db8:1:2::77", "/share/"+unknown+"/cards/pages", http.Header{"Accept": {"application/json"}})
	if status != http.StatusTooManyRequests || !strings.Contains(body, `"code":"rate_limit_exceeded"`) {
		t.Errorf("past the bound, as JSON: %d %s", status, body)
	}
	// another /64 and another IPv4 address are not held back
	for _, addr := range []string{"2001:db8:1:3::1", "198.51.100.4"} {
		if status, _ := get(addr, "/share/"+valid.Token+"/cards/devices", nil); status != http.StatusOK {
			t.Errorf("the valid link's card from %s: %d, want 200", addr, status)
		}
		if status, _ := get(addr, "/share/"+unknown, nil); status != http.StatusNotFound {
			t.Errorf("a miss from %s: %d, want 404", addr, status)
		}
	}
	h.clock.Set(t0.Add(15 * time.Minute))
	if status, _ := get("2001:db8:1:2::1", "/share/"+valid.Token, nil); status != http.StatusOK {
		t.Errorf("the valid link once the first miss is 15 minutes old: %d, want 200", status)
	}
}

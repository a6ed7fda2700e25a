package app_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/tally-analytics/tally/pkg/api"
)

// A deletion asks ClickHouse for a mutation, which rewrites every part of a
// table whoever's rows they hold, only when the table holds rows to delete.
// Before, deleting a site that never had an event cost a mutation of each
// of its tables on every pass of the deleter, and purging a site's client
// revenue a mutation of the payments table each time, with nothing to
// delete: any account could make and delete sites, or purge, at the rate
// of its management allowance, and have ClickHouse rewrite every site's
// data over and over.
func TestDeletionsOfNothingMutateNothing(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	c := h.client(h.key)
	mutations := func(site string) int64 {
		return h.count("SELECT count() FROM system.mutations WHERE database = currentDatabase() AND position(command, ?) > 0", site)
	}

	// a site without an event, deleted, through 3 passes of the deleter
	created, err := c.CreateSite(ctx, api.SiteRequest{Domain: "empty.example"})
	if err != nil {
		t.Fatal(err)
	}
	empty := created.SiteID
	if _, err := c.DeleteSite(ctx, empty); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := h.app.Deleter.Pass(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if n := mutations(empty); n != 0 {
		t.Errorf("deleting a site without data: %d mutations, want 0", n)
	}

	// 3 purges of a site that has no client revenue
	site := string(h.siteID)
	for range 3 {
		status, body := call(t, h, h.key, http.MethodDelete, "/api/v1/sites/"+site+"/client-revenue", "")
		if status != http.StatusOK {
			t.Fatalf("purge: %d %s", status, body)
		}
	}
	if n := mutations(site); n != 0 {
		t.Errorf("purging no client revenue 3 times: %d mutations, want 0", n)
	}

	// a site with one pageview still has it deleted: 1 mutation of events
	// at least, and the row goes
	h.clock.Set(time.Now().UTC())
	if _, err := c.Pageview(ctx, api.PageviewRequest{SiteID: site, URL: "https://example.com/", UserAgent: chromeUA}); err != nil {
		t.Fatal(err)
	}
	h.waitCount(1, "SELECT count() FROM events WHERE site_id = ?", site)
	if _, err := c.DeleteSite(ctx, site); err != nil {
		t.Fatal(err)
	}
	if err := h.app.Deleter.Pass(ctx); err != nil {
		t.Fatal(err)
	}
	if n := h.count("SELECT count() FROM system.mutations WHERE database = currentDatabase() AND table = 'events' AND position(command, ?) > 0", site); n < 1 {
		t.Errorf("deleting a site with a pageview: %d mutations of events, want 1 or more", n)
	}
	h.waitCount(0, "SELECT count() FROM events WHERE site_id = ?", site)
}

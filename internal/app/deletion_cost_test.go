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

// The sites deleted by the time of a pass share its mutations: one of each
// table that holds rows of any of them, not one a site, so deleting many
// sites at once costs ClickHouse no more rewrites than deleting one.
func TestDeletedSitesShareTheirMutations(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	c := h.client(h.key)
	h.clock.Set(time.Now().UTC())
	var sites []string
	for _, domain := range []string{"one.example", "two.example", "three.example"} {
		created, err := c.CreateSite(ctx, api.SiteRequest{Domain: domain})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Pageview(ctx, api.PageviewRequest{SiteID: created.SiteID, URL: "https://" + domain + "/", UserAgent: chromeUA}); err != nil {
			t.Fatal(err)
		}
		sites = append(sites, created.SiteID)
	}
	for _, site := range sites {
		h.waitCount(1, "SELECT count() FROM events WHERE site_id = ?", site)
		h.waitCount(1, "SELECT toUInt64(sum(sign)) FROM sessions WHERE site_id = ?", site)
	}
	for _, site := range sites {
		if _, err := c.DeleteSite(ctx, site); err != nil {
			t.Fatal(err)
		}
	}
	if err := h.app.Deleter.Pass(ctx); err != nil {
		t.Fatal(err)
	}
	// the mutations naming any of the three sites: one a table, each naming
	// all three
	anySite := "database = currentDatabase() AND (position(command, ?) > 0 OR position(command, ?) > 0 OR position(command, ?) > 0)"
	args := []any{sites[0], sites[1], sites[2]}
	mutations := h.count("SELECT count() FROM system.mutations WHERE "+anySite, args...)
	tables := h.count("SELECT uniqExact(table) FROM system.mutations WHERE "+anySite, args...)
	naming := h.count("SELECT count() FROM system.mutations WHERE "+anySite+
		" AND position(command, ?) > 0 AND position(command, ?) > 0 AND position(command, ?) > 0", append(args, args...)...)
	if mutations != tables || naming != mutations {
		t.Errorf("%d mutations of %d tables for the 3 sites, %d of them naming all three; want one a table, naming all three",
			mutations, tables, naming)
	}
	// each site had a pageview: its event, its session and the page rollup
	for _, table := range []string{"events", "sessions", "page_days"} {
		if n := h.count("SELECT count() FROM system.mutations WHERE "+anySite+" AND table = ?", append(args, table)...); n != 1 {
			t.Errorf("%s, which held the sites' rows: %d mutations, want 1", table, n)
		}
	}
	for _, site := range sites {
		h.waitCount(0, "SELECT count() FROM events WHERE site_id = ?", site)
		h.waitCount(0, "SELECT count() FROM sessions WHERE site_id = ?", site)
	}
}

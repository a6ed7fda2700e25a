package accounts

import (
	"strings"
	"time"

	"github.com/maypok86/otter/v2"

	"github.com/tally-analytics/tally/internal/model"
)

// Bounds of the cache of site ids that name no site (see missingSites).
const (
	maxMissingSites = 10_000
	missingSiteTTL  = time.Minute
)

// missingSites remembers, on this instance, the site ids the store found
// no site for: a payment provider that keeps delivering to a deleted site,
// or a tracking snippet left on a page after its site was deleted, costs a
// Postgres lookup once a minute, not once a request.
//
// It needs no access version, unlike the cache of sites found: an id names
// no site until a site is created with it, and sites' ids are made by the
// server, 12 random characters of 36 (accounts.CreateSite, Sites.Create),
// so no one can create a site under an id that was looked up before; a
// deleted site's id is never given again but by that same chance. Were it
// to happen, the new site would be unknown to this instance for at most
// missingSiteTTL.
//
// The cache is bounded by count (maxMissingSites; a burst of adds may pass
// it until the cache's upkeep, which runs as it is written to, catches up).
// When it is full, its eviction (otter's W-TinyLFU) favours the ids asked
// for again and again (a deleted site still delivered to) over ids asked
// for once (made up).
type missingSites struct {
	ids *otter.Cache[model.SiteID, struct{}]
}

func newMissingSites(size int, ttl time.Duration, now func() time.Time) *missingSites {
	// Must: only options that contradict each other fail, and these agree
	return &missingSites{ids: otter.Must(&otter.Options[model.SiteID, struct{}]{MaximumSize: size,
		ExpiryCalculator: otter.ExpiryWriting[model.SiteID, struct{}](ttl), Clock: clockOf(now)})}
}

// has reports whether id was found missing within the TTL.
func (m *missingSites) has(id model.SiteID) bool {
	_, ok := m.ids.GetIfPresent(id)
	return ok
}

// add remembers that id names no site.
func (m *missingSites) add(id model.SiteID) {
	// a copy: the id may be a slice of a much larger request
	m.ids.Set(model.SiteID(strings.Clone(string(id))), struct{}{})
}

// clockOf is the cache's clock reading now (the service's, a test's): its
// entries expire by it. It ticks never, so nothing runs in the background;
// an expired id is dropped when it is next asked for, or to make room.
type clockOf func() time.Time

func (c clockOf) NowNano() int64                      { return c().UnixNano() }
func (c clockOf) Tick(time.Duration) <-chan time.Time { return nil }

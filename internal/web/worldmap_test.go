package web

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tally-analytics/tally/internal/stats"
	"github.com/tally-analytics/tally/internal/web/worldmap"
)

// Classes by hand: class k starts at top^((k−1)/5). Of 100, that is 1,
// 2.51, 6.31, 15.8 and 39.8; of 100,000, 1, 10, 100, 1,000 and 10,000.
func TestShade(t *testing.T) {
	for _, c := range []struct {
		visitors, top int64
		want          int
	}{
		{0, 100, 0}, {5, 0, 0},
		{1, 100, 1}, {2, 100, 1}, {3, 100, 2}, {6, 100, 2}, {7, 100, 3}, {10, 100, 3}, {15, 100, 3}, {16, 100, 4},
		{39, 100, 4}, {40, 100, 5}, {100, 100, 5},
		// on the boundaries exactly: the class above
		{9, 100_000, 1}, {10, 100_000, 2}, {100, 100_000, 3}, {1000, 100_000, 4}, {10_000, 100_000, 5}, {99_999, 100_000, 5},
		{1, 1, 5}, {1, 2, 1}, {2, 2, 5},
	} {
		if got := shade(c.visitors, c.top); got != c.want {
			t.Errorf("shade(%d of %d) = %d, want %d", c.visitors, c.top, got, c.want)
		}
	}
}

// The map of a tiny world of three countries: the US (40 visitors) and GB
// (3) are links in that order, with their classes (40 is the top: 5; 3 is
// 5 × ln 3 / ln 40 = 1.49 fifths of the way: 2); FR, without visitors, is
// drawn plain; the unknown country (ZZ) and Singapore, not on the map,
// are not drawn.
func TestMapSVG(t *testing.T) {
	world := worldmap.Map{Width: 8, Height: 4, Countries: []worldmap.Country{
		{Code: "FR", Path: "M0 0l1 0 0 1z"}, {Code: "GB", Path: "M2 0l1 0 0 1z"}, {Code: "US", Path: "M4 0l2 0 0 2z"}}}
	rows := []stats.Share{
		{Value: "GB", Name: "United Kingdom", Visitors: 3}, {Value: "ZZ", Name: "Unknown", Visitors: 50},
		{Value: "US", Name: "United States", Visitors: 40}, {Value: "SG", Name: "Singapore", Visitors: 5},
	}
	got := string(mapSVG(world, rows, func(code string) string { return "/sites/s1?range=7d&country=" + code }))
	want := `<figure class="worldmap"><svg viewBox="0 0 8 50" role="group" aria-labelledby="map-caption">` +
		`<g class="map-0" aria-hidden="true"><path d="M0 0l1 0 0 1z"/></g>` +
		`<a href="/sites/s1?range=7d&amp;country=US" class="map-5" data-country="US" data-visitors="40" aria-label="United States: 40 visitors">` +
		`<title>United States: 40 visitors</title><path d="M4 0l2 0 0 2z"/><text class="map-label" x="4" y="38">United States: 40 visitors</text></a>` +
		`<a href="/sites/s1?range=7d&amp;country=GB" class="map-2" data-country="GB" data-visitors="3" aria-label="United Kingdom: 3 visitors">` +
		`<title>United Kingdom: 3 visitors</title><path d="M2 0l1 0 0 1z"/><text class="map-label" x="4" y="38">United Kingdom: 3 visitors</text></a>` +
		`</svg><figcaption id="map-caption">Visitors by country, darker for more (1 to 40 on a log scale)` +
		`<span class="map-key" aria-hidden="true"><span class="map-1"></span><span class="map-2"></span><span class="map-3"></span>` +
		`<span class="map-4"></span><span class="map-5"></span></span></figcaption></figure>`
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("map (-want +got):\n%s", diff)
	}
}

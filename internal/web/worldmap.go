package web

import (
	"fmt"
	"html/template"
	"math"
	"sort"
	"strings"

	"github.com/tally-analytics/tally/internal/present"
	"github.com/tally-analytics/tally/internal/stats"
	"github.com/tally-analytics/tally/internal/web/worldmap"
)

// mapShades is how many shades the map has for countries with visitors;
// those without have none (class map-0).
const mapShades = 5

// mapCaptionH is the strip under the map where the country under the
// pointer or the focus is named, in the map's units.
const mapCaptionH = 46

// shade is the class (1 to mapShades) of a country's visitors on a log
// scale from 1 to top, the most visitors of a country on the map: class k
// holds top^((k−1)/5) up to top^(k/5), so each class is a factor of the
// top. Visitors by country are heavy-tailed (a site's own country often
// has more than all the others together): on a linear scale every country
// but the first would be the palest, and quantiles would rank countries
// without saying how far apart they are (11 and 5,000 visitors in one
// class, 10 and 11 in two). 0 is no visitors.
func shade(visitors, top int64) int {
	switch {
	case visitors <= 0 || top <= 0:
		return 0
	case visitors >= top:
		return mapShades
	}
	// top > visitors ≥ 1, so top ≥ 2 and its log is positive; the nudge
	// keeps a count exactly on a boundary (10 of 100,000) in the class
	// above it whatever the rounding of the logs
	k := 1 + int(math.Floor(mapShades*math.Log(float64(visitors))/math.Log(float64(top))+1e-9))
	return min(k, mapShades)
}

// mapSVG draws the world with each country shaded by its visitors, each
// one with visitors a link (link(code)) that filters the dashboard by it,
// as its row does, named with its count. The table above it stays the
// compact view; the links are in the table's order, so the focus goes
// through the map from the country with the most visitors.
func mapSVG(world worldmap.Map, rows []stats.Share, link func(code string) string) template.HTML {
	paths := make(map[string]string, len(world.Countries))
	for _, c := range world.Countries {
		paths[c.Code] = c.Path
	}
	var shown []stats.Share
	var top int64
	for _, r := range rows {
		if _, ok := paths[r.Value]; ok && r.Visitors > 0 {
			shown = append(shown, r)
			top = max(top, r.Visitors)
		}
	}
	sort.SliceStable(shown, func(i, j int) bool { return shown[i].Visitors > shown[j].Visitors })
	visited := make(map[string]bool, len(shown))
	for _, r := range shown {
		visited[r.Value] = true
	}

	var b strings.Builder
	fmt.Fprintf(&b, `<figure class="worldmap"><svg viewBox="0 0 %g %g" role="group" aria-labelledby="map-caption">`,
		world.Width, world.Height+mapCaptionH)
	b.WriteString(`<g class="map-0" aria-hidden="true">`)
	for _, c := range world.Countries {
		if !visited[c.Code] {
			fmt.Fprintf(&b, `<path d="%s"/>`, c.Path)
		}
	}
	b.WriteString(`</g>`)
	for _, r := range shown {
		name := template.HTMLEscapeString(r.Name + ": " + present.Number(r.Visitors) + visitorsWord(r.Visitors))
		fmt.Fprintf(&b, `<a href="%s" class="map-%d" data-country="%s" data-visitors="%d" aria-label="%s"><title>%s</title><path d="%s"/>`+
			`<text class="map-label" x="4" y="%g">%s</text></a>`,
			template.HTMLEscapeString(link(r.Value)), shade(r.Visitors, top), template.HTMLEscapeString(r.Value), r.Visitors,
			name, name, paths[r.Value], world.Height+mapCaptionH-12, name)
	}
	b.WriteString(`</svg><figcaption id="map-caption">Visitors by country, darker for more`)
	if top > 1 {
		fmt.Fprintf(&b, ` (1 to %s on a log scale)`, present.Number(top))
	}
	b.WriteString(`<span class="map-key" aria-hidden="true">`)
	for k := 1; k <= mapShades; k++ {
		fmt.Fprintf(&b, `<span class="map-%d"></span>`, k)
	}
	b.WriteString(`</span></figcaption></figure>`)
	return template.HTML(b.String()) //nolint:gosec // vendored path data, numbers and escaped names and links only
}

func visitorsWord(n int64) string {
	if n == 1 {
		return " visitor"
	}
	return " visitors"
}

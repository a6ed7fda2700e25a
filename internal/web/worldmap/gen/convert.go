package main

import (
	"fmt"
	"slices"
	"strings"
)

// options of a conversion.
type options struct {
	// Project maps a longitude and latitude in degrees to a plane, y
	// growing northwards.
	Project func(lon, lat float64) point
	Width   float64 // of the picture, in its units
	// Tolerance is how far (in units) simplifying may move a border.
	Tolerance float64
	// MinArea drops the rings smaller than it (square units: islands of
	// a pixel or less) but a country's largest.
	MinArea float64
}

// defaults draw the map 1,000 units wide, which the dashboard shows at
// 300 to 600 pixels: a border moved by 0.4 units is moved by a quarter of a
// pixel at most.
var defaults = options{Project: naturalEarth, Width: 1000, Tolerance: 0.4, MinArea: 3}

// skipped are the countries the map leaves out: Antarctica would take a
// fifth of its height for no visitors.
var skipped = map[string]bool{"AQ": true}

// unnumbered are Natural Earth's features without an ISO 3166-1 numeric
// code, by name, and the alpha-2 code their visitors are counted under:
// Kosovo's user-assigned XK, as geolocation databases have it; Somaliland
// and Northern Cyprus under the countries ISO 3166 counts them in.
var unnumbered = map[string]string{"Kosovo": "XK", "Somaliland": "SO", "N. Cyprus": "CY"}

// worldMap is the map's countries in a picture of Width × Height units.
type worldMap struct {
	Width, Height float64
	Countries     []country // by code
}

// country is a country's rings, in whole units.
type country struct {
	Code  string
	Rings [][]point
}

// convert projects, fits and simplifies the "countries" collection of t;
// it lists the countries whose every ring was too small to draw.
func convert(t topology, alpha2 map[string]string, o options) (worldMap, []string, error) {
	rings, err := ringsByCode(t, alpha2)
	if err != nil {
		return worldMap{}, nil, err
	}
	arcs, height, err := placeArcs(t, rings, o)
	if err != nil {
		return worldMap{}, nil, err
	}
	m := worldMap{Width: o.Width, Height: height}
	var dropped []string
	for code, rs := range rings {
		c, err := draw(code, rs, arcs, o.MinArea)
		if err != nil {
			return worldMap{}, nil, err
		}
		if len(c.Rings) == 0 {
			dropped = append(dropped, code)
			continue
		}
		m.Countries = append(m.Countries, c)
	}
	slices.SortFunc(m.Countries, func(a, b country) int { return strings.Compare(a.Code, b.Code) })
	slices.Sort(dropped)
	return m, dropped, nil
}

// ringsByCode gathers the rings (as arc indexes) of the "countries"
// collection's features by alpha-2 code, but the skipped ones. A feature
// with a numeric code the table lacks, or without a code and not one of
// unnumbered, is an error: a refresh that brings one needs a decision.
func ringsByCode(t topology, alpha2 map[string]string) (map[string][][]int, error) {
	features, err := collection(t, "countries")
	if err != nil {
		return nil, err
	}
	rings := map[string][][]int{}
	for _, f := range features {
		code, ok := alpha2[string(f.ID)]
		if f.ID == "" {
			code, ok = unnumbered[f.Properties["name"]]
		}
		if !ok {
			return nil, fmt.Errorf("no alpha-2 code for feature %q (%s)", f.ID, f.Properties["name"])
		}
		if skipped[code] {
			continue
		}
		rs, err := f.rings()
		if err != nil {
			return nil, err
		}
		if len(rs) == 0 {
			continue // a null geometry: nothing to draw
		}
		rings[code] = append(rings[code], rs...)
	}
	return rings, nil
}

// placeArcs decodes the topology's arcs, cuts them at the antimeridian,
// projects them, fits the arcs of rings to the picture's width and
// simplifies each; it says how high the picture is.
func placeArcs(t topology, rings map[string][][]int, o options) ([][]point, float64, error) {
	arcs := decodeArcs(t)
	used := make([]bool, len(arcs))
	for _, rs := range rings {
		for _, r := range rs {
			for _, i := range r {
				if i < 0 {
					i = ^i
				}
				if i >= len(arcs) {
					return nil, 0, fmt.Errorf("arc %d of %d", i, len(arcs))
				}
				used[i] = true
			}
		}
	}
	b := emptyBounds()
	for i, arc := range arcs {
		arc = cutAntimeridian(arc)
		for j, p := range arc {
			if isGap(p) {
				continue
			}
			arc[j] = o.Project(p.X, p.Y)
			if used[i] {
				b.add(arc[j])
			}
		}
		arcs[i] = arc
	}
	place, height := fit(b, o.Width)
	for i, arc := range arcs {
		for j, p := range arc {
			if !isGap(p) {
				arc[j] = place(p)
			}
		}
		arcs[i] = simplifyArc(arc, o.Tolerance)
	}
	return arcs, height, nil
}

// draw makes a country's rings of placed arcs: split at the antimeridian,
// rounded, without those smaller than minArea unless all are (then its
// largest stays, so a small country is still on the map).
func draw(code string, rings [][]int, arcs [][]point, minArea float64) (country, error) {
	c := country{Code: code}
	largest, largestArea := []point(nil), 0.0
	for _, r := range rings {
		whole, err := ring(arcs, r)
		if err != nil {
			return c, fmt.Errorf("%s: %w", code, err)
		}
		for _, pts := range splitRing(whole) {
			pts = roundRing(pts)
			if len(pts) < 3 {
				continue
			}
			a := area(pts)
			if a > largestArea {
				largest, largestArea = pts, a
			}
			if a >= minArea {
				c.Rings = append(c.Rings, pts)
			}
		}
	}
	if len(c.Rings) == 0 && largest != nil {
		c.Rings = [][]point{largest}
	}
	return c, nil
}

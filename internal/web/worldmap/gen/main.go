// Command gen makes the world map's country shapes from world-atlas's
// countries TopoJSON (Natural Earth's boundaries, keyed by ISO 3166-1
// numeric code) and i18n-iso-countries' table of codes: each country
// projected (Natural Earth), fitted to a picture 1,000 units wide,
// simplified, rounded to whole units and written as SVG path data under
// its alpha-2 code, the code tally's statistics use.
// scripts/vendor-worldmap.sh downloads both packages and runs it:
//
//	go run ./internal/web/worldmap/gen -topology countries-110m.json \
//		-codes codes.json -source "…" -out internal/web/worldmap/data/countries.txt
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
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

func main() {
	topologyPath := flag.String("topology", "", "world-atlas countries TopoJSON (countries-110m.json)")
	codesPath := flag.String("codes", "", "i18n-iso-countries codes.json")
	out := flag.String("out", "", "the file to write")
	source := flag.String("source", "", "where the inputs come from, for the file's header")
	flag.Parse()
	if *topologyPath == "" || *codesPath == "" || *out == "" {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(*topologyPath, *codesPath, *out, *source); err != nil {
		fmt.Fprintln(os.Stderr, "worldmap gen:", err)
		os.Exit(1)
	}
}

func run(topologyPath, codesPath, out, source string) error {
	var t topology
	if err := readJSON(topologyPath, &t); err != nil {
		return err
	}
	var codes [][]string
	if err := readJSON(codesPath, &codes); err != nil {
		return err
	}
	m, dropped, err := convert(t, alpha2ByNumeric(codes), defaults)
	if err != nil {
		return err
	}
	if len(dropped) > 0 {
		fmt.Fprintf(os.Stderr, "worldmap gen: too small to draw: %s\n", strings.Join(dropped, ", "))
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	write(w, m, source)
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// alpha2ByNumeric reads i18n-iso-countries' codes.json (rows of alpha-2,
// alpha-3, numeric, …) as numeric → alpha-2.
func alpha2ByNumeric(rows [][]string) map[string]string {
	out := make(map[string]string, len(rows))
	for _, r := range rows {
		if len(r) >= 3 {
			out[r[2]] = r[0]
		}
	}
	return out
}

// convert projects, fits and simplifies the "countries" collection of t;
// it lists the countries whose every ring was too small to draw. A
// feature with a code the table lacks, or without a code and not one of
// unnumbered, is an error: a refresh that brings one needs a decision.
func convert(t topology, alpha2 map[string]string, o options) (worldMap, []string, error) {
	features, err := collection(t, "countries")
	if err != nil {
		return worldMap{}, nil, err
	}
	rings := map[string][][]int{} // arc indexes of each code's rings
	for _, f := range features {
		code, ok := alpha2[string(f.ID)]
		if f.ID == "" {
			code, ok = unnumbered[f.Properties["name"]]
		}
		if !ok {
			return worldMap{}, nil, fmt.Errorf("no alpha-2 code for feature %q (%s)", f.ID, f.Properties["name"])
		}
		if skipped[code] {
			continue
		}
		rs, err := f.rings()
		if err != nil {
			return worldMap{}, nil, err
		}
		if len(rs) == 0 {
			continue // a null geometry: nothing to draw
		}
		rings[code] = append(rings[code], rs...)
	}

	arcs := decodeArcs(t)
	b := emptyBounds()
	used := make([]bool, len(arcs))
	for _, rs := range rings {
		for _, r := range rs {
			for _, i := range r {
				if i < 0 {
					i = ^i
				}
				if i >= len(arcs) {
					return worldMap{}, nil, fmt.Errorf("arc %d of %d", i, len(arcs))
				}
				used[i] = true
			}
		}
	}
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

	m := worldMap{Width: o.Width, Height: height}
	var dropped []string
	for code, rs := range rings {
		c := country{Code: code}
		largest, largestArea := []point(nil), 0.0
		for _, r := range rs {
			whole, err := ring(arcs, r)
			if err != nil {
				return worldMap{}, nil, fmt.Errorf("%s: %w", code, err)
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
				if a >= o.MinArea {
					c.Rings = append(c.Rings, pts)
				}
			}
		}
		if len(c.Rings) == 0 && largest != nil {
			c.Rings = [][]point{largest}
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

// write writes the map as the package worldmap reads it: a header of
// comments, the picture's size, then a country a line, its code and its
// path data.
func write(w io.Writer, m worldMap, source string) {
	fmt.Fprintln(w, "# The world map's countries: an ISO 3166-1 alpha-2 code and SVG path data a line,")
	fmt.Fprintln(w, "# in a picture of the size below. Made by internal/web/worldmap/gen (scripts/vendor-worldmap.sh)")
	if source != "" {
		fmt.Fprintln(w, "# from "+source+".")
	}
	fmt.Fprintln(w, "# Do not edit: run the script again.")
	fmt.Fprintf(w, "size %g %g\n", m.Width, m.Height)
	for _, c := range m.Countries {
		fmt.Fprintf(w, "%s %s\n", c.Code, pathData(c.Rings))
	}
}

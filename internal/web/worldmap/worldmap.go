// Package worldmap holds the shapes of the countries on the dashboard's
// world map: SVG path data keyed by ISO 3166-1 alpha-2 code, projected and
// simplified from Natural Earth's boundaries by the generator in gen
// (scripts/vendor-worldmap.sh), embedded, read once.
package worldmap

import (
	_ "embed"
	"fmt"
	"strconv"
	"strings"
)

//go:embed data/countries.txt
var data string

// Map is the world: its countries in a picture of Width × Height units.
type Map struct {
	Width, Height float64
	Countries     []Country // in the order of the data: by code
}

// Country is a country's shape.
type Country struct {
	Code string // ISO 3166-1 alpha-2, as tally's statistics have it
	Path string // SVG path data, in the map's units
}

// pathChars are all that the generator's path data has: moves, relative
// lines and closes of whole numbers. The dashboard writes the paths into its
// pages as they are, so nothing else is let through.
const pathChars = "Mlz0123456789 -"

// Load reads the embedded map.
func Load() (Map, error) { return parse(data) }

// parse reads a map written by the generator: comment lines (#), a size
// line, then a country a line: its code, a space and its path data.
func parse(s string) (Map, error) {
	var m Map
	seen := map[string]bool{}
	for n, line := range strings.Split(s, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if size, ok := strings.CutPrefix(line, "size "); ok {
			w, h, _ := strings.Cut(size, " ")
			var errW, errH error
			m.Width, errW = strconv.ParseFloat(w, 64)
			m.Height, errH = strconv.ParseFloat(h, 64)
			if errW != nil || errH != nil || m.Width <= 0 || m.Height <= 0 {
				return Map{}, fmt.Errorf("worldmap: line %d: a bad size %q", n+1, size)
			}
			continue
		}
		code, path, ok := strings.Cut(line, " ")
		if !ok || len(code) != 2 || !strings.HasPrefix(path, "M") || strings.Trim(path, pathChars) != "" || seen[code] {
			return Map{}, fmt.Errorf("worldmap: line %d: not a country's code and path", n+1)
		}
		seen[code] = true
		m.Countries = append(m.Countries, Country{Code: code, Path: path})
	}
	if m.Width == 0 || len(m.Countries) == 0 {
		return Map{}, fmt.Errorf("worldmap: no size or no countries")
	}
	return m, nil
}

package main

import "math"

// gap marks, inside an arc or a ring, where it leaves one edge of the map
// for the other (at the antimeridian): the points before it end on one
// edge, the points after it start on the other.
var gap = point{math.NaN(), math.NaN()}

func isGap(p point) bool { return math.IsNaN(p.X) }

// cutAntimeridian cuts an arc of longitudes and latitudes where it crosses
// the antimeridian (a step of more than 180° of longitude: Fiji's and
// Russia's easternmost lands, which Natural Earth draws across it): the
// arc runs on to the edge it is at, a gap follows, and it goes on from the
// other edge at the same latitude. Drawn without the cut, such a ring
// would fill a band across the whole map.
func cutAntimeridian(arc []point) []point {
	out := make([]point, 0, len(arc))
	for i, b := range arc {
		if i == 0 {
			out = append(out, b)
			continue
		}
		a := arc[i-1]
		step := b.X - a.X
		if math.Abs(step) <= 180 {
			out = append(out, b)
			continue
		}
		// leaving eastwards (179° → -179°) or westwards (-179° → 179°)
		edge, unwrapped := 180.0, b.X+360
		if step > 0 {
			edge, unwrapped = -180, b.X-360
		}
		lat := a.Y
		if a.X != edge { // else a is on the edge already (and b may be on the other)
			lat += (edge - a.X) / (unwrapped - a.X) * (b.Y - a.Y)
		}
		if leave := (point{edge, lat}); leave != a {
			out = append(out, leave)
		}
		out = append(out, gap)
		if enter := (point{-edge, lat}); enter != b {
			out = append(out, enter)
		}
		out = append(out, b)
	}
	return out
}

// pieces splits a line at its gaps.
func pieces(pts []point) [][]point {
	var out [][]point
	start := 0
	for i, p := range pts {
		if isGap(p) {
			out = append(out, pts[start:i])
			start = i + 1
		}
	}
	return append(out, pts[start:])
}

// simplifyArc simplifies each piece of an arc between its gaps on its own,
// so the points on the map's edges stay.
func simplifyArc(arc []point, tolerance float64) []point {
	var out []point
	for i, p := range pieces(arc) {
		if i > 0 {
			out = append(out, gap)
		}
		out = append(out, simplify(p, tolerance)...)
	}
	return out
}

// splitRing makes a closed ring with gaps into rings without: each stretch
// between two gaps is a ring of its own, closed along the edge it starts
// and ends on. The stretch the ring starts in is also the one it ends in.
func splitRing(r []point) [][]point {
	ps := pieces(r)
	if len(ps) == 1 {
		return ps
	}
	last := len(ps) - 1
	joined := append(append([]point(nil), ps[last]...), ps[0]...)
	return append(ps[1:last], joined)
}

package main

import (
	"math"
	"strconv"
	"strings"
)

// naturalEarth projects a longitude and latitude in degrees by the Natural
// Earth projection (Šavrič, Jenny, Patterson and Hurni, 2011): a
// compromise between equal area and conformal that shows the whole world
// without Mercator's swollen poles, as a polynomial in the latitude. Units
// are the sphere's radius; y grows northwards.
func naturalEarth(lon, lat float64) point {
	l, p := lon*math.Pi/180, lat*math.Pi/180
	p2 := p * p
	p4 := p2 * p2
	return point{
		X: l * (0.8707 - 0.131979*p2 + p4*(-0.013791+p4*(0.003971*p2-0.001529*p4))),
		Y: p * (1.007226 + p2*(0.015085+p4*(-0.044475+0.028874*p2-0.005916*p4))),
	}
}

// bounds are a box of projected points.
type bounds struct{ MinX, MinY, MaxX, MaxY float64 }

func emptyBounds() bounds {
	return bounds{math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)}
}

func (b *bounds) add(p point) {
	b.MinX, b.MinY = min(b.MinX, p.X), min(b.MinY, p.Y)
	b.MaxX, b.MaxY = max(b.MaxX, p.X), max(b.MaxY, p.Y)
}

// fit maps projected points of b onto a picture width wide (y downwards,
// as SVG has it), and says how high the picture is.
func fit(b bounds, width float64) (func(point) point, float64) {
	k := width / (b.MaxX - b.MinX)
	return func(p point) point {
		return point{(p.X - b.MinX) * k, (b.MaxY - p.Y) * k}
	}, math.Ceil((b.MaxY - b.MinY) * k)
}

// simplify drops the points of a line that lie within tolerance of the
// line through the points it keeps (Douglas–Peucker); the first and last
// points always stay, so lines that meet still meet. It is applied to each
// arc once, so two countries' shared border stays one line.
func simplify(pts []point, tolerance float64) []point {
	if len(pts) <= 2 {
		return pts
	}
	keep := make([]bool, len(pts))
	keep[0], keep[len(pts)-1] = true, true
	var walk func(a, b int)
	walk = func(a, b int) {
		far, at := -1.0, -1
		for i := a + 1; i < b; i++ {
			if d := distance(pts[i], pts[a], pts[b]); d > far {
				far, at = d, i
			}
		}
		if at >= 0 && far > tolerance {
			keep[at] = true
			walk(a, at)
			walk(at, b)
		}
	}
	walk(0, len(pts)-1)
	var out []point
	for i, p := range pts {
		if keep[i] {
			out = append(out, p)
		}
	}
	return out
}

// distance is how far p is from the segment a–b (from a, when a is b: a
// closed ring's one arc begins and ends at the same point).
func distance(p, a, b point) float64 {
	dx, dy := b.X-a.X, b.Y-a.Y
	if dx == 0 && dy == 0 {
		return math.Hypot(p.X-a.X, p.Y-a.Y)
	}
	t := ((p.X-a.X)*dx + (p.Y-a.Y)*dy) / (dx*dx + dy*dy)
	t = max(0, min(1, t))
	return math.Hypot(p.X-a.X-t*dx, p.Y-a.Y-t*dy)
}

// roundRing rounds a ring's points to whole units, drops the repeats that
// makes, and the closing point (the path closes itself).
func roundRing(pts []point) []point {
	var out []point
	for _, p := range pts {
		r := point{math.Round(p.X), math.Round(p.Y)}
		if len(out) > 0 && out[len(out)-1] == r {
			continue
		}
		out = append(out, r)
	}
	if len(out) > 1 && out[0] == out[len(out)-1] {
		out = out[:len(out)-1]
	}
	return out
}

// area is a ring's area (shoelace formula), whatever its direction.
func area(pts []point) float64 {
	var s float64
	for i, p := range pts {
		q := pts[(i+1)%len(pts)]
		s += p.X*q.Y - q.X*p.Y
	}
	return math.Abs(s) / 2
}

// pathData writes rings of whole-unit points as SVG path data: each ring
// a move to its first point, relative lines to the others, and a close.
// Numbers are separated by a space, or by nothing before a minus sign.
func pathData(rings [][]point) string {
	var b strings.Builder
	for _, r := range rings {
		if len(r) == 0 {
			continue
		}
		b.WriteByte('M')
		writeNumbers(&b, r[0].X, r[0].Y)
		if len(r) > 1 {
			b.WriteByte('l')
			nums := make([]float64, 0, 2*(len(r)-1))
			for i := 1; i < len(r); i++ {
				nums = append(nums, r[i].X-r[i-1].X, r[i].Y-r[i-1].Y)
			}
			writeNumbers(&b, nums...)
		}
		b.WriteByte('z')
	}
	return b.String()
}

func writeNumbers(b *strings.Builder, nums ...float64) {
	for i, n := range nums {
		if n == 0 {
			n = 0 // not -0
		}
		if i > 0 && n >= 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strconv.FormatFloat(n, 'f', -1, 64))
	}
}

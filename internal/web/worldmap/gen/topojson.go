package main

import (
	"encoding/json"
	"fmt"
)

// topology is the part of a TopoJSON document the generator reads: one
// named geometry collection of polygons, the arcs they are made of, and the
// transform of quantized arcs (https://github.com/topojson/topojson-specification).
type topology struct {
	Type      string                     `json:"type"`
	Transform *transform                 `json:"transform"`
	Arcs      [][][2]float64             `json:"arcs"`
	Objects   map[string]json.RawMessage `json:"objects"`
}

type transform struct {
	Scale     [2]float64 `json:"scale"`
	Translate [2]float64 `json:"translate"`
}

// feature is a geometry of a collection: a Polygon's arcs are its rings,
// each a list of arc indexes; a MultiPolygon's are a list of polygons.
type feature struct {
	Type       string            `json:"type"`
	ID         featureID         `json:"id"`
	Properties map[string]string `json:"properties"`
	Arcs       json.RawMessage   `json:"arcs"`
}

// featureID is a feature's id, which TopoJSON writes as a string or a
// number ("004" or 4); world-atlas writes ISO 3166-1 numeric codes as strings.
type featureID string

func (id *featureID) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*id = featureID(s)
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("topology: an id neither string nor number: %s", b)
	}
	*id = featureID(n.String())
	return nil
}

// point is a position: longitude and latitude in degrees when decoded,
// x and y once projected.
type point struct{ X, Y float64 }

// decodeArcs turns the topology's arcs into positions: a quantized arc's
// first position is absolute and each next one a delta from the one before,
// all scaled and translated by the transform; without a transform the
// positions are as written.
func decodeArcs(t topology) [][]point {
	out := make([][]point, len(t.Arcs))
	for i, arc := range t.Arcs {
		pts := make([]point, len(arc))
		var x, y float64
		for j, p := range arc {
			if t.Transform == nil {
				pts[j] = point{p[0], p[1]}
				continue
			}
			x, y = x+p[0], y+p[1]
			pts[j] = point{x*t.Transform.Scale[0] + t.Transform.Translate[0], y*t.Transform.Scale[1] + t.Transform.Translate[1]}
		}
		out[i] = pts
	}
	return out
}

// collection reads the named geometry collection of the topology.
func collection(t topology, name string) ([]feature, error) {
	raw, ok := t.Objects[name]
	if !ok {
		return nil, fmt.Errorf("topology: no object %q", name)
	}
	var c struct {
		Type       string    `json:"type"`
		Geometries []feature `json:"geometries"`
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, fmt.Errorf("topology: object %q: %w", name, err)
	}
	if c.Type != "GeometryCollection" {
		return nil, fmt.Errorf("topology: object %q is a %s, not a GeometryCollection", name, c.Type)
	}
	return c.Geometries, nil
}

// rings lists the rings of a feature's polygons, each as arc indexes.
func (f feature) rings() ([][]int, error) {
	switch f.Type {
	case "Polygon":
		var rings [][]int
		if err := json.Unmarshal(f.Arcs, &rings); err != nil {
			return nil, fmt.Errorf("polygon %s: %w", f.ID, err)
		}
		return rings, nil
	case "MultiPolygon":
		var polygons [][][]int
		if err := json.Unmarshal(f.Arcs, &polygons); err != nil {
			return nil, fmt.Errorf("multipolygon %s: %w", f.ID, err)
		}
		var rings [][]int
		for _, p := range polygons {
			rings = append(rings, p...)
		}
		return rings, nil
	case "":
		return nil, nil // a null geometry
	}
	return nil, fmt.Errorf("feature %s: a %s, not a polygon", f.ID, f.Type)
}

// ring joins the arcs of a ring: index i is arc i, index ^i (negative) arc
// i backwards; each arc after the first starts where the one before ended,
// so its first position is dropped.
func ring(arcs [][]point, indexes []int) ([]point, error) {
	var out []point
	for k, i := range indexes {
		j := i
		if i < 0 {
			j = ^i
		}
		if j >= len(arcs) {
			return nil, fmt.Errorf("arc %d of %d", j, len(arcs))
		}
		arc := arcs[j]
		pts := make([]point, len(arc))
		copy(pts, arc)
		if i < 0 {
			for a, b := 0, len(pts)-1; a < b; a, b = a+1, b-1 {
				pts[a], pts[b] = pts[b], pts[a]
			}
		}
		if k > 0 && len(pts) > 0 {
			pts = pts[1:]
		}
		out = append(out, pts...)
	}
	return out, nil
}

package main

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// tiny is a topology of two squares side by side that share their border
// (arc 0), quantized with a scale of 0.5 and a translate of (10, 20):
//
//	arc 0: (2,0) → (2,2), the shared border
//	arc 1: (2,2) → (0,2) → (0,0) → (2,0), the rest of GB's square
//	arc 2: (2,0) → (4,0) → (4,2) → (2,2), the rest of US's square
//	arc 3: a square far south, Antarctica's, which the map leaves out
//
// in quantized units, so (2,0) is longitude 10 + 2×0.5 = 11, latitude 20.
// Kosovo has no numeric code and a null geometry.
const tiny = `{"type": "Topology",
	"transform": {"scale": [0.5, 0.5], "translate": [10, 20]},
	"arcs": [
		[[2, 0], [0, 2]],
		[[2, 2], [-2, 0], [0, -2], [2, 0]],
		[[2, 0], [2, 0], [0, 2], [-2, 0]],
		[[0, -20], [4, 0], [0, 1], [-4, 0], [0, -1]]
	],
	"objects": {"countries": {"type": "GeometryCollection", "geometries": [
		{"type": "Polygon", "id": "826", "properties": {"name": "United Kingdom"}, "arcs": [[0, 1]]},
		{"type": "MultiPolygon", "id": "840", "properties": {"name": "United States of America"}, "arcs": [[[2, -1]]]},
		{"type": "Polygon", "id": "010", "properties": {"name": "Antarctica"}, "arcs": [[3]]},
		{"type": null, "properties": {"name": "Kosovo"}}
	]}}}`

var tinyCodes = map[string]string{"826": "GB", "840": "US", "010": "AQ"}

func parseTiny(t *testing.T, s string) topology {
	t.Helper()
	var topo topology
	if err := json.Unmarshal([]byte(s), &topo); err != nil {
		t.Fatal(err)
	}
	return topo
}

func TestDecodeArcs(t *testing.T) {
	arcs := decodeArcs(parseTiny(t, tiny))
	// each position is the sum of the deltas so far, × 0.5, + (10, 20)
	want := [][]point{
		{{11, 20}, {11, 21}},
		{{11, 21}, {10, 21}, {10, 20}, {11, 20}},
		{{11, 20}, {12, 20}, {12, 21}, {11, 21}},
		{{10, 10}, {12, 10}, {12, 10.5}, {10, 10.5}, {10, 10}},
	}
	if diff := cmp.Diff(want, arcs); diff != "" {
		t.Errorf("arcs (-want +got):\n%s", diff)
	}
	// without a transform, positions are as written
	plain := decodeArcs(topology{Arcs: [][][2]float64{{{3, 4}, {5, 6}}}})
	if diff := cmp.Diff([][]point{{{3, 4}, {5, 6}}}, plain); diff != "" {
		t.Errorf("unquantized arcs (-want +got):\n%s", diff)
	}
}

func TestRing(t *testing.T) {
	arcs := decodeArcs(parseTiny(t, tiny))
	// US: arc 2, then arc 0 backwards (^0 = -1) without its first point
	got, err := ring(arcs, []int{2, -1})
	if err != nil {
		t.Fatal(err)
	}
	want := []point{{11, 20}, {12, 20}, {12, 21}, {11, 21}, {11, 20}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ring (-want +got):\n%s", diff)
	}
	if arcs[0][0] != (point{11, 20}) {
		t.Error("reversing an arc for a ring changed the arc")
	}
	if _, err := ring(arcs, []int{7}); err == nil {
		t.Error("a ring of a missing arc was read")
	}
}

// Through the whole conversion, with a projection that keeps longitude
// and latitude: the squares span x 10..12 and y 20..21 (Antarctica's
// 10..10.5 left out), so fitted 8 units wide each degree is 4 units and the
// picture is 4 high; y counts down from latitude 21. GB's ring, from (11,
// 20): (4, 4), (4, 0), (0, 0), (0, 4); US's: (4, 4), (8, 4), (8, 0), (4, 0).
func TestConvert(t *testing.T) {
	o := options{Project: func(lon, lat float64) point { return point{lon, lat} }, Width: 8, Tolerance: 0.1, MinArea: 1}
	m, dropped, err := convert(parseTiny(t, tiny), tinyCodes, o)
	if err != nil {
		t.Fatal(err)
	}
	want := worldMap{Width: 8, Height: 4, Countries: []country{
		{Code: "GB", Rings: [][]point{{{4, 4}, {4, 0}, {0, 0}, {0, 4}}}},
		{Code: "US", Rings: [][]point{{{4, 4}, {8, 4}, {8, 0}, {4, 0}}}},
	}}
	if diff := cmp.Diff(want, m); diff != "" {
		t.Errorf("map (-want +got):\n%s", diff)
	}
	if len(dropped) != 0 {
		t.Errorf("dropped %v", dropped)
	}
	var b strings.Builder
	write(&b, m, "a tiny topology")
	wantFile := `# The world map's countries: an ISO 3166-1 alpha-2 code and SVG path data a line,
# in a picture of the size below. Made by internal/web/worldmap/gen (scripts/vendor-worldmap.sh)
# from a tiny topology.
# Do not edit: run the script again.
size 8 4
GB M4 4l0-4-4 0 0 4z
US M4 4l4 0 0-4-4 0z
`
	if diff := cmp.Diff(wantFile, b.String()); diff != "" {
		t.Errorf("file (-want +got):\n%s", diff)
	}

	// a country all of whose rings round to nothing is dropped and named
	o.Width = 0.5
	m, dropped, err = convert(parseTiny(t, tiny), tinyCodes, o)
	if err != nil || len(m.Countries) != 0 || strings.Join(dropped, ",") != "GB,US" {
		t.Errorf("at half a unit wide: %+v, dropped %v, %v; want nothing drawn, GB and US dropped", m, dropped, err)
	}

	// a code the table lacks needs a decision
	delete(tinyCodes, "840")
	defer func() { tinyCodes["840"] = "US" }()
	if _, _, err := convert(parseTiny(t, tiny), tinyCodes, o); err == nil || !strings.Contains(err.Error(), "United States") {
		t.Errorf("a feature without an alpha-2 code: %v", err)
	}
}

// The Natural Earth projection at hand-worked points: on the equator x is
// 0.8707 × the longitude in radians; at a pole, y is π/2 × 0.905523 and the
// pole line is 0.479233 × π each side (0.55 of the equator's length).
func TestNaturalEarth(t *testing.T) {
	for _, c := range []struct {
		lon, lat float64
		want     point
	}{
		{0, 0, point{0, 0}},
		{180, 0, point{2.735389, 0}},
		{-90, 0, point{-1.367695, 0}},
		{0, 90, point{0, 1.422391}},
		{180, 90, point{1.505556, 1.422391}},
		{180, -90, point{1.505556, -1.422391}},
	} {
		got := naturalEarth(c.lon, c.lat)
		if math.Abs(got.X-c.want.X) > 1e-5 || math.Abs(got.Y-c.want.Y) > 1e-5 {
			t.Errorf("naturalEarth(%g, %g) = %+v, want %+v", c.lon, c.lat, got, c.want)
		}
	}
}

// Douglas–Peucker on a hand-worked line: (3, 3) is 3 from the line
// (0,0)–(4,0), the farthest; then, from (0,0)–(3,3), (2, 0) is √2 = 1.41
// away and (1, 0.2) 0.57; from (0,0)–(2,0), (1, 0.2) is 0.2.
func TestSimplify(t *testing.T) {
	line := []point{{0, 0}, {1, 0.2}, {2, 0}, {3, 3}, {4, 0}}
	for _, c := range []struct {
		tolerance float64
		want      []point
	}{
		{0.1, line},
		{0.6, []point{{0, 0}, {2, 0}, {3, 3}, {4, 0}}},
		{1.5, []point{{0, 0}, {3, 3}, {4, 0}}},
		{5, []point{{0, 0}, {4, 0}}},
	} {
		if diff := cmp.Diff(c.want, simplify(line, c.tolerance)); diff != "" {
			t.Errorf("tolerance %g (-want +got):\n%s", c.tolerance, diff)
		}
	}
	// a closed ring as one arc: distances are from its start, where (2, 2)
	// is farthest (2.83); (2, 0) and (0, 2) are 1.41 from the diagonal
	ringArc := []point{{0, 0}, {2, 0}, {2, 2}, {0, 2}, {0, 0}}
	if diff := cmp.Diff(ringArc, simplify(ringArc, 1)); diff != "" {
		t.Errorf("a closed arc at 1 (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]point{{0, 0}, {2, 2}, {0, 0}}, simplify(ringArc, 1.5)); diff != "" {
		t.Errorf("a closed arc at 1.5 (-want +got):\n%s", diff)
	}
}

// Crossing the antimeridian, an arc is cut: on to the edge, a gap, on from
// the other edge at the latitude where the straight step crossed it.
func TestCutAntimeridian(t *testing.T) {
	for _, c := range []struct {
		name string
		arc  []point
		want []point
	}{
		{"eastwards, 179 to -179: crossed half way", []point{{170, 0}, {179, 10}, {-179, 12}},
			[]point{{170, 0}, {179, 10}, {180, 11}, gap, {-180, 11}, {-179, 12}}},
		{"westwards, -179.5 to 178.5: a quarter of the way", []point{{-179.5, 4}, {178.5, 8}},
			[]point{{-179.5, 4}, {-180, 5}, gap, {180, 5}, {178.5, 8}}},
		{"from a point on the edge", []point{{-180, 5}, {179, 6}},
			[]point{{-180, 5}, gap, {180, 5}, {179, 6}}},
		{"edge to edge", []point{{180, 5}, {-180, 5}, {-179, 5}},
			[]point{{180, 5}, gap, {-180, 5}, {-179, 5}}},
		{"no crossing", []point{{-179, 0}, {0, 0}, {179, 0}}, []point{{-179, 0}, {0, 0}, {179, 0}}},
	} {
		got := cutAntimeridian(c.arc)
		if diff := cmp.Diff(c.want, got, cmp.Comparer(samePoint)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.name, diff)
		}
	}
}

func samePoint(a, b point) bool {
	if isGap(a) || isGap(b) {
		return isGap(a) && isGap(b)
	}
	return math.Abs(a.X-b.X) < 1e-9 && math.Abs(a.Y-b.Y) < 1e-9
}

// A ring with two gaps is two rings: the stretch between the gaps, and the
// one it starts in joined to the one it ends in.
func TestSplitRing(t *testing.T) {
	r := []point{{5, 0}, {9, 0}, gap, {0, 1}, {1, 2}, {0, 3}, gap, {9, 3}, {5, 0}}
	want := [][]point{{{0, 1}, {1, 2}, {0, 3}}, {{9, 3}, {5, 0}, {5, 0}, {9, 0}}}
	if diff := cmp.Diff(want, splitRing(r)); diff != "" {
		t.Errorf("split (-want +got):\n%s", diff)
	}
	plain := []point{{0, 0}, {1, 0}, {0, 1}, {0, 0}}
	if diff := cmp.Diff([][]point{plain}, splitRing(plain)); diff != "" {
		t.Errorf("a ring without gaps (-want +got):\n%s", diff)
	}
}

func TestRoundRingAndPathData(t *testing.T) {
	// 0.4 and -0.2 round to 0 (not -0), the repeat and the closing point go
	r := roundRing([]point{{0.4, -0.2}, {3.6, 0.1}, {4.2, 0}, {3.5, 2.5}, {0, 0}})
	if diff := cmp.Diff([]point{{0, 0}, {4, 0}, {4, 3}}, r); diff != "" {
		t.Errorf("rounded (-want +got):\n%s", diff)
	}
	if a := area(r); a != 6 {
		t.Errorf("area %g, want 6 (half of 4 × 3)", a)
	}
	got := pathData([][]point{r, {{10, 10}, {12, 10}, {12, 8}}})
	if want := "M0 0l4 0 0 3zM10 10l2 0 0-2z"; got != want {
		t.Errorf("path %q, want %q", got, want)
	}
}

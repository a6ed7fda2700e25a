package worldmap

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	m, err := parse("# a comment\nsize 8 4\nGB M4 4l0-4-4 0 0 4z\nUS M4 4l4 0 0-4-4 0z\n")
	if err != nil {
		t.Fatal(err)
	}
	want := Map{Width: 8, Height: 4, Countries: []Country{{"GB", "M4 4l0-4-4 0 0 4z"}, {"US", "M4 4l4 0 0-4-4 0z"}}}
	if diff := cmp.Diff(want, m); diff != "" {
		t.Errorf("map (-want +got):\n%s", diff)
	}
	for _, bad := range []string{
		"GB M0 0l1 0 0 1z\n",              // no size
		"size 8 4\n",                      // no countries
		"size 8\nGB M0 0l1 0 0 1z\n",      // half a size
		"size 8 4\nGBR M0 0l1 0 0 1z\n",   // not alpha-2
		"size 8 4\nGB 0 0l1 0 0 1z\n",     // not path data
		"size 8 4\nGB M0 0z\nGB M1 1z\n",  // twice
		"size 8 4\nGB M0 0\"/><script>\n", // not only path data
	} {
		if _, err := parse(bad); err == nil {
			t.Errorf("parse(%q) read it", bad)
		}
	}
}

// The vendored map reads, has the countries of every continent, and is
// not Antarctica's (left out).
func TestLoad(t *testing.T) {
	m, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	codes := map[string]bool{}
	for _, c := range m.Countries {
		codes[c.Code] = true
	}
	for _, code := range []string{"GB", "US", "BR", "CN", "ZA", "AU", "RU", "FJ", "XK"} {
		if !codes[code] {
			t.Errorf("no %s on the map", code)
		}
	}
	if codes["AQ"] || m.Width != 1000 || m.Height < 400 || m.Height > 500 {
		t.Errorf("Antarctica %v, size %g × %g; want none, 1000 wide and about 440 high", codes["AQ"], m.Width, m.Height)
	}
}

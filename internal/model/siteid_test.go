package model

import "testing"

func TestSiteIDText(t *testing.T) {
	for id, want := range map[SiteID]bool{
		"k3v9x0q2m1ab": true, "site-1.example": true, "é": true,
		"":       true, // empty is text; it names no site either way
		"a\x00b": false, "a\nb": false, "\xff": false, "a\x7fb": false,
	} {
		if got := id.Text(); got != want {
			t.Errorf("SiteID(%q).Text() = %t, want %t", id, got, want)
		}
	}
}

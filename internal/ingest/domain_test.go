package ingest

import "testing"

func TestOnDomain(t *testing.T) {
	for _, tc := range []struct {
		host, domain string
		want         bool
	}{
		{"example.com", "example.com", true},
		{"www.example.com", "example.com", true},
		{"EXAMPLE.com.", "example.com", true},
		{"blog.example.com", "example.com", true},
		{"a.b.example.com", "www.example.com", true},
		{"example.com", "blog.example.com", false},
		{"notexample.com", "example.com", false},
		{"example.com.evil.net", "example.com", false},
		{"localhost", "localhost", true},
		{"example.org", "example.com", false},
		{"", "example.com", false},
		{"example.com", "", false},
		// an internationalised host, as the Events API may send it, on the
		// domain kept in punycode
		{"Bücher.example.", "xn--bcher-kva.example", true},
		{"shop.bücher.example", "xn--bcher-kva.example", true},
		{"bücher.example", "xn--bcher-kvb.example", false},
	} {
		if got := OnDomain(tc.host, tc.domain); got != tc.want {
			t.Errorf("OnDomain(%q, %q) = %v, want %v", tc.host, tc.domain, got, tc.want)
		}
	}
}

package accounts

import "testing"

func TestNormalizeDomain(t *testing.T) {
	for in, want := range map[string]string{
		"Example.COM.": "example.com", " shop.example.org ": "shop.example.org", "a_b.example.com": "a_b.example.com",
		"localhost": "localhost", "127.0.0.1": "127.0.0.1", "bücher.example": "xn--bcher-kva.example",
		"XN--BCHER-KVA.example": "xn--bcher-kva.example",
	} {
		if got, err := NormalizeDomain(in); err != nil || got != want {
			t.Errorf("NormalizeDomain(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "http://example.com", "example.com/path", "a@b.com", "-a.com", "a..com", "\ufffd.com",
		"\xff.com", "a\x00b.com", "ex ample.com", "exa%mple.com", "☃\u200d.com"} {
		if got, err := NormalizeDomain(in); err == nil {
			t.Errorf("NormalizeDomain(%q) = %q, want an error", in, got)
		}
	}
}

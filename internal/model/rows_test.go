package model

import "testing"

// A host is stored as a site's domain is kept and as the hostname filter
// reads it: one spelling per host, whatever form the URL gave it in.
func TestStoredHost(t *testing.T) {
	for in, want := range map[string]string{
		"example.com":             "example.com",
		"WWW.Example.COM":         "example.com",
		"example.com.":            "example.com",
		"www.Blog.Example.com.":   "blog.example.com",
		"Bücher.example.com":      "xn--bcher-kva.example.com",
		"www.bücher.example.com.": "xn--bcher-kva.example.com",
		"xn--bcher-kva.example":   "xn--bcher-kva.example",
		"127.0.0.1":               "127.0.0.1",
		"under_score.example.com": "under_score.example.com",
		"wwwexample.com":          "wwwexample.com",
	} {
		if got := StoredHost(in); got != want {
			t.Errorf("StoredHost(%q) = %q, want %q", in, got, want)
		}
	}
}

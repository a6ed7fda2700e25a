package pagepattern_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/tally-analytics/tally/internal/pagepattern"
)

func TestParseRefuses(t *testing.T) {
	for _, tc := range []struct{ pattern, problem string }{
		{"blog", "must start with /"},
		{"#/admin/**", "must start with / (a page path, then # and its route: /app#/settings)"},
		{"/" + strings.Repeat("a", pagepattern.MaxLen), "must be at most 1024 characters"},
		{"/app#/" + strings.Repeat("a", pagepattern.MaxLen-5), "must be at most 1024 characters"},
		{"/a?b=1", "is a page: no query string"},
		{"/app?x=1#/a", "is a page: no query string"},
		{"/app#/a?b=1", "is a page: no query string"},
		{"/app#/a#b", "holds at most one #, between the path and its route"},
		{"/a/***", "use * for one path segment and ** for any depth"},
		{"/app#/***", "use * for one path segment and ** for any depth"},
	} {
		if _, err := pagepattern.Parse(tc.pattern); err == nil || err.Error() != tc.problem {
			t.Errorf("%.20q: %v, want %q", tc.pattern, err, tc.problem)
		}
	}
	for _, p := range []string{"/", "/" + strings.Repeat("a", pagepattern.MaxLen-1), "/app#", "/#/x", "/a**#**", "/a*#*b"} {
		if _, err := pagepattern.Parse(p); err != nil {
			t.Errorf("%.20q: %v, want it valid", p, err)
		}
	}
}

// Every page of a pattern begins with its Pages' prefix (see pages and
// patternPages); the ones that are a page, or a path whatever its route,
// say so.
func TestPages(t *testing.T) {
	for _, tc := range []struct {
		pattern string
		want    pagepattern.Pages
	}{
		{"/pricing", pagepattern.Pages{Prefix: "/pricing", AnyRoute: true}},
		{"/blog/*", pagepattern.Pages{Prefix: "/blog/"}},
		{"/docs/**/install", pagepattern.Pages{Prefix: "/docs/"}},
		{"/app#/settings", pagepattern.Pages{Prefix: "/app#/settings", Exact: true}},
		{"/app#/admin/**", pagepattern.Pages{Prefix: "/app#/admin/"}},
		{"/app#", pagepattern.Pages{Prefix: "/app"}},
		{"/app#**", pagepattern.Pages{Prefix: "/app"}},
		{"/app*#/x", pagepattern.Pages{Prefix: "/app"}},
		{"/**#/admin", pagepattern.Pages{Prefix: "/"}},
	} {
		pat, err := pagepattern.Parse(tc.pattern)
		if err != nil {
			t.Fatal(err)
		}
		if got := pat.Pages(); got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.pattern, got, tc.want)
		}
	}
	for _, tc := range patternPages {
		pat, _ := pagepattern.Parse(tc.pattern)
		pages := pat.Pages()
		for _, p := range tc.yes {
			if !strings.HasPrefix(p, pages.Prefix) || (pages.Exact && p != pages.Prefix) ||
				(pages.AnyRoute && p != pages.Prefix && !strings.HasPrefix(p, pages.Prefix+"#")) {
				t.Errorf("%s matches %q, outside %+v", tc.pattern, p, pages)
			}
		}
	}
}

// On pages without #, a pattern without # is the path pattern goals
// always had.
func TestPathPatterns(t *testing.T) {
	for _, tt := range []struct {
		pattern string
		match   []string
		noMatch []string
	}{
		{"/blog/*", []string{"/blog/a", "/blog/a-b.html"}, []string{"/blog/a/b", "/blog/", "/blog", "/blogs/a"}},
		{"/blog/**", []string{"/blog/a", "/blog/a/b", "/blog/a/b/c", "/blog/"}, []string{"/blog", "/blogs/a"}},
		{"/signup", []string{"/signup"}, []string{"/signup/", "/signups", "/x/signup"}},
		{"/shop/*/checkout", []string{"/shop/42/checkout"}, []string{"/shop/42/43/checkout", "/shop/checkout"}},
		{"/docs/**/install", []string{"/docs/v1/install", "/docs/v1/linux/install"}, []string{"/docs/install/x"}},
		{"/a.b+(c)", []string{"/a.b+(c)"}, []string{"/aXb+(c)", "/a.bb(c)"}},
	} {
		pat, err := pagepattern.Parse(tt.pattern)
		if err != nil {
			t.Fatal(err)
		}
		re, m := regexp.MustCompile(pat.Regexp()), pat.Matcher()
		for _, p := range tt.match {
			if !re.MatchString(p) || !m.Matches(p) {
				t.Errorf("%s on %s: regular expression %v, matcher %v; want a match", tt.pattern, p, re.MatchString(p), m.Matches(p))
			}
		}
		for _, p := range tt.noMatch {
			if re.MatchString(p) || m.Matches(p) {
				t.Errorf("%s on %s: regular expression %v, matcher %v; want none", tt.pattern, p, re.MatchString(p), m.Matches(p))
			}
		}
	}
}

package pagepattern

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// worstPatterns are the most a site may set (30 excluded pages) that keep
// the most of a matcher alive at once: valid patterns of the longest
// length, made of wildcards, or of a long literal behind one.
func worstPatterns(kind int) []Pattern {
	var out []Pattern
	for i := range 30 {
		var p string
		switch kind {
		case 0:
			p = "/" + strings.Repeat("**/", 400)
		case 1:
			p = "/**" + strings.Repeat("a", 1100)
		default:
			p = "/" + strings.Repeat("*a", 600)
		}
		pat, err := Parse(p[:MaxLen-3] + fmt.Sprintf("%03d", i))
		if err != nil {
			panic(err)
		}
		out = append(out, pat)
	}
	return out
}

// A site's page patterns cost every event of the site bounded work,
// whatever its owner wrote: a regular expression of 30 long patterns takes
// the matcher hundreds of milliseconds on a long path, which anyone could
// send to /e at the tracker's rate. The matcher moves all of a pattern's
// positions at once, 64 to a word, so a byte of the page costs two passes
// over the pattern's words, never more than maxWords. The worst patterns a
// site may set stay within that bound and match on the longest paths as
// their regular expression does; BenchmarkWorstPagePatterns measures their
// time (a few milliseconds for the 30 on a path of 1,024 bytes), as speed
// is measured, not asserted.
func TestWorstPagePatternsStayWithinTheMatchersBound(t *testing.T) {
	paths := []string{strings.Repeat("/", 1024), strings.Repeat("/a", 512), "/" + strings.Repeat("a", 1023)}
	for kind := range 3 {
		for _, pat := range worstPatterns(kind) {
			m := pat.Matcher()
			if m.path.words > maxWords || m.route != nil {
				t.Fatalf("kind %d: %d words a set, want at most %d and no route", kind, m.path.words, maxWords)
			}
			re := regexp.MustCompile(pat.Regexp())
			for _, path := range paths {
				if got, want := m.Matches(path), re.MatchString(path); got != want {
					t.Errorf("kind %d, %.12q… on %.12q…: %v, the regular expression says %v", kind, pat.Regexp(), path, got, want)
				}
			}
		}
	}
}

// The matcher agrees with the pattern's regular expression on every pattern
// and page.
func TestPageMatcherAgreesWithGoals(t *testing.T) {
	patterns := []string{"/", "/admin/**", "/admin/*", "/preview/*", "/login", "/a**b", "/a*b", "/*/x/**", "/**/edit",
		"/blog/*/comments/*", "/x**", "/**", "/*", "/é/*", "/a.b/*", "/(x)/**", "/a/**/b/*/c",
		"/app#/admin/**", "/app#", "/app#**", "/app#*", "/**#/x/*", "/#/a.b", "/a*#*b**"}
	paths := []string{"/", "/admin", "/admin/", "/admin/users", "/admin/users/7", "/preview/", "/preview/x", "/preview/x/y",
		"/login", "/login/", "/ab", "/axb", "/ax/yb", "/a/b", "/q/x/", "/q/x/r", "/x/x", "/post/edit", "/edit", "/a/b/edit",
		"/blog/1/comments/2", "/blog//comments/2", "/x", "/xyz/w", "", "/é/ü", "/a.b/c", "/aXb/c", "/(x)/", "/a/q/b/r/c",
		"/a/b/r/c", "/a/b//c", "/line\nbreak", "/\n", "/a\nb", "/app", "/app#", "/app#/admin/x", "/app#/admin", "/app#x",
		"/app#/a#b", "/a#b", "/ax#/yb", "/#/a.b", "/#/aXb", "/login#/x", "/x#/x/\n", "/admin/#/x"}
	for _, p := range patterns {
		pat, err := Parse(p)
		if err != nil {
			t.Fatalf("%q: %v", p, err)
		}
		re, m := regexp.MustCompile(pat.Regexp()), pat.Matcher()
		for _, path := range paths {
			if got, want := m.Matches(path), re.MatchString(path); got != want {
				t.Errorf("%q on %q: %v, its regular expression %s says %v", p, path, got, re, want)
			}
		}
	}
}

// Worst-case page patterns on a long path (see TestWorstPagePatternsStayWithinTheMatchersBound).
func BenchmarkWorstPagePatterns(b *testing.B) {
	var ms []*Matcher
	for _, p := range worstPatterns(0) {
		ms = append(ms, p.Matcher())
	}
	path := strings.Repeat("/", 1024)
	for b.Loop() {
		for _, m := range ms {
			m.Matches(path)
		}
	}
}

// ... and on random patterns and pages of the bytes that matter, some
// longer than a word of positions.
func TestPageMatcherAgreesWithGoalsAtRandom(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	word := func(alphabet string, n int) string {
		b := make([]byte, rnd.IntN(n))
		for i := range b {
			b[i] = alphabet[rnd.IntN(len(alphabet))]
		}
		return string(b)
	}
	for i := range 4000 {
		n := 10
		if i%4 == 0 { // past a word of positions
			n = 150
		}
		pat, err := Parse("/" + word("/ab*#", n))
		if err != nil {
			continue
		}
		re, m := regexp.MustCompile(pat.Regexp()), pat.Matcher()
		for range 20 {
			path := word("/ab\n#", n+n/2)
			if got, want := m.Matches(path), re.MatchString(path); got != want {
				t.Fatalf("%s on %q: %v, the regular expression says %v", re, path, got, want)
			}
		}
	}
}

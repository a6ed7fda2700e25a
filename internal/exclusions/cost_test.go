package exclusions

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"regexp"
	"strings"
	"testing"

	"github.com/tally-analytics/tally/internal/goals"
	"github.com/tally-analytics/tally/internal/model"
)

// worstPatterns are the most a site may set that keep the most of a
// matcher alive at once: 30 valid patterns of the longest length, made
// of wildcards, or of a long literal behind one.
func worstPatterns(kind int) []string {
	var out []string
	for i := range model.MaxExclusions {
		var p string
		switch kind {
		case 0:
			p = "/" + strings.Repeat("**/", 400)
		case 1:
			p = "/**" + strings.Repeat("a", 1100)
		default:
			p = "/" + strings.Repeat("*a", 600)
		}
		p = p[:1024-3] + fmt.Sprintf("%03d", i)
		if goals.ValidatePath(p) != nil {
			panic(p)
		}
		out = append(out, p)
	}
	return out
}

// A site's page patterns cost every event of the site bounded work,
// whatever its owner wrote: a regular expression of 30 long patterns takes
// the matcher hundreds of milliseconds on a long path, which anyone could
// send to /e at the tracker's rate. The page matcher moves all of a
// pattern's positions at once, 64 to a word, so a byte of the page costs
// two passes over the pattern's words, never more than maxPageWords. The
// worst patterns a site may set stay within that bound and match on the
// longest paths as the goals' expression does;
// BenchmarkWorstPagePatterns measures their time (a few milliseconds for
// the 30 on a path of 1,024 bytes), as speed is measured, not asserted.
func TestWorstPagePatternsStayWithinTheMatchersBound(t *testing.T) {
	paths := []string{strings.Repeat("/", 1024), strings.Repeat("/a", 512), "/" + strings.Repeat("a", 1023)}
	for kind := range 3 {
		for _, pat := range worstPatterns(kind) {
			m := compilePageMatcher(pat)
			if m.path.words > maxPageWords || m.route != nil {
				t.Fatalf("kind %d: %d words a set, want at most %d and no route", kind, m.path.words, maxPageWords)
			}
			re := regexp.MustCompile(goals.PathRegexp(pat))
			for _, path := range paths {
				if got, want := m.matches(path), re.MatchString(path); got != want {
					t.Errorf("kind %d, %.12q… on %.12q…: %v, goals' regexp says %v", kind, pat, path, got, want)
				}
			}
		}
	}
}

// The page matcher agrees with goals.PathRegexp, the goals' matcher, on
// every pattern and page.
func TestPageMatcherAgreesWithGoals(t *testing.T) {
	patterns := []string{"/", "/admin/**", "/admin/*", "/preview/*", "/login", "/a**b", "/a*b", "/*/x/**", "/**/edit",
		"/blog/*/comments/*", "/x**", "/**", "/*", "/é/*", "/a.b/*", "/(x)/**", "/a/**/b/*/c"}
	paths := []string{"/", "/admin", "/admin/", "/admin/users", "/admin/users/7", "/preview/", "/preview/x", "/preview/x/y",
		"/login", "/login/", "/ab", "/axb", "/ax/yb", "/a/b", "/q/x/", "/q/x/r", "/x/x", "/post/edit", "/edit", "/a/b/edit",
		"/blog/1/comments/2", "/blog//comments/2", "/x", "/xyz/w", "", "/é/ü", "/a.b/c", "/aXb/c", "/(x)/", "/a/q/b/r/c",
		"/a/b/r/c", "/a/b//c", "/line\nbreak", "/\n", "/a\nb"}
	for _, pat := range patterns {
		re := regexp.MustCompile(goals.PathRegexp(pat))
		s := Compile(model.Exclusions{Pages: []string{pat}})
		for _, path := range paths {
			if got, want := s.Excludes(path, "", netip.Addr{}), re.MatchString(path); got != want {
				t.Errorf("%q on %q: %v, goals' regexp says %v", pat, path, got, want)
			}
		}
	}
}

// Worst-case page patterns on a long path (see TestWorstPagePatternsStayWithinTheMatchersBound).
func BenchmarkWorstPagePatterns(b *testing.B) {
	s := Compile(model.Exclusions{Pages: worstPatterns(0)})
	path := strings.Repeat("/", 1024)
	for b.Loop() {
		s.Excludes(path, "example.com", netip.Addr{})
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
		pat := "/" + word("/ab*", n)
		if goals.ValidatePath(pat) != nil {
			continue
		}
		re := regexp.MustCompile(goals.PathRegexp(pat))
		s := Compile(model.Exclusions{Pages: []string{pat}})
		for range 20 {
			path := word("/ab\n", n+n/2)
			if got, want := s.Excludes(path, "", netip.Addr{}), re.MatchString(path); got != want {
				t.Fatalf("%q on %q: %v, goals' regexp says %v", pat, path, got, want)
			}
		}
	}
}

package exclusions

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"regexp"
	"strings"
	"testing"
	"time"

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

// A site's page patterns cost every event of the site a bounded time,
// whatever its owner wrote: a regular expression of 30 long patterns takes
// the matcher hundreds of milliseconds on a long path, which anyone could
// send to /e at the tracker's rate.
func TestPagePatternsMatchInBoundedTime(t *testing.T) {
	paths := []string{strings.Repeat("/", 1024), strings.Repeat("/a", 512), "/" + strings.Repeat("a", 1023)}
	for kind := range 3 {
		s := Compile(model.Exclusions{Pages: worstPatterns(kind)})
		start := time.Now()
		for _, p := range paths {
			s.Excludes(p, "example.com", netip.Addr{})
		}
		if took := time.Since(start); took > 30*time.Millisecond {
			t.Errorf("patterns of kind %d: %v for %d paths, want at most a few ms", kind, took, len(paths))
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

// Worst-case page patterns on a long path (see TestPagePatternsMatchInBoundedTime).
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

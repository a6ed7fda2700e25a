package pagepattern_test

import (
	"context"
	"regexp"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tally-analytics/tally/internal/chstore"
	"github.com/tally-analytics/tally/internal/pagepattern"
	"github.com/tally-analytics/tally/internal/testenv"
)

// pages are pages as tally stores them: paths, and on a site that records
// hash routes a route after the first #.
var pages = []string{
	"/", "/app", "/app/", "/apps", "/app#/settings", "/app#/admin/users", "/app#/admin", "/app#settings", "/app#",
	"/apps#/x", "/app/x#/admin/users", "/admin/users#/7", "/admin", "/admin#/users", "/#/admin/users", "/#/settings",
	"/blog/a", "/blog/a/b", "/blog/a\nb", "/app#/a\nb", "/app#/a#b", "/a.b", "/aXb",
}

// patternPages are patterns and, worked out by hand, which of pages each
// matches; it matches none of the others.
var patternPages = []struct {
	pattern string
	yes     []string
}{
	// a path without # is the path whatever its route
	{"/app", []string{"/app", "/app#/settings", "/app#/admin/users", "/app#/admin", "/app#settings", "/app#", "/app#/a\nb", "/app#/a#b"}},
	{"/app/", []string{"/app/"}},
	{"/", []string{"/", "/#/admin/users", "/#/settings"}},
	{"/a.b", []string{"/a.b"}},
	// a route of its own: none, any, one
	{"/app#", []string{"/app", "/app#"}},
	{"/app#**", []string{"/app", "/app#/settings", "/app#/admin/users", "/app#/admin", "/app#settings", "/app#", "/app#/a\nb", "/app#/a#b"}},
	{"/app#/settings", []string{"/app#/settings"}},
	{"/app#/admin/**", []string{"/app#/admin/users"}},
	// in the route, * is one segment (a # is a byte of it), ** any bytes
	{"/app#/*", []string{"/app#/settings", "/app#/admin", "/app#/a\nb", "/app#/a#b"}},
	{"/app#*", []string{"/app#settings"}},
	{"/#/admin/**", []string{"/#/admin/users"}},
	{"/**#/admin/**", []string{"/app#/admin/users", "/app/x#/admin/users", "/#/admin/users"}},
	{"/*#*", []string{"/app#settings"}},
	// the path's wildcards stop at the #
	{"/app*", []string{"/apps", "/apps#/x"}},
	{"/*", []string{"/app", "/apps", "/app#/settings", "/app#/admin/users", "/app#/admin", "/app#settings", "/app#", "/apps#/x",
		"/admin", "/admin#/users", "/app#/a\nb", "/app#/a#b", "/a.b", "/aXb"}},
	{"/**", pages},
	{"/admin/**", []string{"/admin/users#/7"}},
	{"/**/users", []string{"/admin/users#/7"}},
	{"/blog/**", []string{"/blog/a", "/blog/a/b", "/blog/a\nb"}},
	{"/blog/*", []string{"/blog/a", "/blog/a\nb"}},
}

// The pages a pattern matches, by the matcher of the ingest path and by
// the regular expression in Go.
func TestPatternPages(t *testing.T) {
	for _, tc := range patternPages {
		pat, err := pagepattern.Parse(tc.pattern)
		if err != nil {
			t.Fatalf("%q: %v", tc.pattern, err)
		}
		m, re := pat.Matcher(), regexp.MustCompile(pat.Regexp())
		var byMatcher, byRegexp []string
		for _, p := range pages {
			if m.Matches(p) {
				byMatcher = append(byMatcher, p)
			}
			if re.MatchString(p) {
				byRegexp = append(byRegexp, p)
			}
		}
		if diff := cmp.Diff(tc.yes, byMatcher); diff != "" {
			t.Errorf("%q, the matcher (-want +got):\n%s", tc.pattern, diff)
		}
		if diff := cmp.Diff(tc.yes, byRegexp); diff != "" {
			t.Errorf("%q, the regular expression %s (-want +got):\n%s", tc.pattern, re, diff)
		}
	}
}

// The condition goals and funnels' page steps send to ClickHouse matches,
// on the real server, the pages the matcher of the ingest path matches (an
// exclusion's), and those worked out by hand.
func TestConditionAgreesWithTheMatcherOnClickHouse(t *testing.T) {
	opts := testenv.ClickHouseOptions(t, "default")
	ch, err := chstore.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Close()
	ctx := context.Background()
	for _, tc := range patternPages {
		pat, err := pagepattern.Parse(tc.pattern)
		if err != nil {
			t.Fatalf("%q: %v", tc.pattern, err)
		}
		cond, args := pat.Condition("pathname")
		var got []string
		if err := ch.QueryRow(ctx, "SELECT groupArrayIf(pathname, "+cond+") FROM (SELECT arrayJoin(?) AS pathname)",
			append(args, pages)...).Scan(&got); err != nil {
			t.Fatalf("%q: %s: %v", tc.pattern, cond, err)
		}
		slices.SortFunc(got, func(a, b string) int { return slices.Index(pages, a) - slices.Index(pages, b) })
		var byMatcher []string
		m := pat.Matcher()
		for _, p := range pages {
			if m.Matches(p) {
				byMatcher = append(byMatcher, p)
			}
		}
		if diff := cmp.Diff(byMatcher, got); diff != "" {
			t.Errorf("%q: ClickHouse's %s with %q (-matcher +ClickHouse):\n%s", tc.pattern, cond, args, diff)
		}
		if diff := cmp.Diff(tc.yes, got); diff != "" {
			t.Errorf("%q: ClickHouse's %s (-want +got):\n%s", tc.pattern, cond, diff)
		}
	}
}

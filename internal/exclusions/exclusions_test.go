package exclusions

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/model"
)

func TestValidateNormalises(t *testing.T) {
	got, err := Validate(model.Exclusions{
		Pages:     []string{" /admin/** ", "/preview/*", "/login", "/login", "/app#/admin/**", "/#!/beta/*", "/app#"},
		Addresses: []string{"203.0.113.7", "203.0.113.77/24", "2001:DB8::/48", "::ffff:198.51.100.1"},
		Hosts:     []string{"Staging.Example.com.", "*.preview.example.com", "bücher.example"},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := model.Exclusions{
		Pages:     []string{"/admin/**", "/preview/*", "/login", "/app#/admin/**", "/#!/beta/*", "/app#"},
		Addresses: []string{"203.0.113.7", "203.0.113.0/24", "2001:db8::/48", "198.51.100.1"},
		Hosts:     []string{"staging.example.com", "*.preview.example.com", "xn--bcher-kva.example"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Validate (-want +got):\n%s", diff)
	}
}

func TestValidateNamesTheEntry(t *testing.T) {
	many := make([]string, model.MaxExclusions+1)
	for i := range many {
		many[i] = fmt.Sprintf("/p%d", i)
	}
	for _, tc := range []struct {
		name  string
		in    model.Exclusions
		field string
	}{
		{"page without slash", model.Exclusions{Pages: []string{"/ok", "/fine", "admin"}}, "excluded_pages.2"},
		{"page with query", model.Exclusions{Pages: []string{"/a?b=1"}}, "excluded_pages.0"},
		{"page with ***", model.Exclusions{Pages: []string{"/a/***"}}, "excluded_pages.0"},
		{"blank page", model.Exclusions{Pages: []string{"/a", "  "}}, "excluded_pages.1"},
		{"route without path", model.Exclusions{Pages: []string{"#/admin/**"}}, "excluded_pages.0"},
		{"two routes", model.Exclusions{Pages: []string{"/app#/a", "/app#/a#b"}}, "excluded_pages.1"},
		{"route with query", model.Exclusions{Pages: []string{"/app#/a?b=1"}}, "excluded_pages.0"},
		{"route with ***", model.Exclusions{Pages: []string{"/app#/***"}}, "excluded_pages.0"},
		{"query before route", model.Exclusions{Pages: []string{"/app?x=1#/a"}}, "excluded_pages.0"},
		{"route past the length", model.Exclusions{Pages: []string{"/app#/" + strings.Repeat("a", 1019)}}, "excluded_pages.0"},
		{"31 pages", model.Exclusions{Pages: many}, "excluded_pages"},
		{"bad address", model.Exclusions{Addresses: []string{"10.0.0.1", "10.0.0.300"}}, "excluded_addresses.1"},
		{"bad prefix length", model.Exclusions{Addresses: []string{"10.0.0.0/33"}}, "excluded_addresses.0"},
		{"zone", model.Exclusions{Addresses: []string{"fe80::1%eth0"}}, "excluded_addresses.0"},
		{"hostname", model.Exclusions{Addresses: []string{"office.example.com"}}, "excluded_addresses.0"},
		{"host with scheme", model.Exclusions{Hosts: []string{"https://staging.example.com"}}, "excluded_hosts.0"},
		{"host with path", model.Exclusions{Hosts: []string{"staging.example.com/x"}}, "excluded_hosts.0"},
		{"wildcard inside", model.Exclusions{Hosts: []string{"a.*.example.com"}}, "excluded_hosts.0"},
		{"bare wildcard", model.Exclusions{Hosts: []string{"*"}}, "excluded_hosts.0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Validate(tc.in)
			e, ok := err.(*errs.Error)
			if !ok || e.Kind != errs.Invalid || e.Field != tc.field {
				t.Fatalf("got %v, want invalid_request on %s", err, tc.field)
			}
		})
	}
}

func TestCompiledShield(t *testing.T) {
	if s := Compile(model.Exclusions{}); s != nil {
		t.Fatalf("no exclusions compiled to %v, want nil", s)
	}
	s := Compile(model.Exclusions{
		Pages:     []string{"/admin/**", "/preview/*", "/login", "no slash: skipped"},
		Addresses: []string{"203.0.113.0/24", "2001:db8::/48", "198.51.100.1", "bad"},
		Hosts:     []string{"staging.example.com", "*.preview.example.com"},
	})
	none := netip.Addr{}
	for _, tc := range []struct {
		path, host, addr string
		want             bool
	}{
		{"/admin/users", "example.com", "", true},
		{"/admin", "example.com", "", false},
		{"/preview/42", "example.com", "", true},
		{"/preview/42/x", "example.com", "", false},
		{"/login", "example.com", "", true},
		{"/login/", "example.com", "", false},
		{"/pricing", "example.com", "203.0.113.250", true},
		{"/pricing", "example.com", "203.0.114.1", false},
		{"/pricing", "example.com", "2001:db8:0:1::5", true},
		{"/pricing", "example.com", "198.51.100.1", true},
		{"/pricing", "example.com", "198.51.100.2", false},
		{"/pricing", "staging.example.com", "", true},
		{"/pricing", "www.staging.example.com", "", false},
		{"/pricing", "pr-7.preview.example.com", "", true},
		{"/pricing", "a.b.preview.example.com", "", true},
		{"/pricing", "preview.example.com", "", false},
		{"/pricing", "example.com", "", false},
	} {
		addr := none
		if tc.addr != "" {
			addr = netip.MustParseAddr(tc.addr)
		}
		if got := s.Excludes(tc.path, tc.host, addr); got != tc.want {
			t.Errorf("Excludes(%s, %s, %s) = %v, want %v", tc.path, tc.host, tc.addr, got, tc.want)
		}
	}
}

// Matching costs no allocation: it runs for every event of a site with
// exclusions.
func TestExcludesAllocatesNothing(t *testing.T) {
	s := Compile(model.Exclusions{Pages: []string{"/admin/**", "/preview/*", "/app#/admin/**"}, Addresses: []string{"203.0.113.0/24"},
		Hosts: []string{"*.staging.example.com"}})
	addr := netip.MustParseAddr("198.51.100.7")
	for _, path := range []string{"/blog/" + strings.Repeat("x", 40), "/app#/settings/" + strings.Repeat("x", 40)} {
		if n := testing.AllocsPerRun(100, func() { s.Excludes(path, "example.com", addr) }); n != 0 {
			t.Errorf("Excludes(%s) allocated %v times per event", path, n)
		}
	}
}

// A page pattern names a path, and after one # a hash route, each with the
// goals' * and **, neither reaching across the #. Without #, it matches
// the path whatever the route; with it, the route too (package
// pagepattern). ** is any bytes, a newline too: an excluded path is
// excluded whole.
func TestHashRoutePages(t *testing.T) {
	for _, tc := range []struct {
		pattern string
		yes, no []string
	}{
		{"/app#/admin/**",
			[]string{"/app#/admin/users", "/app#/admin/users/7", "/app#/admin/"},
			[]string{"/app#/admin", "/app#/settings", "/app", "/app/x#/admin/users", "/app#!/admin/users", "/apps#/admin/x"}},
		// a path names all of it: the page and each of its routes
		{"/app",
			[]string{"/app", "/app#/settings", "/app#/admin/users", "/app#settings"},
			[]string{"/app/", "/apps", "/apps#/settings", "/ap#p"}},
		{"/app#", []string{"/app"}, []string{"/app#/settings", "/app#x"}},
		{"/app#**", []string{"/app", "/app#/settings", "/app#/a/b"}, []string{"/app/x", "/apps#/a"}},
		// wildcards stop at the #: the path of /app#x is /app
		{"/app*", []string{"/apps", "/apps#/x"}, []string{"/app#x", "/app#/x", "/app"}},
		{"/x/*/edit", []string{"/x/a/edit", "/x/a/edit#/y"}, []string{"/x/a#b/edit", "/x/a#/edit"}},
		{"/*", []string{"/app", "/app#/settings", "/app#settings"}, []string{"/", "/#/settings", "/a/b#c"}},
		{"/**", []string{"/", "/#/settings", "/a/b#/c/d"}, nil},
		{"/admin/**", []string{"/admin/users#/7", "/admin/x", "/admin/a\nb"}, []string{"/admin#/users", "/admin"}},
		// a root app's routes; the router's root #/ is stored as / itself
		{"/#/admin/**", []string{"/#/admin/users"}, []string{"/", "/#/settings", "/docs#/admin/users"}},
		{"/app#/*", []string{"/app#/settings"}, []string{"/app#/settings/x", "/app#settings", "/app"}},
		{"/app#*", []string{"/app#settings", "/app#!"}, []string{"/app#/settings", "/app"}},
		{"/app#!/admin/**", []string{"/app#!/admin/users"}, []string{"/app#/admin/users"}},
		{"/**#/admin/**", []string{"/#/admin/x", "/a/b#/admin/x"}, []string{"/a/b", "/a/b#/settings"}},
	} {
		s := Compile(model.Exclusions{Pages: []string{tc.pattern}})
		if s == nil {
			t.Fatalf("%q compiled to nothing", tc.pattern)
		}
		for _, page := range tc.yes {
			if !s.Excludes(page, "example.com", netip.Addr{}) {
				t.Errorf("%q does not match %q, want a match", tc.pattern, page)
			}
		}
		for _, page := range tc.no {
			if s.Excludes(page, "example.com", netip.Addr{}) {
				t.Errorf("%q matches %q, want none", tc.pattern, page)
			}
		}
	}
}

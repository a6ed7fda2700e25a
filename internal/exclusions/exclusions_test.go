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
		Pages:     []string{" /admin/** ", "/preview/*", "/login", "/login"},
		Addresses: []string{"203.0.113.7", "203.0.113.77/24", "2001:DB8::/48", "::ffff:198.51.100.1"},
		Hosts:     []string{"Staging.Example.com.", "*.preview.example.com", "bücher.example"},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := model.Exclusions{
		Pages:     []string{"/admin/**", "/preview/*", "/login"},
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
	s := Compile(model.Exclusions{Pages: []string{"/admin/**", "/preview/*"}, Addresses: []string{"203.0.113.0/24"},
		Hosts: []string{"*.staging.example.com"}})
	addr := netip.MustParseAddr("198.51.100.7")
	path := "/blog/" + strings.Repeat("x", 40)
	if n := testing.AllocsPerRun(100, func() { s.Excludes(path, "example.com", addr) }); n != 0 {
		t.Errorf("Excludes allocated %v times per event", n)
	}
}

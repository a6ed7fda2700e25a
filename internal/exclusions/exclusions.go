// Package exclusions holds the rules of a site's exclusions (Plausible's
// shields): which page patterns, visitor addresses and hostnames a site
// keeps out of its statistics, how they are checked when an owner sets
// them, and how the ingest path matches an event against them. Page
// patterns are goals' and funnels' (package pagepattern: a path, and a
// hash route after one #), matched here by the pattern's own matcher.
package exclusions

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/tally-analytics/tally/internal/accounts"
	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/pagepattern"
)

// The API's names of the three lists; a refused entry is named
// <list>.<index> (excluded_pages.2).
const (
	FieldPages     = "excluded_pages"
	FieldAddresses = "excluded_addresses"
	FieldHosts     = "excluded_hosts"
)

// Validate checks a site's exclusions and returns them normalised: entries
// trimmed, addresses in their canonical form (a network's host bits
// cleared), hostnames in lower case and punycode, repeats dropped. The
// first bad entry is an invalid_request naming it.
func Validate(in model.Exclusions) (model.Exclusions, error) {
	var out model.Exclusions
	var err error
	if out.Pages, err = each(FieldPages, in.Pages, page); err != nil {
		return model.Exclusions{}, err
	}
	if out.Addresses, err = each(FieldAddresses, in.Addresses, address); err != nil {
		return model.Exclusions{}, err
	}
	if out.Hosts, err = each(FieldHosts, in.Hosts, host); err != nil {
		return model.Exclusions{}, err
	}
	return out, nil
}

// each normalises every entry of list with norm, which answers a message
// for a bad one.
func each(field string, list []string, norm func(string) (string, string)) ([]string, error) {
	if len(list) > model.MaxExclusions {
		return nil, errs.InvalidField(field, "at most %d entries, got %d", model.MaxExclusions, len(list))
	}
	var out []string
	seen := map[string]bool{}
	for i, raw := range list {
		entry := strings.TrimSpace(raw)
		if entry == "" {
			return nil, errs.InvalidField(fmt.Sprintf("%s.%d", field, i), "entry %d is blank", i+1)
		}
		v, problem := norm(entry)
		if problem != "" {
			return nil, errs.InvalidField(fmt.Sprintf("%s.%d", field, i), "%q %s", entry, problem)
		}
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out, nil
}

// page checks a page pattern (pagepattern.Parse).
func page(p string) (string, string) {
	if _, err := pagepattern.Parse(p); err != nil {
		return "", err.Error()
	}
	return p, ""
}

// address reads an IP address (a network of one) or a CIDR network.
func address(a string) (string, string) {
	p, ok := parseAddress(a)
	if !ok {
		return "", "is not an IP address or CIDR range (such as 203.0.113.7, 203.0.113.0/24 or 2001:db8::/48)"
	}
	if p.IsSingleIP() {
		return p.Addr().String(), ""
	}
	return p.String(), ""
}

// parseAddress reads an address or network: no zone, an IPv4 address
// written as IPv6 (::ffff:a.b.c.d) read as IPv4, as events' addresses are.
func parseAddress(a string) (netip.Prefix, bool) {
	if !strings.Contains(a, "/") {
		ip, err := netip.ParseAddr(a)
		if err != nil || ip.Zone() != "" {
			return netip.Prefix{}, false
		}
		ip = ip.Unmap()
		return netip.PrefixFrom(ip, ip.BitLen()), true
	}
	p, err := netip.ParsePrefix(a)
	if err != nil || p.Addr().Is4In6() {
		return netip.Prefix{}, false
	}
	return p.Masked(), true
}

// host reads a hostname, or *. and one.
func host(h string) (string, string) {
	wild := strings.HasPrefix(h, "*.")
	name := strings.TrimPrefix(h, "*.")
	d, err := accounts.NormalizeDomain(name)
	if err != nil || strings.Contains(d, "*") {
		return "", "is not a hostname (such as staging.example.com, or *.staging.example.com for every host under it)"
	}
	if wild {
		return "*." + d, ""
	}
	return d, ""
}

// shield is a site's exclusions compiled: the page patterns' matchers,
// the addresses as networks, the hosts split into exact names and suffixes.
type shield struct {
	pages    []*pagepattern.Matcher
	networks []netip.Prefix
	hosts    []string
	suffixes []string // ".staging.example.com" of *.staging.example.com
}

// Compile makes a site's exclusions ready for the ingest path, or answers
// nil when it excludes nothing. An entry that is no longer valid (changed
// by hand in the database) is left out rather than spoil the others.
func Compile(e model.Exclusions) model.Shield {
	var s shield
	for _, p := range e.Pages {
		if pat, err := pagepattern.Parse(p); err == nil {
			s.pages = append(s.pages, pat.Matcher())
		}
	}
	for _, a := range e.Addresses {
		if p, ok := parseAddress(a); ok {
			s.networks = append(s.networks, p)
		}
	}
	for _, h := range e.Hosts {
		switch h, problem := host(h); {
		case problem != "":
		case strings.HasPrefix(h, "*."):
			s.suffixes = append(s.suffixes, h[1:])
		default:
			s.hosts = append(s.hosts, h)
		}
	}
	if len(s.pages) == 0 && len(s.networks) == 0 && len(s.hosts) == 0 && len(s.suffixes) == 0 {
		return nil
	}
	return &s
}

// Excludes reports whether an event matches any of the exclusions.
func (s *shield) Excludes(pathname, host string, addr netip.Addr) bool {
	if addr.IsValid() {
		for _, n := range s.networks {
			if n.Contains(addr) {
				return true
			}
		}
	}
	for _, h := range s.hosts {
		if host == h {
			return true
		}
	}
	for _, suffix := range s.suffixes {
		if strings.HasSuffix(host, suffix) {
			return true
		}
	}
	for _, p := range s.pages {
		if p.Matches(pathname) {
			return true
		}
	}
	return false
}

package model

import "net/netip"

// MaxExclusions is how many entries each list of a site's exclusions holds
// at most.
const MaxExclusions = 30

// Exclusions is the traffic a site keeps out of its statistics, as its
// owner configured it: events that match are answered as if stored, and
// only counted (tracking health's excluded).
type Exclusions struct {
	// Pages are page patterns, as goals' page paths (package
	// pagepattern): * is one path segment, ** any depth (/admin/**), a
	// hash route after # (/app#/admin/**).
	Pages []string
	// Addresses are IP addresses or CIDR networks (an office's range);
	// the owner's configuration, never logged.
	Addresses []string
	// Hosts are hostnames of the page's URL: exact, or *.suffix for any
	// host under suffix (a staging copy of the site).
	Hosts []string
}

// Empty reports whether nothing is excluded.
func (e Exclusions) Empty() bool {
	return len(e.Pages) == 0 && len(e.Addresses) == 0 && len(e.Hosts) == 0
}

// Shield tells whether an event is kept out of a site's statistics: its
// path as tally stores it, the host of its URL (lower case), and the
// visitor's address (invalid when unknown).
type Shield interface {
	Excludes(pathname, host string, addr netip.Addr) bool
}

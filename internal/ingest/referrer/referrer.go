// Package referrer names the source of a visit, such as "Google" (search),
// "Reddit" (social) or "news.example.com" (referral), from the referrer's
// host or a utm_source parameter.
//
// The host list is the one Ghost maintains for its own analytics (vendored
// under data/, MIT licensed), plus what it misses, kept in Go: search
// engines (search.go); AI assistants (ai.go); social networks, messengers,
// their country domains and their Android apps (social.go).
package referrer

import "strings"

// Type is the kind of source, as stats group them.
type Type string

// Source types. The vendored list's other media (email, paid, unknown,
// referral) all count as Referral.
const (
	Search   Type = "search"
	Social   Type = "social"
	Direct   Type = "direct"
	Referral Type = "referral"
)

// DirectName is the source name of visits without a referrer or utm_source.
const DirectName = "Direct / None"

// Source is where a visit came from.
type Source struct {
	Name string // dashboard name, e.g. "Google", "Hacker News", "blog.example.com"
	Type Type
}

var direct = Source{Name: DirectName, Type: Direct}

// Classifier maps hosts and utm_source values to Sources. It is read-only
// after New and safe for concurrent use.
type Classifier struct {
	hosts    map[string]Source // lowercased host → source
	names    map[string]Source // lowercased source name → source
	suffixes map[string]bool   // listed hosts that are public suffixes ("bsky")
}

// New loads the embedded host list and builds the lookup maps.
func New() (*Classifier, error) {
	entries, err := loadEntries()
	if err != nil {
		return nil, err
	}
	return newClassifier(entries), nil
}

// FromHost classifies the host of a referrer URL. The host may be in any case
// and carry a port; "" (no referrer) is Direct. A host the list does not know
// is a Referral named by the host without "www.".
func (c *Classifier) FromHost(host string) Source {
	h := normalizeHost(host)
	if h == "" {
		return direct
	}
	if s, ok := c.lookupHost(h); ok {
		return s
	}
	if s, ok := socialBrand(h); ok {
		return s
	}
	if s, ok := socialAppFamily(h); ok {
		return s
	}
	return Source{Name: strings.TrimPrefix(h, "www."), Type: Referral}
}

// FromUTMSource classifies a utm_source value, which overrides the referrer.
// Known source names ("google", "Hacker News") and known hosts ("google.com")
// match case-insensitively; any other value is a Referral named by the value
// as given, trimmed. A blank value is Direct.
func (c *Classifier) FromUTMSource(utmSource string) Source {
	v := strings.TrimSpace(utmSource)
	if v == "" {
		return direct
	}
	lower := strings.ToLower(v)
	if s, ok := c.names[lower]; ok {
		return s
	}
	if h := normalizeHost(lower); h != "" {
		if s, ok := c.lookupHost(h); ok {
			return s
		}
	}
	return Source{Name: v, Type: Referral}
}

// subdomainPrefixes are the mobile and link-shim prefixes big sites put in
// front of the host the list names (m.facebook.com, l.facebook.com).
var subdomainPrefixes = []string{"www.", "m.", "l.", "lm."}

// lookupHost tries h itself, h without a mobile or link-shim prefix, then each
// parent domain down to the registrable domain (eTLD+1), so that
// "mail.google.co.uk" still finds "google.co.uk" but a parent that is a
// public suffix ("co.uk", "blogspot.com") never matches. Such listed hosts are
// found in New, which keeps the walk free of allocations.
func (c *Classifier) lookupHost(h string) (Source, bool) {
	if s, ok := c.hosts[h]; ok {
		return s, true
	}
	for _, p := range subdomainPrefixes {
		if rest, ok := strings.CutPrefix(h, p); ok {
			if s, ok := c.hosts[rest]; ok {
				return s, true
			}
			break
		}
	}
	for p := h; ; {
		i := strings.IndexByte(p, '.')
		if i < 0 {
			return Source{}, false
		}
		p = p[i+1:]
		if s, ok := c.hosts[p]; ok && !c.suffixes[p] {
			return s, true
		}
	}
}

// normalizeHost lowercases host and drops surrounding space, a port, IPv6
// brackets and a trailing dot. It allocates only for upper-case input.
func normalizeHost(host string) string {
	h := strings.TrimSpace(host)
	if strings.HasPrefix(h, "[") {
		if end := strings.IndexByte(h, ']'); end > 0 {
			h = h[1:end]
		}
	} else if i := strings.LastIndexByte(h, ':'); i >= 0 && strings.IndexByte(h, ':') == i {
		h = h[:i] // one colon: host:port; more would be a bare IPv6 address
	}
	h = strings.TrimSuffix(h, ".")
	return strings.ToLower(h)
}

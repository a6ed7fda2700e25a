package referrer

import (
	"cmp"
	_ "embed"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"golang.org/x/net/publicsuffix"
)

// referrersJSON is Ghost's referrer list; see data/README.md for its origin
// and how to refresh it.
//
//go:embed data/referrers.json
var referrersJSON []byte

type entry struct {
	Source string `json:"source"`
	Medium string `json:"medium"`
}

// hostEntry is one list entry as a host and the Source it maps to.
type hostEntry struct {
	host   string
	source Source
}

// loadEntries decodes the embedded list into host order, so that building
// the maps is deterministic when two keys collide.
func loadEntries() ([]hostEntry, error) {
	var raw map[string]entry
	if err := json.Unmarshal(referrersJSON, &raw); err != nil {
		return nil, fmt.Errorf("referrer: decode embedded list: %w", err)
	}
	out := make([]hostEntry, 0, len(raw))
	for _, key := range slices.Sorted(maps.Keys(raw)) {
		// Keys with a path ("google.de/imgres") need the URL path, which
		// tally does not keep; the host alone must not match them.
		if strings.Contains(key, "/") {
			continue
		}
		e := raw[key]
		if e.Source == "" {
			return nil, fmt.Errorf("referrer: embedded list: host %q has no source", key)
		}
		out = append(out, hostEntry{host: strings.ToLower(key), source: Source{Name: e.Source, Type: mediumType(e.Medium)}})
	}
	return out, nil
}

func mediumType(medium string) Type {
	switch medium {
	case "search":
		return Search
	case "social":
		return Social
	default:
		return Referral
	}
}

func newClassifier(entries []hostEntry) *Classifier {
	hosts := make(map[string]Source, len(entries)+len(aiAssistants))
	for _, e := range entries {
		if _, dup := hosts[e.host]; !dup {
			hosts[e.host] = e.source
		}
	}
	// The list sometimes names only "www.example.com"; a visitor coming from
	// "example.com" is the same site.
	for _, e := range entries {
		if bare, ok := strings.CutPrefix(e.host, "www."); ok {
			if _, listed := hosts[bare]; !listed {
				hosts[bare] = e.source
			}
		}
	}
	for site, source := range languageSites(hosts) {
		hosts[site] = source
	}
	// Search engines, networks, messengers and apps the list misses (it wins
	// where it names one).
	for host, name := range searchHosts {
		if _, listed := hosts[host]; !listed {
			hosts[host] = Source{Name: name, Type: Search}
		}
	}
	for host, name := range socialHosts {
		if _, listed := hosts[host]; !listed {
			hosts[host] = Source{Name: name, Type: Social}
		}
	}
	for pkg, name := range socialApps {
		hosts[pkg] = Source{Name: name, Type: Social}
	}
	// AI assistants win over the list: gemini.google.com is not Google search.
	for host, name := range aiAssistants {
		hosts[host] = Source{Name: name, Type: Referral}
	}
	names := sourceNames(hosts)
	for value, name := range socialUTMSources {
		if _, known := names[value]; !known {
			names[value] = Source{Name: name, Type: Social}
		}
	}
	return &Classifier{hosts: hosts, names: names, suffixes: publicSuffixes(hosts)}
}

// languageSites returns the registrable domains of sites that put each
// language on a host of its own, with a mobile twin (en.wikipedia.org and
// en.m.wikipedia.org, de.wikipedia.org and de.m.wikipedia.org, ...), and
// that the list names by one language only: by a host directly under the
// registrable domain together with its twin, both for one source. Such a
// domain is listed as that source, so the parent walk of lookupHost finds
// every other language, its mobile host and the domain itself. The twin is
// the sign: a product's host (mail.example.com) has no "<label>.m." twin,
// and a domain is left alone when the list names it, or names another
// source under it.
func languageSites(hosts map[string]Source) map[string]Source {
	sites := map[string]Source{}
	for host, source := range hosts {
		label, site, ok := strings.Cut(host, ".")
		if !ok || hosts[label+".m."+site] != source {
			continue
		}
		if _, listed := hosts[site]; listed {
			continue
		}
		if d, err := publicsuffix.EffectiveTLDPlusOne(host); err == nil && d == site {
			sites[site] = source
		}
	}
	for host, source := range hosts {
		if d, err := publicsuffix.EffectiveTLDPlusOne(host); err == nil {
			if s, ok := sites[d]; ok && s != source {
				delete(sites, d)
			}
		}
	}
	return sites
}

// publicSuffixes returns the listed hosts that are public suffixes, which
// may match a referrer exactly but never as a parent of one.
func publicSuffixes(hosts map[string]Source) map[string]bool {
	suffixes := map[string]bool{}
	for host := range hosts {
		if ps, _ := publicsuffix.PublicSuffix(host); ps == host {
			suffixes[host] = true
		}
	}
	return suffixes
}

// sourceNames indexes sources by lower-cased name for utm_source matching. A
// name listed under several media (Google is mostly search, but
// support.google.com is "unknown") takes the type most of its hosts have, and
// the spelling most of them use.
func sourceNames(hosts map[string]Source) map[string]Source {
	type tally struct {
		types     map[Type]int
		spellings map[string]int
	}
	byName := map[string]*tally{}
	for _, s := range hosts {
		key := strings.ToLower(s.Name)
		t := byName[key]
		if t == nil {
			t = &tally{types: map[Type]int{}, spellings: map[string]int{}}
			byName[key] = t
		}
		t.types[s.Type]++
		t.spellings[s.Name]++
	}
	names := make(map[string]Source, len(byName))
	for key, t := range byName {
		names[key] = Source{
			Name: mostCommon(t.spellings, strings.Compare),
			Type: mostCommon(t.types, compareTypes),
		}
	}
	return names
}

// typeRank orders types for ties: a name split evenly between search and
// email (Freenet, Rambler) is a search engine first.
var typeRank = map[Type]int{Search: 0, Social: 1, Referral: 2, Direct: 3}

func compareTypes(a, b Type) int { return cmp.Compare(typeRank[a], typeRank[b]) }

// mostCommon returns the key with the highest count; ties go to the key that
// sorts first under compare, so the result never depends on map order.
func mostCommon[K comparable](counts map[K]int, compare func(a, b K) int) K {
	var best K
	bestN := -1
	for _, k := range slices.SortedFunc(maps.Keys(counts), compare) {
		if counts[k] > bestN {
			best, bestN = k, counts[k]
		}
	}
	return best
}

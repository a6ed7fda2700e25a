package referrer

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Categories are the lower-cased names and hosts of the sources of each
// kind a channel grouping tells apart (internal/stats' channels): search
// engines, social networks, video sites, shopping sites, and webmail. A
// value is matched exactly against a visit's utm_source or its stored
// source name, both lower-cased.
type Categories struct {
	Search, Social, Video, Shopping, Email []string
}

// socialAliases and videoAliases are utm_source values that name a site by
// a short code rather than by its name or host, in common use in links
// made by hand: LinkedIn's li, Twitter's tw, YouTube's yt (fb, ig and msg,
// which Meta's ads write, the classifier knows already). Only the channel
// grouping reads them: the sources report names such a visit by the value
// as given.
var (
	socialAliases = []string{"li", "tw"}
	videoAliases  = []string{"yt"}
)

// SourceCategories builds the categories from the vendored list and the
// lists kept in Go: search and social are the names and hosts the
// classifier gives those types (the vendored list, search.go, social.go,
// the utm_source names of Meta's ads) and socialAliases; video and
// shopping are videoHosts (and videoAliases) and shoppingHosts, hosts and
// names; email is the names and hosts of the vendored list's medium
// "email" (webmail, which the classifier counts as referrals). Each list
// is sorted and holds
// no empty value. The lists may overlap (the vendored list calls YouTube
// social and Amazon a search engine): the channel grouping reads shopping
// and video first.
func SourceCategories() (Categories, error) {
	entries, err := loadEntries()
	if err != nil {
		return Categories{}, err
	}
	c := newClassifier(entries)
	byType := map[Type]map[string]bool{Search: {}, Social: {}}
	add := func(t Type, value string) {
		if set, ok := byType[t]; ok && value != "" {
			set[strings.ToLower(value)] = true
		}
	}
	for host, s := range c.hosts {
		add(s.Type, host)
	}
	for name, s := range c.names {
		add(s.Type, name)
	}
	for _, alias := range socialAliases {
		add(Social, alias)
	}
	email, err := webmail()
	if err != nil {
		return Categories{}, err
	}
	video := hostsAndNames(videoHosts)
	for _, alias := range videoAliases {
		video[alias] = true
	}
	return Categories{Search: sorted(byType[Search]), Social: sorted(byType[Social]), Video: sorted(video),
		Shopping: sorted(hostsAndNames(shoppingHosts)), Email: sorted(email)}, nil
}

// webmail is the set of the lower-cased names and hosts of the vendored
// list's medium "email" (hosts with a path left out, as loadEntries does).
func webmail() (map[string]bool, error) {
	var raw map[string]entry
	if err := json.Unmarshal(referrersJSON, &raw); err != nil {
		return nil, fmt.Errorf("referrer: decode embedded list: %w", err)
	}
	out := map[string]bool{}
	for host, e := range raw {
		if e.Medium == "email" && !strings.Contains(host, "/") {
			out[strings.ToLower(host)], out[strings.ToLower(e.Source)] = true, true
		}
	}
	return out, nil
}

// hostsAndNames is the set of a host list's hosts, each also with "www."
// (a utm_source may be written either way), and its lower-cased names.
func hostsAndNames(hosts map[string]string) map[string]bool {
	out := map[string]bool{}
	for host, name := range hosts {
		out[host], out["www."+host], out[strings.ToLower(name)] = true, true, true
	}
	return out
}

func sorted(set map[string]bool) []string { return slices.Sorted(maps.Keys(set)) }

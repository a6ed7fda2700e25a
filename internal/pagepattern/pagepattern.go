// Package pagepattern is the language of page patterns, which goals'
// page_path, funnels' page steps and a site's excluded pages share: one
// parser, and from what it reads both the matcher of the ingest path
// (Matcher) and the condition ClickHouse evaluates at query time
// (Condition, Regexp), so that the two cannot mean different things.
//
// A page as tally stores it is a path, and on a site that records hash
// routes a route after the first # (/app#/settings; the router's root #/
// is the page itself). A page without # has an empty route. A pattern is a
// pattern of a path, optionally followed by one # and a pattern of the
// route; in both, * is one path segment (one byte or more, no /) and ** any
// depth (any bytes, none too), and neither reaches across the #:
//
//   - a pattern without # names a path, and matches each page at that
//     path whatever its route: /app matches /app and /app#/settings, and
//     /admin/** matches /admin/users#/7. On a page without # it is the
//     path pattern it always was. /app* does not match /app#/x: its path
//     is /app.
//   - a pattern with # names the route too: /app#/admin/** matches
//     /app#/admin/users and not /app#/settings or /app; /app# matches /app
//     without a route only, and /app#** is /app.
package pagepattern

import (
	"errors"
	"strings"
)

// MaxLen is the longest pattern, in bytes.
const MaxLen = 1024

// kind is what a token of a pattern matches.
type kind uint8

const (
	literal  kind = iota // its text
	segment              // *: one byte or more, no /
	anyDepth             // **: any bytes
)

type token struct {
	kind kind
	text string // a literal's
}

// Pattern is a valid page pattern, read.
type Pattern struct {
	path  []token
	route []token
	// routed: the pattern names a route (it holds a #); else it matches
	// its path whatever the route
	routed bool
}

// Parse reads a page pattern. The error of an invalid one is a message for
// its owner: "must start with /".
func Parse(p string) (Pattern, error) {
	path, route, routed := strings.Cut(p, "#")
	switch {
	case strings.HasPrefix(p, "#"):
		return Pattern{}, errors.New("must start with / (a page path, then # and its route: /app#/settings)")
	case !strings.HasPrefix(p, "/"):
		return Pattern{}, errors.New("must start with /")
	case len(p) > MaxLen:
		return Pattern{}, errors.New("must be at most 1024 characters")
	case strings.Contains(p, "?"):
		return Pattern{}, errors.New("is a page: no query string")
	case strings.Contains(route, "#"):
		return Pattern{}, errors.New("holds at most one #, between the path and its route")
	case strings.Contains(path, "***") || strings.Contains(route, "***"):
		return Pattern{}, errors.New("use * for one path segment and ** for any depth")
	}
	return Pattern{path: tokens(path), route: tokens(route), routed: routed}, nil
}

// tokens reads the path or the route of a valid pattern.
func tokens(p string) []token {
	var out []token
	for i := 0; i < len(p); {
		switch {
		case strings.HasPrefix(p[i:], "**"):
			out = append(out, token{kind: anyDepth})
			i += 2
		case p[i] == '*':
			out = append(out, token{kind: segment})
			i++
		default:
			j := i
			for j < len(p) && p[j] != '*' {
				j++
			}
			out = append(out, token{kind: literal, text: p[i:j]})
			i = j
		}
	}
	return out
}

// plain is the text of tokens without a wildcard, and whether they have none.
func plain(tokens []token) (string, bool) {
	var b strings.Builder
	for _, t := range tokens {
		if t.kind != literal {
			return b.String(), false
		}
		b.WriteString(t.text)
	}
	return b.String(), true
}

// nullable reports whether tokens match the empty text (a route of "" or
// **): a page without a route is then of the pattern.
func nullable(tokens []token) bool {
	for _, t := range tokens {
		if t.kind != anyDepth {
			return false
		}
	}
	return true
}

// Pages is where the pages of a pattern lie among pages sorted as text.
type Pages struct {
	// Prefix begins every page of the pattern.
	Prefix string
	// Exact: the pattern is the one page Prefix.
	Exact bool
	// AnyRoute: the pattern is the page Prefix and every page Prefix#…,
	// whatever its route (a path without a wildcard, and without #).
	AnyRoute bool
}

// Pages answers where the pattern's pages lie: the pattern's text up to its
// first wildcard, or when its route may be empty, up to the #.
func (p Pattern) Pages() Pages {
	path, plainPath := plain(p.path)
	switch {
	case !plainPath:
		return Pages{Prefix: path}
	case !p.routed:
		return Pages{Prefix: path, AnyRoute: true}
	case nullable(p.route):
		return Pages{Prefix: path}
	}
	route, plainRoute := plain(p.route)
	return Pages{Prefix: path + "#" + route, Exact: plainRoute}
}

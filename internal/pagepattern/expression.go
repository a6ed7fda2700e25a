package pagepattern

import (
	"regexp"
	"strings"
)

// Regexp is the pattern as an anchored RE2 regular expression of a page,
// which ClickHouse's match and Go's regexp read alike: it names every byte
// class it means and holds no '.', which ClickHouse lets match a newline and
// Go does not. In the path, * is [^/#]+ and ** [^#]*, so that neither
// reaches the route; in the route, [^/]+ and any bytes. A pattern without
// # ends at its path's end or at a #, whatever follows.
func (p Pattern) Regexp() string {
	var b strings.Builder
	b.WriteString("^")
	write(&b, p.path, "[^/#]+", "[^#]*")
	switch {
	case !p.routed:
		b.WriteString("(#|$)")
	case nullable(p.route):
		b.WriteString("(#")
		write(&b, p.route, "[^/]+", "(?s:.*)")
		b.WriteString(")?$")
	default:
		b.WriteString("#")
		write(&b, p.route, "[^/]+", "(?s:.*)")
		b.WriteString("$")
	}
	return b.String()
}

// write adds the expression of tokens, with the wildcards' given.
func write(b *strings.Builder, tokens []token, oneSegment, anyBytes string) {
	for _, t := range tokens {
		switch t.kind {
		case literal:
			b.WriteString(regexp.QuoteMeta(t.text))
		case segment:
			b.WriteString(oneSegment)
		default:
			b.WriteString(anyBytes)
		}
	}
}

// Condition is the ClickHouse condition a page in column meets when it is
// of the pattern, and its arguments, bound to its ? placeholders (column is
// the caller's, never a client's). A pattern without a wildcard is compared
// rather than matched, which spares a regular expression over every
// pageview of a range: one page is that page; a path without # is that
// page, or one that begins with it and a #. Any other is matched by Regexp.
// It holds the same on ClickHouse 18.16 and current releases.
func (p Pattern) Condition(column string) (string, []any) {
	switch pages := p.Pages(); {
	case pages.Exact:
		return column + " = ?", []any{pages.Prefix}
	case pages.AnyRoute:
		return "(" + column + " = ? OR startsWith(" + column + ", ?))", []any{pages.Prefix, pages.Prefix + "#"}
	}
	return "match(" + column + ", ?)", []any{p.Regexp()}
}

package exclusions

import (
	"errors"
	"strings"

	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/goals"
)

// A page as tally stores it is a path, and on a site that records hash
// routes a route after the first # (/app#/settings; the router's root #/
// is the page itself). A page pattern is the goals' pattern of a path,
// optionally followed by one # and a pattern of the route, with the same
// * and **; neither wildcard reaches across the #:
//
//   - a pattern without # names a path, and matches each page at that
//     path whatever its route: /app matches /app and /app#/settings, and
//     /admin/** matches /admin/users#/7. An owner who excludes a path
//     means all of it; and so a pattern written before routes could be
//     named keeps excluding what it did. /app* does not match /app#/x:
//     its path is /app.
//   - a pattern with # names the route too: /app#/admin/** matches
//     /app#/admin/users and not /app#/settings or /app; /app# matches
//     /app without a route only, and /app#** is /app.
//
// A page without # has an empty route.

// maxPageLen is the longest page pattern, the goals' page_path limit.
const maxPageLen = 1024

// pageProblem checks a page pattern, returning what is wrong with it, or
// "" when it is valid.
func pageProblem(p string) string {
	path, route, routed := strings.Cut(p, "#")
	switch {
	case len(p) > maxPageLen:
		return "must be at most 1024 characters"
	case routed && path == "":
		return "must start with / (a page path, then # and its route: /app#/settings)"
	case strings.ContainsAny(route, "#?"):
		return "holds at most one #, between the path and its route, and no query string"
	case strings.Contains(route, "***"):
		return "use * for one path segment and ** for any depth"
	}
	if err := goals.ValidatePath(path); err != nil {
		var e *errs.Error
		if errors.As(err, &e) {
			return e.Message
		}
		return "is not a page pattern"
	}
	return ""
}

// pageMatcher is a valid page pattern compiled: its path's, and when it
// names one its route's.
type pageMatcher struct {
	path  *pagePattern
	route *pagePattern // nil: any route, or none
}

// compilePageMatcher compiles a valid pattern (pageProblem).
func compilePageMatcher(p string) pageMatcher {
	path, route, routed := strings.Cut(p, "#")
	m := pageMatcher{path: compilePage(path)}
	if routed {
		m.route = compilePage(route)
	}
	return m
}

// matches reports whether page (as stored) is one of the pattern. It
// allocates nothing.
func (m pageMatcher) matches(page string) bool {
	path, route, _ := strings.Cut(page, "#")
	return m.path.matches(path) && (m.route == nil || m.route.matches(route))
}

// pagePattern is a pattern of a path or of a route (the goals': * one path
// segment, ** any depth) compiled for the ingest path. It matches as goals.PathRegexp's
// expression does, but in time bounded by the pattern's length times the
// page's, with a small constant: the pattern's positions are bits, and each
// byte of the page moves all of them at once. Go's regexp, linear as it
// is, keeps a thread per live position and pays for each in turn: 30
// patterns of 1,024 characters, written to keep many alive, took it 100 ms
// and more on one long path, which anyone may send to /e.
//
// The pattern is a row of tokens: a byte; one byte but / (the first of a
// *); and loops, any number of bytes but / (the rest of a *) or of any
// byte (**). Position i is "before token i"; position len(tokens) matches.
// As in the expression, ** matches no newline ('.') and * does ([^/]).
type pagePattern struct {
	words  int      // uint64s of a set of positions
	accept int      // the position after the last token
	masks  []uint64 // sets, words each; byMask indexes them
	// byte sets: tokens that are this byte (0: none)
	byByte [256]int32
	// tokens that are one byte but /; loops of bytes but /; loops of
	// bytes but \n; every loop
	oneSegment, loopSegment, loopAny, loops int32
}

// maxPageWords bounds a set of positions: a pattern of goals' 1,024
// characters has at most 2,048 tokens (each * is two).
const maxPageWords = (2*1024 + 1 + 63) / 64

// compilePage compiles the path or the route of a valid pattern
// (pageProblem).
func compilePage(p string) *pagePattern {
	type token struct {
		b    byte
		kind int32 // 0 a byte, else the mask it belongs to
	}
	g := &pagePattern{}
	g.oneSegment, g.loopSegment, g.loopAny, g.loops = 1, 2, 3, 4
	var tokens []token
	for i := 0; i < len(p); {
		switch {
		case len(p)-i >= 2 && p[i:i+2] == "**":
			tokens = append(tokens, token{kind: g.loopAny})
			i += 2
		case p[i] == '*':
			tokens = append(tokens, token{kind: g.oneSegment}, token{kind: g.loopSegment})
			i++
		default:
			tokens = append(tokens, token{b: p[i]})
			i++
		}
	}
	g.accept = len(tokens)
	g.words = (len(tokens) + 1 + 63) / 64
	// mask 0 is empty; 1 to 4 are the wildcards' and the loops'
	next := int32(5)
	g.masks = make([]uint64, int(next)*g.words)
	set := func(mask int32, pos int) {
		if int(mask+1)*g.words > len(g.masks) {
			g.masks = append(g.masks, make([]uint64, g.words)...)
		}
		g.masks[int(mask)*g.words+pos/64] |= 1 << (pos % 64)
	}
	for pos, t := range tokens {
		switch t.kind {
		case 0:
			if g.byByte[t.b] == 0 {
				g.byByte[t.b] = next
				next++
			}
			set(g.byByte[t.b], pos)
		case g.oneSegment:
			set(g.oneSegment, pos)
		default:
			set(t.kind, pos)
			set(g.loops, pos)
		}
	}
	return g
}

func (g *pagePattern) mask(m int32) []uint64 {
	return g.masks[int(m)*g.words : int(m+1)*g.words]
}

// matches reports whether path is a page of the pattern. It allocates
// nothing.
func (g *pagePattern) matches(path string) bool {
	var curBuf, nextBuf [maxPageWords]uint64
	cur, nxt := curBuf[:g.words], nextBuf[:g.words]
	cur[0] = 1
	g.close(cur)
	one, loopSeg, loopAny := g.mask(g.oneSegment), g.mask(g.loopSegment), g.mask(g.loopAny)
	for i := 0; i < len(path); i++ {
		c := path[i]
		byByte := g.mask(g.byByte[c])
		segment, any := c != '/', c != '\n'
		var carry uint64
		alive := false
		for w := range cur {
			moves := cur[w] & byByte[w]
			stays := uint64(0)
			if segment {
				moves |= cur[w] & one[w]
				stays |= cur[w] & loopSeg[w]
			}
			if any {
				stays |= cur[w] & loopAny[w]
			}
			nxt[w] = moves<<1 | carry | stays
			carry = moves >> 63
			alive = alive || nxt[w] != 0
		}
		if !alive {
			return false
		}
		g.close(nxt)
		cur, nxt = nxt, cur
	}
	return cur[g.accept/64]&(1<<(g.accept%64)) != 0
}

// close adds to a set of positions those a loop in it may be left for
// without a byte (a loop matches nothing too). No loop follows another (a
// pattern has no ***), so one pass is all.
func (g *pagePattern) close(set []uint64) {
	loops := g.mask(g.loops)
	var carry uint64
	for w := range set {
		from := set[w] & loops[w]
		set[w] |= from<<1 | carry
		carry = from >> 63
	}
}

package pagepattern

import "strings"

// Matcher is a pattern compiled for the ingest path: its path's, and when
// it names one its route's.
type Matcher struct {
	path  *part
	route *part // nil: any route, or none
}

// Matcher compiles the pattern.
func (p Pattern) Matcher() *Matcher {
	m := &Matcher{path: compile(p.path)}
	if p.routed {
		m.route = compile(p.route)
	}
	return m
}

// Matches reports whether page (as stored) is one of the pattern. It
// allocates nothing.
func (m *Matcher) Matches(page string) bool {
	path, route, _ := strings.Cut(page, "#")
	return m.path.matches(path) && (m.route == nil || m.route.matches(route))
}

// part is the pattern of a path or of a route compiled. It matches as the
// pattern's regular expression does, but in time bounded by the pattern's
// length times the page's, with a small constant: the pattern's positions
// are bits, and each byte of the page moves all of them at once. Go's
// regexp, linear as it is, keeps a thread per live position and pays for
// each in turn: 30 patterns of 1,024 characters, written to keep many
// alive, took it 100 ms and more on one long path, which anyone may send to
// /e.
//
// The pattern is a row of tokens: a byte; one byte but / (the first of a
// *); and loops, any number of bytes but / (the rest of a *) or of any
// byte (**). Position i is "before token i"; position len(tokens) matches.
// The page's path holds no # (it ends at the first), so the path's
// wildcards, which stop at a #, need no other class.
type part struct {
	words  int      // uint64s of a set of positions
	accept int      // the position after the last token
	masks  []uint64 // sets, words each; byMask indexes them
	// byte sets: tokens that are this byte (0: none)
	byByte [256]int32
	// tokens that are one byte but /; loops of bytes but /; loops of
	// any byte; every loop
	oneSegment, loopSegment, loopAny, loops int32
}

// maxWords bounds a set of positions: a pattern of MaxLen characters has
// at most 2,048 tokens (each * is two).
const maxWords = (2*MaxLen + 1 + 63) / 64

// compile compiles the path or the route of a pattern.
func compile(tokens []token) *part {
	type position struct {
		b    byte
		kind int32 // 0 a byte, else the mask it belongs to
	}
	g := &part{}
	g.oneSegment, g.loopSegment, g.loopAny, g.loops = 1, 2, 3, 4
	var row []position
	for _, t := range tokens {
		switch t.kind {
		case anyDepth:
			row = append(row, position{kind: g.loopAny})
		case segment:
			row = append(row, position{kind: g.oneSegment}, position{kind: g.loopSegment})
		default:
			for i := 0; i < len(t.text); i++ {
				row = append(row, position{b: t.text[i]})
			}
		}
	}
	g.accept = len(row)
	g.words = (len(row) + 1 + 63) / 64
	// mask 0 is empty; 1 to 4 are the wildcards' and the loops'
	next := int32(5)
	g.masks = make([]uint64, int(next)*g.words)
	set := func(mask int32, pos int) {
		if int(mask+1)*g.words > len(g.masks) {
			g.masks = append(g.masks, make([]uint64, g.words)...)
		}
		g.masks[int(mask)*g.words+pos/64] |= 1 << (pos % 64)
	}
	for pos, t := range row {
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

func (g *part) mask(m int32) []uint64 {
	return g.masks[int(m)*g.words : int(m+1)*g.words]
}

// matches reports whether s is of the pattern. It allocates nothing.
func (g *part) matches(s string) bool {
	var curBuf, nextBuf [maxWords]uint64
	cur, nxt := curBuf[:g.words], nextBuf[:g.words]
	cur[0] = 1
	g.close(cur)
	one, loopSeg, loopAny := g.mask(g.oneSegment), g.mask(g.loopSegment), g.mask(g.loopAny)
	for i := 0; i < len(s); i++ {
		c := s[i]
		byByte := g.mask(g.byByte[c])
		segment := c != '/'
		var carry uint64
		alive := false
		for w := range cur {
			moves := cur[w] & byByte[w]
			stays := cur[w] & loopAny[w]
			if segment {
				moves |= cur[w] & one[w]
				stays |= cur[w] & loopSeg[w]
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
func (g *part) close(set []uint64) {
	loops := g.mask(g.loops)
	var carry uint64
	for w := range set {
		from := set[w] & loops[w]
		set[w] |= from<<1 | carry
		carry = from >> 63
	}
}

package useragent

import (
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// A bot list holds some 1,700 patterns, and a browser's user agent matches
// none of them: run one by one, or joined into one alternation, they cost
// milliseconds per new header. Nearly every pattern names a word any match
// must contain ("Googlebot", "curl/"), so each carries the words one of which
// a header must hold (folded) before the pattern itself runs: a new
// browser header then costs a few substring searches per pattern.

// fold maps s to one form per case-folding class, so that whatever a
// regexp matches, case-insensitively or not, holds the folded words of its
// literals once folded itself: ASCII letters become lower case, and any other
// rune the least rune it folds with (lower-cased when that is ASCII: "ſ"
// becomes "s", the Kelvin sign "k"). Headers are nearly always ASCII.
func fold(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return strings.Map(foldRune, s)
		}
	}
	return strings.ToLower(s)
}

func foldRune(r rune) rune {
	least := r
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		least = min(least, f)
	}
	if least < utf8.RuneSelf {
		return unicode.ToLower(least)
	}
	return least
}

// required returns what every match of the regular expression expr must
// contain: clauses of words, folded (see fold), each of which the match holds one
// word of; nil when it cannot tell (the pattern must always run).
// Look-around groups, which Go's syntax lacks, are left out first: they only
// narrow what matches.
func required(expr string) [][]string {
	re, err := syntax.Parse(withoutLookaround(expr), syntax.Perl)
	if err != nil {
		return nil
	}
	return mustContain(re.Simplify())
}

// mustContain returns the clauses every match of re satisfies.
func mustContain(re *syntax.Regexp) [][]string {
	switch re.Op {
	case syntax.OpLiteral:
		return [][]string{{fold(string(re.Rune))}}
	case syntax.OpCapture, syntax.OpPlus:
		return mustContain(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return mustContain(re.Sub[0])
		}
	case syntax.OpConcat:
		// every part's clauses (adjacent literals are one literal after
		// Simplify)
		var all [][]string
		for _, sub := range re.Sub {
			all = append(all, mustContain(sub)...)
		}
		return all
	case syntax.OpAlternate:
		// one clause: the best clause of each side, any of them
		var any []string
		for _, sub := range re.Sub {
			clauses := mustContain(sub)
			if clauses == nil {
				return nil
			}
			any = append(any, slices.MaxFunc(clauses, func(a, b []string) int { return shortest(a) - shortest(b) })...)
		}
		return [][]string{any}
	}
	return nil
}

func shortest(words []string) int {
	n := len(words[0])
	for _, w := range words[1:] {
		n = min(n, len(w))
	}
	return n
}

// withoutLookaround removes the groups (?=…), (?!…), (?<=…) and (?<!…)
// from expr.
func withoutLookaround(expr string) string {
	var b strings.Builder
	for i := 0; i < len(expr); i++ {
		c := expr[i]
		if c == '\\' && i+1 < len(expr) {
			b.WriteString(expr[i : i+2])
			i++
			continue
		}
		if c == '(' && (strings.HasPrefix(expr[i:], "(?=") || strings.HasPrefix(expr[i:], "(?!") ||
			strings.HasPrefix(expr[i:], "(?<=") || strings.HasPrefix(expr[i:], "(?<!")) {
			i = groupEnd(expr, i)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// groupEnd returns the index of the parenthesis that closes the group
// opened at expr[open] (the last index when it is not closed).
func groupEnd(expr string, open int) int {
	depth, inClass := 0, false
	for i := open; i < len(expr); i++ {
		switch c := expr[i]; {
		case c == '\\':
			i++
		case inClass:
			inClass = c != ']'
		case c == '[':
			inClass = true
		case c == '(':
			depth++
		case c == ')':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return len(expr) - 1
}

// words finds, in one pass over a header, which of many words it holds.
type words struct {
	list  []string
	ids   map[string]int32
	pairs map[uint16][]int32 // by a word's first two bytes
	ones  [256][]int32       // words of one byte
}

// add returns the clauses as ids, adding the new words; nil stays nil (no
// clause: always run).
func (x *words) add(clauses [][]string) [][]int32 {
	if clauses == nil {
		return nil
	}
	out := make([][]int32, len(clauses))
	for i, c := range clauses {
		out[i] = x.addWords(c)
	}
	return out
}

func (x *words) addWords(ws []string) []int32 {
	if x.ids == nil {
		x.ids, x.pairs = map[string]int32{}, map[uint16][]int32{}
	}
	ids := make([]int32, 0, len(ws))
	for _, w := range ws {
		id, ok := x.ids[w]
		if !ok {
			id = int32(len(x.list))
			x.list, x.ids[w] = append(x.list, w), id
			if len(w) == 1 {
				x.ones[w[0]] = append(x.ones[w[0]], id)
			} else {
				k := uint16(w[0])<<8 | uint16(w[1])
				x.pairs[k] = append(x.pairs[k], id)
			}
		}
		ids = append(ids, id)
	}
	return ids
}

// find returns which words lower holds, by id.
func (x *words) find(lower string) []bool {
	found := make([]bool, len(x.list))
	for i := 0; i < len(lower); i++ {
		for _, id := range x.ones[lower[i]] {
			found[id] = true
		}
		if i+1 == len(lower) {
			break
		}
		for _, id := range x.pairs[uint16(lower[i])<<8|uint16(lower[i+1])] {
			if !found[id] && strings.HasPrefix(lower[i:], x.list[id]) {
				found[id] = true
			}
		}
	}
	return found
}

// holds reports whether every clause has a word that was found.
func holds(found []bool, clauses [][]int32) bool {
	for _, ids := range clauses {
		if !slices.ContainsFunc(ids, func(id int32) bool { return found[id] }) {
			return false
		}
	}
	return true
}

// filtered is a regexp of alternatives, each behind the clauses its matches
// satisfy: a header holding no alternative's words is not searched at all.
type filtered struct {
	re    *regexp.Regexp // the whole, for tests
	parts []filteredPart
}

type filteredPart struct {
	re      *regexp.Regexp
	clauses [][]string
}

func mustFilter(expr string) filtered {
	f := filtered{re: regexp.MustCompile(expr)}
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		panic(err)
	}
	alternatives := []*syntax.Regexp{re}
	if re.Op == syntax.OpAlternate {
		alternatives = re.Sub
	}
	for _, a := range alternatives {
		f.parts = append(f.parts, filteredPart{re: regexp.MustCompile(a.String()), clauses: mustContain(a.Simplify())})
	}
	return f
}

// match reports whether ua matches (lower is ua folded).
func (f filtered) match(ua, lower string) bool {
	for _, p := range f.parts {
		if p.holds(lower) && p.re.MatchString(ua) {
			return true
		}
	}
	return false
}

func (p filteredPart) holds(lower string) bool {
	for _, c := range p.clauses {
		if !slices.ContainsFunc(c, func(w string) bool { return strings.Contains(lower, w) }) {
			return false
		}
	}
	return true
}

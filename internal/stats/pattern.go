package stats

import (
	"errors"
	"regexp/syntax"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxPatternCost bounds what a pattern of a Match filter may compile to,
// counted as patternCost counts it. ClickHouse compiles a pattern with
// RE2, whose default memory budget refuses a program of about 130,000
// instructions ("pattern too large"): a class like \pL is hundreds of them
// (a UTF-8 automaton), and a repeat copies its operand. The bound keeps a
// pattern far from RE2's refusal, which would be a failed query, while
// leaving room for any pattern a page or a source needs: [a-z]{500} costs
// 1,000, \pL+ about 1,300.
const MaxPatternCost = 50_000

// CheckPattern reports why ClickHouse could not take p as a Match
// filter's pattern, or nil. The pattern is RE2's syntax, which Go's
// regexp/syntax reads alike, except for what is checked here: a named
// group (ClickHouse 18.16's RE2 refuses Go's (?<name>…), and a filter has
// no use for names), a \Q that is not ended (it would quote the group
// matchPattern closes), a Unicode class RE2 does not name (classes) and
// the size of the program.
func CheckPattern(p string) error {
	re, err := syntax.Parse(p, syntax.Perl)
	if err != nil {
		var se *syntax.Error
		if errors.As(err, &se) {
			return errors.New(string(se.Code))
		}
		return err
	}
	if named(re) {
		return errors.New("named groups are not supported; use (?:…)")
	}
	if _, err := syntax.Parse(matchPattern(p), syntax.Perl); err != nil {
		return errors.New(`\Q quotes up to \E, which the pattern must have`)
	}
	if c := unknownClass(p); c != "" {
		return errors.New("RE2 has no class " + c + "; name a general category (L, Lu…), a script (Greek…) or Any")
	}
	if patternCost(re.Simplify()) > MaxPatternCost {
		return errors.New("the pattern is too large")
	}
	return nil
}

// re2Categories are the general categories RE2 names: Go's syntax also
// reads Cn and LC, and since Go 1.25 aliases (Letter), ASCII, Assigned and
// any name in any case (greek, \pl), all of which RE2 refuses.
var re2Categories = map[string]bool{
	"C": true, "Cc": true, "Cf": true, "Co": true, "Cs": true, "L": true, "Ll": true, "Lm": true, "Lo": true, "Lt": true,
	"Lu": true, "M": true, "Mc": true, "Me": true, "Mn": true, "N": true, "Nd": true, "Nl": true, "No": true, "P": true,
	"Pc": true, "Pd": true, "Pe": true, "Pf": true, "Pi": true, "Po": true, "Ps": true, "S": true, "Sc": true, "Sk": true,
	"Sm": true, "So": true, "Z": true, "Zl": true, "Zp": true, "Zs": true,
}

// unknownClass is the first \p or \P class of p (a parsed pattern) that
// RE2 does not name, or "": RE2 names the classes of re2Categories, the
// scripts as unicode.Scripts spells them, and Any.
func unknownClass(p string) string {
	for i := 0; i+1 < len(p); i++ {
		if p[i] != '\\' {
			continue
		}
		switch p[i+1] {
		case 'Q': // quoted text, up to \E
			end := strings.Index(p[i+2:], `\E`)
			if end < 0 {
				return ""
			}
			i += end + 3
			continue
		case 'p', 'P':
			class, name := p[i:i+3], p[i+2:i+3]
			if rest := p[i+2:]; strings.HasPrefix(rest, "{") {
				if end := strings.IndexByte(rest, '}'); end > 0 {
					class, name = p[i:i+3+end], strings.TrimPrefix(rest[1:end], "^")
				}
			}
			if _, script := unicode.Scripts[name]; !re2Categories[name] && !script && name != "Any" {
				return class
			}
		}
		i++ // the escaped character
	}
	return ""
}

func named(re *syntax.Regexp) bool {
	if re.Op == syntax.OpCapture && re.Name != "" {
		return true
	}
	for _, s := range re.Sub {
		if named(s) {
			return true
		}
	}
	return false
}

// patternCost estimates the instructions RE2 compiles re to (re
// simplified, so that repeats are copies): a literal's UTF-8 bytes, a
// class's ranges twice over (each a few byte ranges of UTF-8), one for
// anything else, plus its operands.
func patternCost(re *syntax.Regexp) int {
	n := 1
	switch re.Op {
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			n += utf8.RuneLen(r)
		}
	case syntax.OpCharClass:
		n += len(re.Rune)
	}
	for _, s := range re.Sub {
		n += patternCost(s)
	}
	return n
}

// matchPattern is p as Match sends it to ClickHouse: in a group of its
// own, which is the same pattern to RE2. ClickHouse 18.16 looks for a
// pattern's literal text before it runs RE2, and takes a leading (?i) to
// apply to nothing: (?i)blog would not match /Blog. Inside a group it
// reads no text to look for.
func matchPattern(p string) string { return "(?:" + p + ")" }

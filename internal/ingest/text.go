package ingest

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// The one rule for the text an event brings into the reports: no character
// that changes how the text around it is shown. A sender could otherwise put
// lines of their own into an analyst's card (a path with %0A), or have a
// name read backwards (U+202E RIGHT-TO-LEFT OVERRIDE). html/template escapes
// markup already; these are no markup. (Nor can a page or a source then
// hold the newline that separates them in the realtime store.) Unsafe are:
//
//   - the controls: C0 (U+0000–U+001F), DEL (U+007F) and C1 (U+0080–U+009F);
//   - the bidirectional controls (Unicode's Bidi_Control: U+061C, U+200E,
//     U+200F, U+202A–U+202E, U+2066–U+2069);
//   - the line and paragraph separators U+2028 and U+2029.
//
// Any other character, every letter of every script included (/café, /東京),
// is kept as it is. What becomes of an unsafe one depends on the text:
//
//   - a URL's parts (the page's path and its hash route, the host, the
//     referrer) percent-encode it, as a browser would have sent it
//     (urlText): "/a%0Ab" stays "/a%0Ab", U+202E is "%E2%80%AE";
//   - any other text (the UTM parameters, event names, props' keys and
//     values; the revenue package stores payments' event names, from the
//     payments API and the providers' webhooks, through it too) gets a
//     space in place of a line break or tab (what HTML shows them as:
//     "line 1\nline 2" reads "line 1 line 2"), and U+FFFD REPLACEMENT
//     CHARACTER in place of any other (PlainText), so the reader sees that
//     something was there: one character for one, so no limit on length
//     changes.

// unsafeRune reports whether r is one of the rule's unsafe characters.
func unsafeRune(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) || r == '\u2028' || r == '\u2029'
}

// hasUnsafe reports whether s holds an unsafe character, or bytes that are
// no UTF-8. Plain ASCII text is answered without decoding.
func hasUnsafe(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return strings.ContainsFunc(s[i:], func(r rune) bool { return r == utf8.RuneError || unsafeRune(r) })
		}
	}
	return false
}

// urlText percent-encodes the unsafe characters of a URL's part, and bytes
// that are no UTF-8, byte by byte (upper-case hex); the rest is kept.
func urlText(s string) string {
	if !hasUnsafe(s) {
		return s
	}
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || unsafeRune(r) {
			for _, c := range []byte(s[i : i+size]) {
				b.WriteByte('%')
				b.WriteByte(hex[c>>4])
				b.WriteByte(hex[c&0xf])
			}
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// PlainText replaces each unsafe character of s that is white space (tab,
// line breaks, U+0085, U+2028, U+2029) with a space, any other, and each
// byte that is no UTF-8, with U+FFFD. It is the rule for any text other
// than a URL's parts, wherever it comes in.
func PlainText(s string) string {
	if !hasUnsafe(s) {
		return s
	}
	return strings.Map(func(r rune) rune {
		switch {
		case !unsafeRune(r):
			return r
		case unicode.IsSpace(r):
			return ' '
		}
		return utf8.RuneError
	}, s)
}

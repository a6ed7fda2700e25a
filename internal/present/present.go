// Package present writes the statistics' numbers as people read them: the
// dashboard's cards and the email reports write them the same way.
package present

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
)

// Number writes 1234567 as 1,234,567.
func Number(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// Percent writes a rate of 0–100 with one decimal: 33.3%.
func Percent(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) + "%" }

// Duration writes seconds as "1m 05s" or "42s".
func Duration(seconds float64) string {
	s := int64(math.Round(seconds))
	if s < 60 {
		return strconv.FormatInt(s, 10) + "s"
	}
	if s < 3600 {
		return fmt.Sprintf("%dm %02ds", s/60, s%60)
	}
	return fmt.Sprintf("%dh %02dm", s/3600, s%3600/60)
}

// Change writes a percent change with its sign; nil (no previous value to
// compare with) is a dash.
func Change(v *float64) string {
	if v == nil {
		return "–"
	}
	sign := ""
	if *v > 0 {
		sign = "+"
	}
	return sign + strconv.FormatFloat(*v, 'f', 1, 64) + "%"
}

// Points writes a change of a rate in percentage points with its sign:
// +16.7 pts.
func Points(v float64) string {
	sign := ""
	if v > 0 {
		sign = "+"
	}
	return sign + strconv.FormatFloat(v, 'f', 1, 64) + " pts"
}

// Pad fills s with spaces to n characters, for the columns of a mail's
// plain-text part; a longer s is left as it is. s is Inert first: the
// labels of mails are pages and sources that anyone may send.
func Pad(n int, s string) string {
	s = Inert(s)
	if r := []rune(s); len(r) < n {
		return s + strings.Repeat(" ", n-len(r))
	}
	return s
}

// Inert replaces what would act in a line of plain text rather than be
// read with U+FFFD: control characters (a tracked path's %0A would begin
// a line of its own in a mail, such as a fake "Unsubscribe:") and the
// marks that reorder the text after them (U+202A–U+202E, U+2066–U+2069).
func Inert(s string) string {
	acts := func(r rune) bool {
		return unicode.IsControl(r) || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069
	}
	if !strings.ContainsFunc(s, acts) {
		return s
	}
	return strings.Map(func(r rune) rune {
		if acts(r) {
			return unicode.ReplacementChar
		}
		return r
	}, s)
}

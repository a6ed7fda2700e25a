// Package present writes the statistics' numbers as people read them: the
// dashboard's cards and the email reports write them the same way.
package present

import (
	"fmt"
	"math"
	"strconv"
	"strings"
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
// plain-text part; a longer s is left as it is.
func Pad(n int, s string) string {
	if r := []rune(s); len(r) < n {
		return s + strings.Repeat(" ", n-len(r))
	}
	return s
}

package auth

import (
	"strings"
	"testing"
)

// A new password is 8 to 256 characters, counted as characters: "é" is
// two bytes of UTF-8 and one character.
func TestCheckNewPassword(t *testing.T) {
	for _, c := range []struct {
		password string
		ok       bool
	}{
		{"short12", false},
		{"eight888", true},
		{strings.Repeat("é", 7), false}, // 14 bytes, 7 characters
		{strings.Repeat("é", 8), true},
		{strings.Repeat("é", 256), true}, // 512 bytes
		{strings.Repeat("a", 257), false},
		{strings.Repeat("é", 257), false},
	} {
		if err := CheckNewPassword("password", c.password); (err == nil) != c.ok {
			t.Errorf("%d bytes, %d characters: %v, want ok %v", len(c.password), len([]rune(c.password)), err, c.ok)
		}
	}
}

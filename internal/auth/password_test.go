package auth

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
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

// A link's token is 32 random bytes (256 bits) in base64url, 43
// characters, kept as its SHA-256; only that shape is ever looked up.
func TestLinkTokens(t *testing.T) {
	token, hash := NewLinkToken()
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil || len(raw) != 32 || len(token) != 43 {
		t.Fatalf("token %q: %d bytes (%v), want 32 in 43 characters", token, len(raw), err)
	}
	if sum := sha256.Sum256([]byte(token)); !bytes.Equal(hash, sum[:]) {
		t.Error("the hash is not the token's SHA-256")
	}
	if other, _ := NewLinkToken(); other == token {
		t.Error("two tokens are equal")
	}
	for _, bad := range []string{"", token[:42], token + "A", token[:42] + "=", token[:42] + "+", token[:42] + "/",
		strings.Repeat("!", 43), strings.Repeat("é", 22)} {
		if LinkTokenWellFormed(bad) {
			t.Errorf("%q passes as a token", bad)
		}
	}
	if !LinkTokenWellFormed(token) {
		t.Errorf("%q does not pass as a token", token)
	}
}

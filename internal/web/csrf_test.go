package web

import (
	"strings"
	"testing"
)

// A token is masked anew each time, every masked form of it verifies, and
// so does the token as it is (pages rendered before masking); another
// token, a masked one altered by a character, a cut one and nothing do not.
func TestFormToken(t *testing.T) {
	const secret = "Kq3dV9xTzL1mA7bN0cR5sW2yE8hJ4uPf" // 32 characters, as sessions make them
	a, b := formToken(secret), formToken(secret)
	if a == b || strings.Contains(a, secret) || len(a) != 86 { // base64url of 64 bytes
		t.Fatalf("two masks: %q and %q", a, b)
	}
	for _, ok := range []string{a, b, secret} {
		if !formTokenOK(ok, secret) {
			t.Errorf("%q is refused", ok)
		}
	}
	flipped := []byte(a)
	flipped[60] ^= 1
	for _, bad := range []string{"", formToken("Kq3dV9xTzL1mA7bN0cR5sW2yE8hJ4uPg"), string(flipped), a[:85], secret[:31], "forged"} {
		if formTokenOK(bad, secret) {
			t.Errorf("%q is accepted", bad)
		}
	}
	if formTokenOK(a, "") || formTokenOK("", "") {
		t.Error("a session without a token accepts one")
	}
}

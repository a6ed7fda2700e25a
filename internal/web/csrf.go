package web

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
)

// Many pages reflect what a request's URL says (a view's filters, a
// search, where to go after logging in). Were a page compressed with a
// token that stays the same in every page, the token would leak to an
// attacker who can make a victim's browser load pages and can measure
// their compressed length (BREACH). So a page never carries a CSRF token
// as it is: formToken masks it anew for each page, and formTokenOK takes
// it back.

// formToken is a CSRF token as one page carries it: a fresh random mask
// followed by the token XORed with it, base64url, so that no two pages hold
// the same string.
func formToken(secret string) string {
	out := make([]byte, 2*len(secret))
	mask, masked := out[:len(secret)], out[len(secret):]
	_, _ = rand.Read(mask) // never fails (crypto/rand's promise)
	for i := range masked {
		masked[i] = secret[i] ^ mask[i]
	}
	return base64.RawURLEncoding.EncodeToString(out)
}

// formTokenOK reports whether a form's token is secret: masked by
// formToken, or as it is (as pages rendered before masking carry it).
func formTokenOK(sent, secret string) bool {
	if secret == "" || sent == "" {
		return false
	}
	raw, err := base64.RawURLEncoding.DecodeString(sent)
	if err != nil || len(raw) != 2*len(secret) {
		return subtle.ConstantTimeCompare([]byte(sent), []byte(secret)) == 1
	}
	mask, masked := raw[:len(secret)], raw[len(secret):]
	for i := range masked {
		masked[i] ^= mask[i]
	}
	return subtle.ConstantTimeCompare(masked, []byte(secret)) == 1
}

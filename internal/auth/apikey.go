package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"strings"
)

// Key environments and their prefixes.
const (
	EnvLive = "live"
	EnvTest = "test"

	livePrefix = "sk_live_"
	testPrefix = "sk_test_"

	keySecretLen  = 40 // base62 characters after the prefix (≈ 238 bits)
	keyDisplayLen = 4  // secret characters kept in the stored prefix for display
)

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// RandomString returns n characters drawn uniformly from alphabet with
// crypto/rand (rejection sampling, so there is no modulo bias).
func RandomString(n int, alphabet string) string {
	out := make([]byte, 0, n)
	buf := make([]byte, n+n/2)
	limit := 256 - 256%len(alphabet)
	for len(out) < n {
		rand.Read(buf) //nolint:errcheck // crypto/rand.Read never fails (Go 1.24+)
		for _, b := range buf {
			if int(b) < limit && len(out) < n {
				out = append(out, alphabet[int(b)%len(alphabet)])
			}
		}
	}
	return string(out)
}

// NewKeySecret makes a new API key for environment env ("live" or "test"):
// the secret to show once, the prefix to store for display, and the SHA-256
// hash to store for lookup.
func NewKeySecret(env string) (secret, displayPrefix string, hash []byte) {
	p := testPrefix
	if env == EnvLive {
		p = livePrefix
	}
	secret = p + RandomString(keySecretLen, base62)
	return secret, secret[:len(p)+keyDisplayLen], HashKey(secret)
}

// HashKey is the SHA-256 of a key secret: what the store keeps and looks up.
func HashKey(secret string) []byte {
	sum := sha256.Sum256([]byte(secret))
	return sum[:]
}

// linkTokenBytes is the randomness of a link's token (256 bits).
const linkTokenBytes = 32

// NewLinkToken makes the token of a link that is its own authority, with
// no login — a shared dashboard, an email report's unsubscribe link, a
// password reset: 32 random bytes in base64url without padding (43
// characters), and the hash to store and look it up by, HashKey's as for a
// key's secret.
func NewLinkToken() (token string, hash []byte) {
	b := make([]byte, linkTokenBytes)
	rand.Read(b) //nolint:errcheck // crypto/rand.Read never fails (Go 1.24+)
	token = base64.RawURLEncoding.EncodeToString(b)
	return token, HashKey(token)
}

// LinkTokenWellFormed reports whether s can be a link's token (its length
// and alphabet), so that anything else is refused unlooked-up.
func LinkTokenWellFormed(s string) bool {
	if len(s) != base64.RawURLEncoding.EncodedLen(linkTokenBytes) {
		return false
	}
	_, err := base64.RawURLEncoding.DecodeString(s)
	return err == nil
}

// KeyEnvironment reports the environment a bearer credential claims by its
// prefix ("live" or "test"), and whether it looks like an API key at all.
func KeyEnvironment(bearer string) (env string, ok bool) {
	switch {
	case strings.HasPrefix(bearer, livePrefix):
		env, bearer = EnvLive, bearer[len(livePrefix):]
	case strings.HasPrefix(bearer, testPrefix):
		env, bearer = EnvTest, bearer[len(testPrefix):]
	default:
		return "", false
	}
	if len(bearer) < 32 || len(bearer) > 128 {
		return env, false
	}
	for i := range len(bearer) {
		if !isBase62(bearer[i]) {
			return env, false
		}
	}
	return env, true
}

// isBase62 reports whether c is one of base62's characters. Every request
// with an API key asks it of each of the key's characters.
func isBase62(c byte) bool {
	return '0' <= c && c <= '9' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z'
}

// LooksLikeKey reports whether a bearer credential has an API-key prefix (as
// opposed to a JWT), whether or not it is well formed.
func LooksLikeKey(bearer string) bool {
	return strings.HasPrefix(bearer, "sk_")
}

package auth

import (
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

func TestTokens(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	tokens := NewTokens("0123456789abcdef0123456789abcdef", clock)
	token, expires, err := tokens.Issue("user-1", 3)
	if err != nil {
		t.Fatal(err)
	}
	if want := now.Add(7 * 24 * time.Hour); !expires.Equal(want) {
		t.Errorf("expires_at = %v, want %v (7 days)", expires, want)
	}
	if got, gen, err := tokens.Parse(token); err != nil || got != "user-1" || gen != 3 {
		t.Errorf("Parse = %q, %d, %v; want user-1 of generation 3", got, gen, err)
	}
	// a token of before generations is of generation 0
	old, _ := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.RegisteredClaims{Subject: "user-1", IssuedAt: jwt.NewNumericDate(now),
		ExpiresAt: jwt.NewNumericDate(now.Add(time.Hour))}).SignedString([]byte("0123456789abcdef0123456789abcdef"))
	if got, gen, err := tokens.Parse(old); err != nil || got != "user-1" || gen != 0 {
		t.Errorf("Parse of a token without a generation = %q, %d, %v; want user-1 of generation 0", got, gen, err)
	}

	other := NewTokens("another-secret-another-secret-xx", clock)
	forged, _, _ := other.Issue("user-1", 3)
	noneToken, _ := jwt.NewWithClaims(jwt.SigningMethodNone, jwt.RegisteredClaims{Subject: "user-1",
		ExpiresAt: jwt.NewNumericDate(now.Add(time.Hour))}).SignedString(jwt.UnsafeAllowNoneSignatureType)
	hs512, _ := jwt.NewWithClaims(jwt.SigningMethodHS512, jwt.RegisteredClaims{Subject: "user-1",
		ExpiresAt: jwt.NewNumericDate(now.Add(time.Hour))}).SignedString([]byte("0123456789abcdef0123456789abcdef"))
	noExp, _ := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.RegisteredClaims{Subject: "user-1"}).
		SignedString([]byte("0123456789abcdef0123456789abcdef"))
	parts := strings.Split(token, ".")
	tampered := parts[0] + "." + base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"user-2","exp":9999999999}`)) + "." + parts[2]

	later := NewTokens("0123456789abcdef0123456789abcdef", func() time.Time { return now.Add(7*24*time.Hour + time.Second) })
	for name, tc := range map[string]struct {
		tokens *Tokens
		token  string
	}{
		"expired":          {later, token},
		"wrong signature":  {tokens, forged},
		"alg none":         {tokens, noneToken},
		"other algorithm":  {tokens, hs512},
		"no expiry":        {tokens, noExp},
		"tampered payload": {tokens, tampered},
		"malformed":        {tokens, "not.a.jwt"},
		"empty":            {tokens, ""},
	} {
		t.Run(name, func(t *testing.T) {
			if u, _, err := tc.tokens.Parse(tc.token); err == nil {
				t.Errorf("Parse accepted the token (user %q)", u)
			}
		})
	}
}

func TestKeySecrets(t *testing.T) {
	secret, prefix, hash := NewKeySecret(EnvTest)
	if !strings.HasPrefix(secret, "sk_test_") || len(secret) != len("sk_test_")+40 {
		t.Errorf("secret %q: want sk_test_ + 40 characters", secret)
	}
	if !strings.HasPrefix(secret, prefix) || len(prefix) != len("sk_test_")+4 {
		t.Errorf("prefix %q is not the secret's first 12 characters", prefix)
	}
	if string(hash) != string(HashKey(secret)) || len(hash) != 32 {
		t.Error("hash is not the SHA-256 of the secret")
	}
	live, _, _ := NewKeySecret(EnvLive)
	if !strings.HasPrefix(live, "sk_live_") {
		t.Errorf("live secret %q lacks sk_live_", live)
	}
	second, _, _ := NewKeySecret(EnvTest)
	if second == secret {
		t.Error("two keys are equal")
	}
	for _, tc := range []struct {
		in         string
		env        string
		wellFormed bool
	}{
		{secret, EnvTest, true},
		{live, EnvLive, true},
		{"sk_test_short", EnvTest, false},
		{"sk_test_" + strings.Repeat("!", 40), EnvTest, false},
		{"sk_prod_" + strings.Repeat("a", 40), "", false},
		{"eyJhbGciOi", "", false},
	} {
		env, ok := KeyEnvironment(tc.in)
		if env != tc.env || ok != tc.wellFormed {
			t.Errorf("KeyEnvironment(%q) = %q, %v; want %q, %v", tc.in, env, ok, tc.env, tc.wellFormed)
		}
	}
}

func TestRandomStringAlphabet(t *testing.T) {
	s := RandomString(1000, "ab")
	if strings.Trim(s, "ab") != "" || len(s) != 1000 {
		t.Fatalf("RandomString produced %q", s[:20])
	}
	if a := strings.Count(s, "a"); a < 400 || a > 600 {
		t.Errorf("%d of 1000 characters are 'a'; the draw looks biased", a)
	}
}

// Every byte is base62 exactly when the alphabet keys are made of holds it.
func TestIsBase62IsTheKeysAlphabet(t *testing.T) {
	for c := range 256 {
		if got, want := isBase62(byte(c)), strings.IndexByte(base62, byte(c)) >= 0; got != want {
			t.Errorf("isBase62(%q) = %v, want %v", byte(c), got, want)
		}
	}
}

package auth

import (
	"errors"
	"fmt"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/tally-analytics/tally/internal/model"
)

// TokenLifetime is how long a login token is valid (spec: 7 days, no refresh).
const TokenLifetime = 7 * 24 * time.Hour

// Tokens issues and checks login JWTs (HS256).
type Tokens struct {
	secret []byte
	now    func() time.Time
}

// NewTokens makes a token issuer; now is the clock (time.Now in production).
func NewTokens(secret string, now func() time.Time) *Tokens {
	return &Tokens{secret: []byte(secret), now: now}
}

// claims are a login token's: the registered ones, and the token
// generation of its user at issue.
type claims struct {
	jwt.RegisteredClaims
	// Generation is model.User.TokenGeneration when the token was issued;
	// tokens issued before generations existed carry none, which is 0.
	Generation int64 `json:"gen,omitempty"`
}

// Issue makes a token for user at their token generation, valid for
// TokenLifetime.
func (t *Tokens) Issue(user model.UserID, generation int64) (token string, expiresAt time.Time, err error) {
	now := t.now().UTC().Truncate(time.Second)
	expiresAt = now.Add(TokenLifetime)
	claims := claims{RegisteredClaims: jwt.RegisteredClaims{
		Subject:   string(user),
		IssuedAt:  jwt.NewNumericDate(now),
		ExpiresAt: jwt.NewNumericDate(expiresAt),
		ID:        RandomString(22, base62),
	}, Generation: generation}
	token, err = jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString(t.secret)
	if err != nil {
		return "", time.Time{}, fmt.Errorf("auth: sign token: %w", err)
	}
	return token, expiresAt, nil
}

// Parse checks a token's signature (HS256 only: "none" and other algorithms
// are refused), expiry and subject, and returns the user it was issued to
// and their token generation then (whether it is still theirs is the
// caller's to check).
func (t *Tokens) Parse(token string) (model.UserID, int64, error) {
	var claims claims
	_, err := jwt.ParseWithClaims(token, &claims, func(*jwt.Token) (any, error) { return t.secret, nil },
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
		jwt.WithTimeFunc(t.now),
	)
	if err != nil {
		return "", 0, fmt.Errorf("auth: parse token: %w", err)
	}
	if claims.Subject == "" {
		return "", 0, errors.New("auth: parse token: no subject")
	}
	return model.UserID(claims.Subject), claims.Generation, nil
}

package auth

import (
	"context"
	"fmt"
	"unicode/utf8"

	"github.com/alexedwards/argon2id"

	"github.com/tally-analytics/tally/internal/errs"
)

// CheckNewPassword is the rule of every password a user is given — at
// the account's creation, on a change, on a reset, by the command line —
// as the refusal of field, or nil: 8 to 256 characters (a byte that is
// no UTF-8 counts as one), so at most 1 KiB, as each password is hashed in
// memory.
func CheckNewPassword(field, password string) error {
	if n := utf8.RuneCountInString(password); n < 8 || n > 256 {
		return errs.InvalidField(field, "a password must be 8 to 256 characters")
	}
	return nil
}

// passwordParams are OWASP's argon2id recommendation (19 MiB, 2 passes, 1 lane).
var passwordParams = &argon2id.Params{Memory: 19 * 1024, Iterations: 2, Parallelism: 1, SaltLength: 16, KeyLength: 32}

// Passwords hashes and checks passwords with argon2id, bounding how many
// hashes run at once so that a burst of logins cannot exhaust memory.
type Passwords struct {
	slots chan struct{}
	// dummy is compared against when a user does not exist, so that unknown
	// emails take as long as wrong passwords.
	dummy string
}

// NewPasswords allows at most concurrency simultaneous hashes.
func NewPasswords(concurrency int) *Passwords {
	if concurrency < 1 {
		concurrency = 1
	}
	p := &Passwords{slots: make(chan struct{}, concurrency)}
	p.dummy, _ = argon2id.CreateHash("tally-dummy-password", passwordParams)
	return p
}

func (p *Passwords) acquire(ctx context.Context) error {
	select {
	case p.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (p *Passwords) release() { <-p.slots }

// Hash returns the argon2id hash of password in PHC string format.
func (p *Passwords) Hash(ctx context.Context, password string) (string, error) {
	if err := p.acquire(ctx); err != nil {
		return "", err
	}
	defer p.release()
	h, err := argon2id.CreateHash(password, passwordParams)
	if err != nil {
		return "", fmt.Errorf("auth: hash password: %w", err)
	}
	return h, nil
}

// Check reports whether password matches hash (constant time). An empty hash
// (no such user) is compared against a dummy so the timing does not tell.
// A user's password is checked through PasswordCheck, which bounds the
// wrong ones; this is for other passwords (a shared link's).
func (p *Passwords) Check(ctx context.Context, password, hash string) (bool, error) {
	if err := p.acquire(ctx); err != nil {
		return false, err
	}
	defer p.release()
	if hash == "" {
		_, _ = argon2id.ComparePasswordAndHash(password, p.dummy)
		return false, nil
	}
	ok, err := argon2id.ComparePasswordAndHash(password, hash)
	if err != nil {
		return false, fmt.Errorf("auth: check password: %w", err)
	}
	return ok, nil
}

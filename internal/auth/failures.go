package auth

import (
	"context"
	"encoding/hex"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/outage"
	"github.com/tally-analytics/tally/internal/ratelimit"
)

// The bound on an account's wrong passwords, whoever sends them and from
// wherever, wherever the password is asked: at login, and when a signed-in
// user gives theirs again (a change of password, turning two-factor
// authentication on or off). The login limits (httpapi.LoginLimits) count
// per client address, so without it many addresses could guess one
// account's password without end; nor could a stolen session or login
// token guess it by the forms that ask for it again. It counts failures
// only, and only those the login limits let through (at most loginAttempts
// per address in 15 minutes), so that keeping an account at its bound
// takes wrong passwords from many addresses at once, and keeps the owner's
// password refused for no longer than the window after they stop.
// Sessions and tokens already issued stay; a new password (a reset, the
// operator's set-password) starts a bound of its own.

// FailedPasswordsWindow is the window of the bound on wrong passwords.
const FailedPasswordsWindow = 5 * time.Minute

// FailedPasswords is the bound on an account's wrong passwords: three times
// the login attempts one address may make in 15 minutes, in any 5 minutes
// (30 by default; nine times the rate of one email and address).
func FailedPasswords(loginAttempts int) ratelimit.Bound {
	return ratelimit.Bound{N: 3 * loginAttempts, Window: FailedPasswordsWindow}
}

// Attempts counts the failures of a key across every server (see
// ratelimit.Attempts): an attempt is counted as a failure before its
// outcome is known, and taken back when it succeeded.
type Attempts interface {
	Begin(ctx context.Context, key string, b ratelimit.Bound, now time.Time) (ratelimit.Attempt, time.Duration, error)
	Succeeded(ctx context.Context, at ratelimit.Attempt) error
}

// PasswordCheck checks users' passwords within each account's bound on
// wrong ones (see FailedPasswords): every check of a user's password, at
// login (Service) and when a signed-in user gives it again (Confirm), goes
// through the one PasswordCheck the services share.
type PasswordCheck struct {
	hasher *Passwords
	now    func() time.Time
	// failures count the wrong passwords, bound to bound (nil: unbounded);
	// down logs while they cannot be counted
	failures Attempts
	bound    ratelimit.Bound
	down     *outage.Reporter
}

// NewPasswordCheck checks passwords with hasher, bounding each account's
// wrong ones to b, counted in failures. Without failures (nil: the
// operator's command line, which asks for no password) they are not
// bounded.
func NewPasswordCheck(hasher *Passwords, failures Attempts, b ratelimit.Bound, now func() time.Time, log *slog.Logger) *PasswordCheck {
	return &PasswordCheck{hasher: hasher, now: now, failures: failures, bound: b,
		down: outage.New(log, "auth: Redis unavailable; failed password checks are not bounded per account", 0)}
}

// failuresKey is whose wrong passwords an attempt counts with: the user's
// under their current password (the token generation moves on with each
// new one), or an email no account has, digested, so that an unknown email
// is bounded as a known one is and a refusal tells nothing.
func failuresKey(user model.User, email string) string {
	if user.ID != "" {
		return "password:" + string(user.ID) + ":" + strconv.FormatInt(user.TokenGeneration, 10)
	}
	return "password:email:" + hex.EncodeToString(HashKey(strings.ToLower(strings.TrimSpace(email)))[:12])
}

// Check checks password against user's hash within the account's bound on
// wrong passwords (email names the account when user is none: an email no
// account has): past it, the password is refused unchecked, a right one
// too. A right password is not counted, but wipes none of the wrong ones.
// When the bound cannot be kept (Redis does not answer), the password is
// checked without it, as the login limits let requests pass then.
func (c *PasswordCheck) Check(ctx context.Context, user model.User, email, password string) (bool, error) {
	if c.failures == nil {
		return c.hasher.Check(ctx, password, user.PasswordHash)
	}
	at, wait, err := c.failures.Begin(ctx, failuresKey(user, email), c.bound, c.now())
	if err != nil {
		c.down.Fail(1, err)
		return c.hasher.Check(ctx, password, user.PasswordHash)
	}
	c.down.OK()
	if wait > 0 {
		return false, errTooManyPasswords(c.bound, wait)
	}
	ok, err := c.hasher.Check(ctx, password, user.PasswordHash)
	if ok || err != nil {
		// neither a right password nor one that could not be checked is a
		// wrong one; should this fail, it stays counted
		_ = c.failures.Succeeded(context.WithoutCancel(ctx), at)
	}
	return ok, err
}

// Confirm checks the password a signed-in user gives again to confirm what
// they do (a change of password, turning two-factor authentication on or
// off), within the account's bound as at login: a wrong one is the refusal
// of field.
func (c *PasswordCheck) Confirm(ctx context.Context, user model.User, password, field string) error {
	ok, err := c.Check(ctx, user, user.Email, password)
	if err != nil {
		return err
	}
	if !ok {
		return errs.InvalidField(field, "wrong password")
	}
	return nil
}

// errTooManyPasswords refuses a password of an account that was sent b.N
// wrong ones in the window; wait is until the first leaves it.
func errTooManyPasswords(b ratelimit.Bound, wait time.Duration) error {
	return &errs.Error{Kind: errs.RateLimited, Code: "too_many_attempts", RetryAfter: wait,
		Message: fmt.Sprintf("too many wrong passwords for this account (%d in %d minutes): no password is accepted for the next %d s",
			b.N, int(b.Window/time.Minute), int((wait+time.Second-1)/time.Second))}
}

package twofactor

import (
	"context"
	"fmt"
	"time"

	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/ratelimit"
)

// The bound on the wrong codes of an account, whoever sends them and from
// wherever: the login limits count per client address, so without it
// someone who has the password could guess codes from many addresses
// without end. A six-digit code is guessed with a chance of 3 in a million
// (the steps before and after the current one are accepted too), so 5
// guesses per 15 minutes, 480 a day, take about 16 months for an even
// chance; the password is needed for every one of them.
const (
	// WrongCodes is how many wrong codes (one-time or recovery codes) an
	// account may be sent in any WrongCodesWindow; past them every code
	// is refused, a right one too, until the first of them is older than
	// the window.
	WrongCodes = 5
	// WrongCodesWindow is the window of WrongCodes.
	WrongCodesWindow = 15 * time.Minute
)

var wrongCodes = ratelimit.Bound{N: WrongCodes, Window: WrongCodesWindow}

// Attempts counts the codes tried for each account, across every server
// (see ratelimit.Attempts): a code is counted as wrong before it is
// checked, and taken back when it was right.
type Attempts interface {
	Begin(ctx context.Context, key string, b ratelimit.Bound, now time.Time) (ratelimit.Attempt, time.Duration, error)
	Succeeded(ctx context.Context, at ratelimit.Attempt) error
}

// WithAttempts bounds the wrong codes of each account: WrongCodes in any
// WrongCodesWindow. A service without it (the operator's command line,
// which checks no code) does not bound them.
func WithAttempts(a Attempts) Option { return func(s *Service) { s.attempts = a } }

// bounded checks a code of user's with check, within the account's bound
// on wrong codes. A right code is not counted, but does not wipe the wrong
// ones before it either: the owner's logins then cannot make room for more
// guesses, and the bound holds whatever the owner does. When the bound
// cannot be kept (Redis does not answer), no code is checked: a second
// factor that could be guessed without end meanwhile would be none.
func (s *Service) bounded(ctx context.Context, user model.UserID, check func() (bool, error)) (bool, error) {
	if s.attempts == nil {
		return check()
	}
	at, wait, err := s.attempts.Begin(ctx, "2fa:"+string(user), wrongCodes, s.now())
	if err != nil {
		return false, errs.StoreDown(err)
	}
	if wait > 0 {
		return false, errTooManyCodes(wait)
	}
	ok, err := check()
	if ok || err != nil {
		// Neither a right code nor one that could not be checked is a
		// wrong one. Should this fail, it stays counted: the bound errs on
		// its own side.
		_ = s.attempts.Succeeded(context.WithoutCancel(ctx), at)
	}
	return ok, err
}

// errTooManyCodes refuses a code of an account that was sent WrongCodes
// wrong ones in the window; wait is until the first of them leaves it.
func errTooManyCodes(wait time.Duration) error {
	return &errs.Error{Kind: errs.RateLimited, Code: "too_many_attempts", RetryAfter: wait,
		Message: fmt.Sprintf("too many wrong codes for this account (%d in %d minutes): no code is accepted for the next %s",
			WrongCodes, int(WrongCodesWindow/time.Minute), Minutes(wait))}
}

// Minutes is a wait in whole minutes, rounded up, as a person reads it.
func Minutes(d time.Duration) string {
	n := int((d + time.Minute - 1) / time.Minute)
	if n <= 1 {
		return "minute"
	}
	return fmt.Sprintf("%d minutes", n)
}

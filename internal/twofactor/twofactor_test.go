package twofactor

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/ratelimit"
)

// A server whose secrets key is its own (development, no
// TALLY_SECRETS_KEY) turns no 2FA on: after a restart the secret could not
// be opened, and its user could not log in. Nothing is stored.
func TestNoTwoFactorWithAKeyOfThisProcess(t *testing.T) {
	s := NewService(nil, nil, time.Now, WithKeyOfThisProcess()) // a nil store: touching it panics
	_, err := s.Begin(context.Background(), "u1", "a password")
	var e *errs.Error
	if !errors.As(err, &e) || e.Kind != errs.Conflict || e.Code != "secrets_key_required" {
		t.Fatalf("Begin: %v, want 409 secrets_key_required", err)
	}
}

// attemptsAt is an Attempts that answers the same for every code: wait,
// or err.
type attemptsAt struct {
	wait time.Duration
	err  error
}

func (a attemptsAt) Begin(context.Context, string, ratelimit.Bound, time.Time) (ratelimit.Attempt, time.Duration, error) {
	return ratelimit.Attempt{}, a.wait, a.err
}

func (a attemptsAt) Succeeded(context.Context, ratelimit.Attempt) error { return nil }

// Past the bound, and while it cannot be kept, no code is checked (the nil
// store would panic): neither a login's nor one for new recovery codes.
func TestCodesRefusedUnchecked(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name     string
		attempts attemptsAt
		kind     errs.Kind
		code     string
		retry    time.Duration
		message  string
	}{
		{"bound reached", attemptsAt{wait: 14*time.Minute + time.Second}, errs.RateLimited, "too_many_attempts", 14*time.Minute + time.Second,
			"too many wrong codes for this account (5 in 15 minutes): no code is accepted for the next 15 minutes"},
		{"last second", attemptsAt{wait: time.Second}, errs.RateLimited, "too_many_attempts", time.Second,
			"too many wrong codes for this account (5 in 15 minutes): no code is accepted for the next minute"},
		{"Redis down", attemptsAt{err: errors.New("connection refused")}, errs.Unavailable, "service_unavailable", 5 * time.Second,
			"a database this request needs is unavailable; retry later"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewService(nil, nil, time.Now, WithAttempts(tt.attempts))
			for what, err := range map[string]error{
				"verify":     s.Verify(ctx, "u1", "123456"),
				"regenerate": second(s.RegenerateRecoveryCodes(ctx, "u1", "123456")),
			} {
				var e *errs.Error
				if !errors.As(err, &e) || e.Kind != tt.kind || e.Code != tt.code || e.RetryAfter != tt.retry || e.Message != tt.message {
					t.Errorf("%s: %#v, want kind %d %s after %v: %q", what, err, tt.kind, tt.code, tt.retry, tt.message)
				}
			}
		})
	}
}

func second[T any](_ T, err error) error { return err }

package twofactor

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/tally-analytics/tally/internal/errs"
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

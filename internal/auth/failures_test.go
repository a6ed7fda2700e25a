package auth_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/ratelimit"
	"github.com/tally-analytics/tally/internal/testenv"
)

// oneUserStore knows one user, whose password and token generation the
// test sets.
type oneUserStore struct{ user model.User }

func (s *oneUserStore) KeyByHash(context.Context, []byte) (model.APIKey, error) {
	return model.APIKey{}, errs.ErrNotFound
}
func (s *oneUserStore) UserByID(context.Context, model.UserID) (model.User, error) {
	return s.user, nil
}
func (s *oneUserStore) UserByEmail(_ context.Context, email string) (model.User, error) {
	if !strings.EqualFold(email, s.user.Email) {
		return model.User{}, errs.ErrNotFound
	}
	return s.user, nil
}
func (s *oneUserStore) TouchKeys(context.Context, map[model.KeyID]time.Time) error { return nil }

type fixedVersion struct{}

func (fixedVersion) Version(context.Context) (int64, error) { return 1, nil }
func (fixedVersion) Bump(context.Context) error             { return nil }

// downAttempts is a limit store that does not answer.
type downAttempts struct{}

func (downAttempts) Begin(context.Context, string, ratelimit.Bound, time.Time) (ratelimit.Attempt, time.Duration, error) {
	return ratelimit.Attempt{}, 0, errors.New("dial tcp: connection refused")
}
func (downAttempts) Succeeded(context.Context, ratelimit.Attempt) error { return nil }

// failuresService is a login service over one user with password right,
// its wrong passwords bounded by attempts to auth.FailedPasswords(2): 6 in
// 5 minutes.
func failuresService(t *testing.T, attempts auth.Attempts, now *time.Time) (*auth.Service, *oneUserStore) {
	t.Helper()
	s, _, store := failuresServices(t, attempts, now)
	return s, store
}

// failuresServices is failuresService and the password check it shares.
func failuresServices(t *testing.T, attempts auth.Attempts, now *time.Time) (*auth.Service, *auth.PasswordCheck, *oneUserStore) {
	t.Helper()
	hasher := auth.NewPasswords(2)
	hash, err := hasher.Hash(context.Background(), "right password")
	if err != nil {
		t.Fatal(err)
	}
	store := &oneUserStore{user: model.User{ID: "u1", Email: "owner@example.com", PasswordHash: hash, Plan: model.PlanFree}}
	clock := func() time.Time { return *now }
	check := auth.NewPasswordCheck(hasher, attempts, auth.FailedPasswords(2), clock, testenv.Logger(t))
	s := auth.NewService(store, fixedVersion{}, auth.NewTokens("0123456789abcdef0123456789abcdef", clock), check, "test",
		clock, testenv.Logger(t))
	return s, check, store
}

// An account's wrong passwords are bounded, whoever sends them: past 6 in 5
// minutes, every password is refused unchecked (a right one too) with
// too_many_attempts and the wait, until the first wrong one is 5 minutes
// old. A right password before that is not counted, and wipes nothing.
func TestWrongPasswordsBoundedPerAccount(t *testing.T) {
	rdb, prefix := testenv.Redis(t)
	now := time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)
	t0 := now
	s, _ := failuresService(t, ratelimit.NewAttempts(rdb, prefix), &now)
	ctx := context.Background()
	login := func(at time.Duration, email, password string) error {
		t.Helper()
		now = t0.Add(at)
		_, err := s.Login(ctx, auth.Credentials{Email: email, Password: password})
		return err
	}
	for i := range 5 { // +0 … +4 min
		if err := login(time.Duration(i)*time.Minute, "owner@example.com", "guess"); errCode(err) != "invalid_credentials" {
			t.Fatalf("wrong password %d: %v, want invalid_credentials", i+1, err)
		}
	}
	if err := login(4*time.Minute, "Owner@Example.com", "right password"); err != nil {
		t.Fatalf("the right password with 5 wrong ones: %v", err)
	}
	if err := login(4*time.Minute, "OWNER@example.com", "guess"); errCode(err) != "invalid_credentials" {
		t.Fatalf("the sixth wrong password: %v (the right one was not counted)", err)
	}
	refused := func(at time.Duration, wantWait time.Duration) {
		t.Helper()
		err := login(at, "owner@example.com", "right password")
		var e *errs.Error
		if !errors.As(err, &e) || e.Kind != errs.RateLimited || e.Code != "too_many_attempts" || e.RetryAfter != wantWait {
			t.Fatalf("the right password at +%v: %v, want too_many_attempts with a wait of %v", at, err, wantWait)
		}
	}
	refused(4*time.Minute, time.Minute) // the first (+0) leaves the window at +5 min
	refused(5*time.Minute-time.Second, time.Second)
	if err := login(5*time.Minute, "owner@example.com", "right password"); err != nil {
		t.Errorf("the right password once the first wrong one is 5 minutes old: %v", err)
	}
}

// An email no account has is bounded as an account's is (a refusal tells
// nothing), and a new password starts a bound of its own: the wrong
// passwords before it were guesses at the old one.
func TestWrongPasswordsUnknownEmailAndNewPassword(t *testing.T) {
	rdb, prefix := testenv.Redis(t)
	now := time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)
	s, store := failuresService(t, ratelimit.NewAttempts(rdb, prefix), &now)
	ctx := context.Background()
	for _, email := range []string{"nobody@example.com", "owner@example.com"} {
		for i := range 6 {
			if _, err := s.Login(ctx, auth.Credentials{Email: email, Password: "guess"}); errCode(err) != "invalid_credentials" {
				t.Fatalf("%s, wrong password %d: %v", email, i+1, err)
			}
		}
		if _, err := s.Login(ctx, auth.Credentials{Email: strings.ToUpper(email), Password: "guess"}); errCode(err) != "too_many_attempts" {
			t.Errorf("%s, the seventh: %v, want too_many_attempts", email, err)
		}
	}
	// a password set moves the token generation on
	store.user.TokenGeneration++
	if _, err := s.Login(ctx, auth.Credentials{Email: "owner@example.com", Password: "right password"}); err != nil {
		t.Errorf("the new password: %v", err)
	}
}

// A signed-in user's password given again (Confirm: a change of password,
// turning 2FA on or off) counts against the same bound as a login's: 3
// wrong ones there and 3 at login reach it, and past it the right password
// is refused both ways, with the wait. A wrong one is its field's refusal.
func TestConfirmSharesTheBoundOfLogins(t *testing.T) {
	rdb, prefix := testenv.Redis(t)
	now := time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)
	s, check, store := failuresServices(t, ratelimit.NewAttempts(rdb, prefix), &now)
	ctx := context.Background()
	for i := range 3 {
		err := check.Confirm(ctx, store.user, "guess", "current_password")
		var e *errs.Error
		if !errors.As(err, &e) || e.Kind != errs.Invalid || e.Field != "current_password" {
			t.Fatalf("wrong password %d given again: %v, want a refusal of current_password", i+1, err)
		}
		if _, err := s.Login(ctx, auth.Credentials{Email: "owner@example.com", Password: "guess"}); errCode(err) != "invalid_credentials" {
			t.Fatalf("wrong login %d: %v", i+1, err)
		}
	}
	err := check.Confirm(ctx, store.user, "right password", "current_password")
	var e *errs.Error
	if !errors.As(err, &e) || e.Code != "too_many_attempts" || e.RetryAfter != 5*time.Minute {
		t.Errorf("the right password given again past the bound: %v, want too_many_attempts for 5 minutes", err)
	}
	if _, err := s.Login(ctx, auth.Credentials{Email: "owner@example.com", Password: "right password"}); errCode(err) != "too_many_attempts" {
		t.Errorf("the right login past the bound: %v, want too_many_attempts", err)
	}
	now = now.Add(5 * time.Minute)
	if err := check.Confirm(ctx, store.user, "right password", "current_password"); err != nil {
		t.Errorf("the right password once the wrong ones are 5 minutes old: %v", err)
	}
}

// While the limit store does not answer, passwords are checked as the
// login limits let requests pass then: a login works, a wrong one fails.
func TestWrongPasswordsUnboundedWhileRedisIsDown(t *testing.T) {
	now := time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)
	s, _ := failuresService(t, downAttempts{}, &now)
	ctx := context.Background()
	if _, err := s.Login(ctx, auth.Credentials{Email: "owner@example.com", Password: "right password"}); err != nil {
		t.Errorf("the right password: %v", err)
	}
	if _, err := s.Login(ctx, auth.Credentials{Email: "owner@example.com", Password: "guess"}); errCode(err) != "invalid_credentials" {
		t.Errorf("a wrong password: %v", err)
	}
}

func errCode(err error) string {
	var e *errs.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

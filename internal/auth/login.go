package auth

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/model"
)

// SecondFactor is an account's second factor (two-factor authentication),
// asked at login once the password is right.
type SecondFactor interface {
	// Required reports whether user's logins need it.
	Required(ctx context.Context, user model.UserID) (bool, error)
	// Verify checks and spends code (a one-time code or a recovery code);
	// a wrong one is Unauthenticated, and any one RateLimited once the
	// account has had too many wrong ones.
	Verify(ctx context.Context, user model.UserID, code string) error
}

// Challenges keep the dashboard's logins that wait for their second factor,
// by the hash of their token.
type Challenges interface {
	CreateLoginChallenge(ctx context.Context, tokenHash []byte, user model.UserID, expiresAt time.Time) error
	LoginChallenge(ctx context.Context, tokenHash []byte, now time.Time) (model.UserID, error)
	DeleteLoginChallenge(ctx context.Context, tokenHash []byte) (bool, error)
}

// Option configures a Service.
type Option func(*Service)

// WithSecondFactor makes logins of accounts with two-factor authentication
// ask for their code; the dashboard's wait in challenges meanwhile.
func WithSecondFactor(sf SecondFactor, challenges Challenges) Option {
	return func(s *Service) { s.second, s.challenges = sf, challenges }
}

// ChallengeLifetime is how long a login may wait for its second factor.
const ChallengeLifetime = 5 * time.Minute

// Credentials are what a login presents.
type Credentials struct {
	Email, Password string
	// OTP is the second factor, a one-time code or a recovery code, for
	// an account with two-factor authentication.
	OTP string
}

// errOTPRequired: the password was right, and the account needs its
// second factor too. It says nothing more.
func errOTPRequired() error {
	return errs.E(errs.Unauthenticated, "otp_required", "this account needs a one-time code (otp)")
}

// Login checks credentials and issues a token. A wrong email and a wrong
// password fail the same way, in about the same time; an account with
// two-factor authentication needs its OTP too (otp_required without one,
// invalid_credentials with a wrong one).
func (s *Service) Login(ctx context.Context, c Credentials) (LoginResult, error) {
	user, err := s.checkPassword(ctx, c.Email, c.Password)
	if err != nil {
		return LoginResult{}, err
	}
	required, err := s.secondFactorRequired(ctx, user.ID)
	if err != nil {
		return LoginResult{}, err
	}
	if required {
		if strings.TrimSpace(c.OTP) == "" {
			return LoginResult{}, errOTPRequired()
		}
		if err := s.second.Verify(ctx, user.ID, c.OTP); err != nil {
			return LoginResult{}, err
		}
	}
	token, expires, err := s.tokens.Issue(user.ID, user.TokenGeneration)
	if err != nil {
		return LoginResult{}, err
	}
	return LoginResult{Token: token, User: user, ExpiresAt: expires}, nil
}

// PasswordStep is the dashboard's login after its password: done (User),
// or waiting for the second factor under Challenge, a token for the
// browser to hold (only its hash is kept) until ExpiresAt.
type PasswordStep struct {
	User      model.User
	Challenge string
	ExpiresAt time.Time
}

// BeginLogin checks an email and password for the dashboard: a user
// without two-factor authentication is logged in; one with it gets a
// challenge, which is no login (see FinishLogin).
func (s *Service) BeginLogin(ctx context.Context, email, password string) (PasswordStep, error) {
	user, err := s.checkPassword(ctx, email, password)
	if err != nil {
		return PasswordStep{}, err
	}
	required, err := s.secondFactorRequired(ctx, user.ID)
	if err != nil || !required {
		return PasswordStep{User: user}, err
	}
	token := RandomString(43, base62)
	expires := s.now().Add(ChallengeLifetime)
	if err := s.challenges.CreateLoginChallenge(ctx, HashKey(token), user.ID, expires); err != nil {
		return PasswordStep{}, err
	}
	return PasswordStep{User: user, Challenge: token, ExpiresAt: expires}, nil
}

func errChallengeEnded() error {
	return errs.E(errs.Unauthenticated, "login_expired", "the login has expired; log in again")
}

// Challenged is the user a login challenge waits for (to count its
// attempts against their login limit); login_expired when it is unknown,
// used or older than ChallengeLifetime.
func (s *Service) Challenged(ctx context.Context, challenge string) (model.User, error) {
	if s.challenges == nil || challenge == "" {
		return model.User{}, errChallengeEnded()
	}
	id, err := s.challenges.LoginChallenge(ctx, HashKey(challenge), s.now())
	if err == nil {
		var user model.User
		if user, err = s.store.UserByID(ctx, id); err == nil {
			return user, nil
		}
	}
	if errors.Is(err, errs.ErrNotFound) {
		return model.User{}, errChallengeEnded()
	}
	return model.User{}, err
}

// FinishLogin checks the second factor of a challenged login and ends the
// challenge: the login is the caller's to start. A wrong code leaves the
// challenge to try again (within the login limit, and the account's bound
// on wrong codes).
func (s *Service) FinishLogin(ctx context.Context, challenge, code string) (model.User, error) {
	user, err := s.Challenged(ctx, challenge)
	if err != nil {
		return model.User{}, err
	}
	if strings.TrimSpace(code) == "" {
		return model.User{}, errs.InvalidField("code", "enter the code")
	}
	if err := s.second.Verify(ctx, user.ID, code); err != nil {
		return model.User{}, err
	}
	if ended, err := s.challenges.DeleteLoginChallenge(ctx, HashKey(challenge)); err != nil || !ended {
		if err == nil { // finished by another request meanwhile: one login per challenge
			err = errChallengeEnded()
		}
		return model.User{}, err
	}
	return user, nil
}

// checkPassword finds the user of email when password is theirs, within
// the account's bound on wrong passwords (see FailedPasswords).
func (s *Service) checkPassword(ctx context.Context, email, password string) (model.User, error) {
	if strings.TrimSpace(email) == "" {
		return model.User{}, errs.InvalidField("email", "email is required")
	}
	if password == "" {
		return model.User{}, errs.InvalidField("password", "password is required")
	}
	user, err := s.store.UserByEmail(ctx, strings.TrimSpace(email))
	// an email that is not text (a NUL, bad UTF-8) names nobody, like an unknown one
	if err != nil && !errors.Is(err, errs.ErrNotFound) && errs.KindOf(err) != errs.Invalid {
		return model.User{}, errs.E(errs.Unavailable, "service_unavailable", "login is unavailable right now").Wrap(err)
	}
	ok, err := s.passwords.Check(ctx, user, email, password)
	if err != nil {
		return model.User{}, err
	}
	if !ok {
		return model.User{}, errs.E(errs.Unauthenticated, "invalid_credentials", "wrong email or password")
	}
	return user, nil
}

func (s *Service) secondFactorRequired(ctx context.Context, user model.UserID) (bool, error) {
	if s.second == nil {
		return false, nil
	}
	on, err := s.second.Required(ctx, user)
	if err != nil {
		return false, errs.E(errs.Unavailable, "service_unavailable", "login is unavailable right now").Wrap(err)
	}
	return on, nil
}

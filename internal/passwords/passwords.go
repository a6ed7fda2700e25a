// Package passwords changes and resets users' passwords: a user changes
// theirs with the current one (the dashboard's Security page, or the API
// with a login token), one who forgot it gets a link by email (when the
// server sends email), and an operator sets one from the command line.
//
// Every new password follows the rule of account creation
// (auth.CheckNewPassword). Setting one ends the user's logins: their
// dashboard sessions (but the one that changed it, on the Security page),
// the logins waiting for their second step, their reset link, and every
// login token (the user's token generation moves on; see auth). API keys
// stay: they are credentials of their own, each revoked on its own.
// Two-factor authentication stays on.
package passwords

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"time"

	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/model"
)

// Store keeps users, their passwords and their reset links (see pgstore).
type Store interface {
	UserByID(ctx context.Context, id model.UserID) (model.User, error)
	UserByEmail(ctx context.Context, email string) (model.User, error)
	SetPassword(ctx context.Context, user model.UserID, hash string, keep []byte) (model.User, error)
	CreatePasswordReset(ctx context.Context, user model.UserID, tokenHash []byte, now, expiresAt time.Time) error
	PasswordReset(ctx context.Context, tokenHash []byte, now time.Time) (model.User, error)
	ResetPassword(ctx context.Context, tokenHash []byte, hash string, now time.Time) (model.User, error)
}

// Service holds the rules of changing and resetting passwords.
type Service struct {
	store  Store
	hasher *auth.Passwords
	// check checks a current password, within the account's bound on wrong
	// passwords
	check *auth.PasswordCheck
	// revs tells every server that logins ended, so that none answers
	// from what it cached before
	revs auth.Revocations
	now  func() time.Time
	log  *slog.Logger
	// tokens issue the login token the API's change answers with (nil: no
	// API change)
	tokens *auth.Tokens
	// second is asked on a reset for an account with two-factor
	// authentication (nil: never)
	second auth.SecondFactor
	mail   Mail
	// queue holds the addresses reset links were asked for, until Run
	// looks them up
	queue chan string
}

// Option configures a Service.
type Option func(*Service)

// WithTokens lets the API's change answer with a new login token.
func WithTokens(t *auth.Tokens) Option { return func(s *Service) { s.tokens = t } }

// WithSecondFactor asks a reset of an account with two-factor
// authentication for its code (or a recovery code), as its login does.
func WithSecondFactor(sf auth.SecondFactor) Option { return func(s *Service) { s.second = sf } }

// WithMail sends reset links (see Mail.Enabled).
func WithMail(m Mail) Option { return func(s *Service) { s.mail = m } }

// NewService makes the passwords service: hasher hashes new passwords,
// check checks current ones; now is the clock reset links expire by.
func NewService(store Store, hasher *auth.Passwords, check *auth.PasswordCheck, revs auth.Revocations, now func() time.Time,
	log *slog.Logger, opts ...Option) *Service {
	s := &Service{store: store, hasher: hasher, check: check, revs: revs, now: now, log: log, queue: make(chan string, queueLength)}
	for _, o := range opts {
		o(s)
	}
	s.mail.PublicURL = strings.TrimSuffix(s.mail.PublicURL, "/")
	return s
}

// Change sets the password of user to next once current is theirs, and
// ends their other logins: every dashboard session but the one whose
// token hashes to keep (nil: none kept), and every login token. A wrong
// current password is a refusal of the field current_password, and counts
// against the account's bound on wrong passwords, as at login.
func (s *Service) Change(ctx context.Context, user model.UserID, current, next string, keep []byte) (model.User, error) {
	if current == "" {
		return model.User{}, errs.InvalidField("current_password", "enter your current password")
	}
	u, err := s.store.UserByID(ctx, user)
	if err != nil {
		return model.User{}, err
	}
	if err := s.check.Confirm(ctx, u, current, "current_password"); err != nil {
		return model.User{}, err
	}
	return s.set(ctx, u.ID, "new_password", next, keep)
}

// ChangeForToken is Change for the holder of a login token: that token
// ends with the user's others, and the answer is a new one (as a login's),
// of the new token generation.
func (s *Service) ChangeForToken(ctx context.Context, user model.UserID, current, next string) (auth.LoginResult, error) {
	if s.tokens == nil {
		return auth.LoginResult{}, errors.New("passwords: no token issuer")
	}
	u, err := s.Change(ctx, user, current, next, nil)
	if err != nil {
		return auth.LoginResult{}, err
	}
	token, expires, err := s.tokens.Issue(u.ID, u.TokenGeneration)
	if err != nil {
		return auth.LoginResult{}, err
	}
	return auth.LoginResult{Token: token, User: u, ExpiresAt: expires}, nil
}

// Set sets the password of the user with email, asking nothing else (the
// operator's command line), and ends every login of theirs. It reports
// the user.
func (s *Service) Set(ctx context.Context, email, next string) (model.User, error) {
	if err := auth.CheckNewPassword("password", next); err != nil {
		return model.User{}, err
	}
	u, err := s.store.UserByEmail(ctx, strings.TrimSpace(email))
	if errors.Is(err, errs.ErrNotFound) {
		return model.User{}, errs.E(errs.NotFound, "user_not_found", "no user with this email").WithField("email")
	}
	if err != nil {
		return model.User{}, err
	}
	return s.set(ctx, u.ID, "password", next, nil)
}

// set gives user the password next (field names it in a refusal) and
// ends their logins but keep's.
func (s *Service) set(ctx context.Context, user model.UserID, field, next string, keep []byte) (model.User, error) {
	if err := auth.CheckNewPassword(field, next); err != nil {
		return model.User{}, err
	}
	hash, err := s.hasher.Hash(ctx, next)
	if err != nil {
		return model.User{}, err
	}
	u, err := s.store.SetPassword(ctx, user, hash, keep)
	if err != nil {
		return model.User{}, err
	}
	s.loggedOut(ctx)
	return u, nil
}

// loggedOut tells every server that a user's logins ended: what they
// cached of the user's login tokens no longer holds. Without Redis the
// change still stands: Postgres announces it to every server too (the
// bump logs its failure), so the caller is not told it failed.
func (s *Service) loggedOut(ctx context.Context) { _ = s.revs.Bump(ctx) }

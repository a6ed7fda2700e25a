package passwords

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/mailer"
	"github.com/tally-analytics/tally/internal/model"
)

const (
	// ResetLifetime is how long a reset link works (once).
	ResetLifetime = time.Hour
	// ResetPath is the dashboard's page of a reset link; the token follows.
	ResetPath = "/login/reset/"
	// queueLength bounds the reset links asked for and not looked up yet.
	// The limits per address and per email keep it short; past it a
	// request is dropped (and logged), not waited for.
	queueLength = 256
	// drainTime is how long a stopping server goes on sending the links
	// asked for before it stopped: someone who asked just before a deploy
	// is not left waiting for a mail that never comes.
	drainTime = 5 * time.Second
)

// Sender delivers a message (the mailer).
type Sender interface {
	Send(ctx context.Context, msg mailer.Message) error
}

// Mail is how reset links are sent.
type Mail struct {
	// Sender sends them; nil: this server sends no email (no
	// TALLY_SMTP_URL), and a forgotten password is the operator's to set.
	Sender Sender
	// From is the messages' From header (TALLY_MAIL_FROM).
	From string
	// PublicURL is the server's address, which the links are of
	// (TALLY_PUBLIC_URL). Without it no link is sent: a link made of a
	// request's Host header would go wherever the asker's request said.
	PublicURL string
}

// Resets reports whether this server sends reset links: it sends email,
// and knows its own address.
func (s *Service) Resets() bool { return s.mail.Sender != nil && s.mail.PublicURL != "" }

// RequestReset asks for a reset link to be sent to email, should it be an
// account's. It returns at once, doing the same whether it is or not: Run
// looks the address up, makes the link and sends it, so that neither the
// answer nor its time tells whether the address has an account.
func (s *Service) RequestReset(email string) {
	if !s.Resets() {
		return
	}
	select {
	case s.queue <- strings.TrimSpace(email):
	default:
		s.log.Warn("password resets: too many requests waiting; one was dropped")
	}
}

// Run sends the reset links asked for, one at a time, until ctx ends; then
// it sends those asked for before, for up to drainTime. Whatever is still
// waiting after that is not sent (whoever asked asks again), and is logged.
func (s *Service) Run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			s.drain(ctx)
			return
		case email := <-s.queue:
			s.sendReset(ctx, email)
		}
	}
}

// drain sends the links still asked for when ctx ended, for up to
// drainTime.
func (s *Service) drain(ctx context.Context) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), drainTime)
	defer cancel()
	for ctx.Err() == nil {
		select {
		case email := <-s.queue:
			s.sendReset(ctx, email)
		default:
			return
		}
	}
	if n := len(s.queue); n > 0 {
		s.log.Info("password resets: stopping; the links still asked for are not sent", "requests", n)
	}
}

// sendReset makes a link for the account of email, if there is one, in
// place of any it had, and mails it there. The logs name the user, never
// the address or the link.
func (s *Service) sendReset(ctx context.Context, email string) {
	u, err := s.store.UserByEmail(ctx, email)
	if errors.Is(err, errs.ErrNotFound) || errs.KindOf(err) == errs.Invalid {
		return // nobody's: nothing to send, and nothing to log
	}
	if err != nil {
		s.failed(ctx, "cannot look an address up; no link sent", "err", err)
		return
	}
	token, hash := auth.NewLinkToken()
	now := s.now()
	if err := s.store.CreatePasswordReset(ctx, u.ID, hash, now, now.Add(ResetLifetime)); err != nil {
		s.failed(ctx, "cannot store a link; none sent", "user", u.ID, "err", err)
		return
	}
	msg, err := resetMessage(s.mail.From, u.Email, s.mail.PublicURL+ResetPath+token)
	if err == nil {
		err = s.mail.Sender.Send(ctx, msg)
	}
	if err != nil {
		step := "compose"
		var me *mailer.Error
		if errors.As(err, &me) {
			step = me.Brief() // the server's reply may name the address
		}
		s.failed(ctx, "a link was not sent", "user", u.ID, "step", step)
		return
	}
	s.log.Info("password resets: a link was sent", "user", u.ID)
}

// failed logs why a link was not sent, unless the server is stopping.
func (s *Service) failed(ctx context.Context, msg string, args ...any) {
	if ctx.Err() == nil {
		s.log.Warn("password resets: "+msg, args...)
	}
}

func errLinkInvalid() error {
	return errs.E(errs.NotFound, "reset_link_invalid", "this link has expired or was used already; ask for a new one")
}

// ResetTarget is the account a reset link works for.
type ResetTarget struct {
	User model.User
	// NeedsCode: the account has two-factor authentication, whose code
	// the reset asks too.
	NeedsCode bool
}

// Target is the account of a reset link while the link works (unused,
// newer than ResetLifetime, the newest of its account);
// reset_link_invalid (404) otherwise, and on a server that sends none.
func (s *Service) Target(ctx context.Context, token string) (ResetTarget, error) {
	if !s.Resets() || !auth.LinkTokenWellFormed(token) {
		return ResetTarget{}, errLinkInvalid()
	}
	u, err := s.store.PasswordReset(ctx, auth.HashKey(token), s.now())
	if errors.Is(err, errs.ErrNotFound) {
		return ResetTarget{}, errLinkInvalid()
	}
	if err != nil {
		return ResetTarget{}, err
	}
	t := ResetTarget{User: u}
	if s.second != nil {
		if t.NeedsCode, err = s.second.Required(ctx, u.ID); err != nil {
			return ResetTarget{}, err
		}
	}
	return t, nil
}

// Reset sets the password of a reset link's account to next and spends
// the link; every session and login token of the account ends. An account
// with two-factor authentication needs its code (a current one-time code
// or a recovery code, counted against the account's bound on wrong codes
// as at login): the link proves only that its holder reads the account's
// email, and the second factor is what guards an account whose email is
// read by someone else. Two-factor authentication stays on, and the next
// login asks for a code again.
func (s *Service) Reset(ctx context.Context, token, next, code string) error {
	t, err := s.Target(ctx, token)
	if err != nil {
		return err
	}
	if err := auth.CheckNewPassword("new_password", next); err != nil {
		return err
	}
	if t.NeedsCode {
		if strings.TrimSpace(code) == "" {
			return errs.InvalidField("code", "enter the code from your authenticator app, or a recovery code")
		}
		if err := s.second.Verify(ctx, t.User.ID, code); err != nil {
			if errs.KindOf(err) == errs.Unauthenticated {
				return errs.InvalidField("code", "that code is not right, or was used already")
			}
			return err
		}
	}
	hash, err := s.hasher.Hash(ctx, next)
	if err != nil {
		return err
	}
	if _, err := s.store.ResetPassword(ctx, auth.HashKey(token), hash, s.now()); err != nil {
		if errors.Is(err, errs.ErrNotFound) { // spent meanwhile, by another request
			return errLinkInvalid()
		}
		return err
	}
	s.loggedOut(ctx)
	return nil
}

// Package twofactor is accounts' second factor: time-based one-time
// passwords (RFC 6238: 30-second steps, 6 digits, HMAC-SHA1, what every
// authenticator app reads) and single-use recovery codes. A user turns it
// on by confirming a code of the new secret, and off with their password
// and a code; login asks it through auth.SecondFactor.
//
// The secret is kept sealed (the store seals it with TALLY_SECRETS_KEY),
// recovery codes only as their SHA-256, and no code is accepted twice: each
// TOTP code only for a time step later than the last one accepted, each
// recovery code once. An account's wrong codes are bounded across servers
// and client addresses (WrongCodes in any WrongCodesWindow, in Redis): the
// login limits count per address, which someone who has the password can
// change at will.
package twofactor

import (
	"bytes"
	"context"
	"encoding/base32"
	"encoding/base64"
	"errors"
	"fmt"
	"image/png"
	"strings"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/hotp"
	"github.com/pquerna/otp/totp"

	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/model"
)

// Store is what two-factor authentication keeps (see pgstore).
type Store interface {
	UserByID(ctx context.Context, id model.UserID) (model.User, error)
	UserByEmail(ctx context.Context, email string) (model.User, error)
	SetPendingTOTP(ctx context.Context, user model.UserID, secret string) error
	TOTP(ctx context.Context, user model.UserID) (model.TOTP, error)
	EnableTOTP(ctx context.Context, user model.UserID, step int64, at time.Time, codeHashes [][]byte) error
	UseTOTPStep(ctx context.Context, user model.UserID, step int64) (bool, error)
	UseRecoveryCode(ctx context.Context, user model.UserID, codeHash []byte) (bool, error)
	ReplaceRecoveryCodes(ctx context.Context, user model.UserID, codeHashes [][]byte) error
	DisableTOTP(ctx context.Context, user model.UserID) (bool, error)
}

const (
	// Period is the length of a time step.
	Period = 30 * time.Second
	// skew is how many steps before and after the current one a code may
	// be of (a phone's clock a little off, a code typed as it changed).
	skew = 1
	// Issuer names tally in authenticator apps.
	Issuer = "tally"
	// RecoveryCodes is how many recovery codes a user gets at a time.
	RecoveryCodes = 10
)

// validateOpts are RFC 6238's defaults, written out: what apps assume.
var validateOpts = hotp.ValidateOpts{Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1}

// Service holds the rules of two-factor authentication.
type Service struct {
	store Store
	// passwords checks the user's password, within the account's bound
	passwords *auth.PasswordCheck
	now       func() time.Time
	// attempts bounds each account's wrong codes (nil: unbounded)
	attempts Attempts
	// keyOfThisProcess: secrets are sealed with a key made up for this
	// process (no TALLY_SECRETS_KEY), which the next one cannot open
	keyOfThisProcess bool
}

// Option configures a Service.
type Option func(*Service)

// WithKeyOfThisProcess tells the service that secrets are sealed with a key
// made up for this process (a development server without
// TALLY_SECRETS_KEY): 2FA is not turned on, since after a restart its
// secret could not be opened and its user could not log in.
func WithKeyOfThisProcess() Option { return func(s *Service) { s.keyOfThisProcess = true } }

// NewService makes the two-factor service; now is the clock codes are of.
func NewService(store Store, passwords *auth.PasswordCheck, now func() time.Time, opts ...Option) *Service {
	s := &Service{store: store, passwords: passwords, now: now}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Status is where a user's two-factor authentication stands.
type Status struct {
	Enabled bool
	// Pending: a secret was made and not confirmed yet.
	Pending bool
	// RecoveryCodes left unused.
	RecoveryCodes int
}

// Status tells whether user's 2FA is on.
func (s *Service) Status(ctx context.Context, user model.UserID) (Status, error) {
	t, err := s.store.TOTP(ctx, user)
	if errors.Is(err, errs.ErrNotFound) {
		return Status{}, nil
	}
	if err != nil {
		return Status{}, err
	}
	return Status{Enabled: t.EnabledAt != nil, Pending: t.EnabledAt == nil, RecoveryCodes: t.RecoveryCodes}, nil
}

// Setup is a secret being set up, as an authenticator app takes it.
type Setup struct {
	// Secret in base32, to type in.
	Secret string
	// URI is the otpauth:// URI the QR code holds.
	URI string
	// QR is the URI's QR code, a PNG as a data: URI.
	QR string
}

// Begin makes a new secret for the user of id to set up (replacing one not
// confirmed), once password is theirs; 409 when 2FA is on already, or when
// the server has no TALLY_SECRETS_KEY.
func (s *Service) Begin(ctx context.Context, id model.UserID, password string) (Setup, error) {
	if s.keyOfThisProcess {
		return Setup{}, errs.E(errs.Conflict, "secrets_key_required", "two-factor authentication needs TALLY_SECRETS_KEY: "+
			"without it, the secret could not be read after a restart and you could not log in")
	}
	user, err := s.checkPassword(ctx, id, password)
	if err != nil {
		return Setup{}, err
	}
	key, err := totp.Generate(totp.GenerateOpts{Issuer: Issuer, AccountName: user.Email, Period: uint(Period / time.Second),
		Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
	if err != nil {
		return Setup{}, fmt.Errorf("twofactor: generate: %w", err)
	}
	err = s.store.SetPendingTOTP(ctx, user.ID, key.Secret())
	if errors.Is(err, errs.ErrConflict) {
		return Setup{}, errs.E(errs.Conflict, "two_factor_enabled", "two-factor authentication is already on")
	}
	if err != nil {
		return Setup{}, err
	}
	return setupOf(key)
}

// Pending is the setup user began and has not confirmed; 404 when there is none.
func (s *Service) Pending(ctx context.Context, user model.User) (Setup, error) {
	t, err := s.store.TOTP(ctx, user.ID)
	if err == nil && t.EnabledAt != nil {
		err = errs.ErrNotFound
	}
	if errors.Is(err, errs.ErrNotFound) {
		return Setup{}, errs.E(errs.NotFound, "not_found", "no two-factor setup is under way")
	}
	if err != nil {
		return Setup{}, err
	}
	raw, err := base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(t.Secret)
	if err != nil {
		return Setup{}, fmt.Errorf("twofactor: stored secret: %w", err)
	}
	key, err := totp.Generate(totp.GenerateOpts{Issuer: Issuer, AccountName: user.Email, Period: uint(Period / time.Second),
		Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1, Secret: raw})
	if err != nil {
		return Setup{}, fmt.Errorf("twofactor: key: %w", err)
	}
	return setupOf(key)
}

func setupOf(key *otp.Key) (Setup, error) {
	img, err := key.Image(240, 240)
	if err != nil {
		return Setup{}, fmt.Errorf("twofactor: qr code: %w", err)
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return Setup{}, fmt.Errorf("twofactor: qr code: %w", err)
	}
	return Setup{Secret: key.Secret(), URI: key.URL(),
		QR: "data:image/png;base64," + base64.StdEncoding.EncodeToString(buf.Bytes())}, nil
}

// wrongCode is a form's refusal of a code.
func wrongCode() error {
	return errs.InvalidField("code", "that code is not right (or was used already); try the next one")
}

// Confirm turns user's 2FA on when code is a current code of the secret
// being set up, and returns the recovery codes, shown this once.
func (s *Service) Confirm(ctx context.Context, user model.UserID, code string) ([]string, error) {
	t, err := s.store.TOTP(ctx, user)
	if errors.Is(err, errs.ErrNotFound) || (err == nil && t.EnabledAt != nil) {
		return nil, errs.E(errs.Conflict, "two_factor_enabled", "two-factor authentication is on already, or not being set up")
	}
	if err != nil {
		return nil, err
	}
	step, ok := s.match(t.Secret, code)
	if !ok {
		return nil, wrongCode()
	}
	codes, hashes := newRecoveryCodes()
	if err := s.store.EnableTOTP(ctx, user, step, s.now(), hashes); err != nil {
		if errors.Is(err, errs.ErrNotFound) { // confirmed meanwhile by another request
			return nil, errs.E(errs.Conflict, "two_factor_enabled", "two-factor authentication is on already")
		}
		return nil, err
	}
	return codes, nil
}

// RegenerateRecoveryCodes replaces user's recovery codes (the old ones stop
// working) when code is a current TOTP code, and returns the new ones. A
// wrong code counts against the account's bound, as at login.
func (s *Service) RegenerateRecoveryCodes(ctx context.Context, user model.UserID, code string) ([]string, error) {
	ok, err := s.bounded(ctx, user, func() (bool, error) { return s.useTOTP(ctx, user, code) })
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, wrongCode()
	}
	codes, hashes := newRecoveryCodes()
	if err := s.store.ReplaceRecoveryCodes(ctx, user, hashes); err != nil {
		return nil, err
	}
	return codes, nil
}

// Disable turns user's 2FA off: it needs their password and a current code
// or a recovery code (a wrong one counts against the account's bound, as
// at login). Sessions and tokens stay valid.
func (s *Service) Disable(ctx context.Context, user model.UserID, password, code string) error {
	if _, err := s.checkPassword(ctx, user, password); err != nil {
		return err
	}
	ok, err := s.use(ctx, user, code)
	if err != nil {
		return err
	}
	if !ok {
		return wrongCode()
	}
	_, err = s.store.DisableTOTP(ctx, user)
	return err
}

// checkPassword is the user of id if password is theirs: turning 2FA on
// and off both ask for it. A wrong one counts against the account's bound
// on wrong passwords, as at login.
func (s *Service) checkPassword(ctx context.Context, id model.UserID, password string) (model.User, error) {
	u, err := s.store.UserByID(ctx, id)
	if err != nil {
		return model.User{}, err
	}
	if err := s.passwords.Confirm(ctx, u, password, "password"); err != nil {
		return model.User{}, err
	}
	return u, nil
}

// DisableByEmail turns off the 2FA of the user with email, with nothing
// else asked: for an operator whose user lost their device and their
// recovery codes. It reports whether 2FA was on.
func (s *Service) DisableByEmail(ctx context.Context, email string) (model.User, bool, error) {
	u, err := s.store.UserByEmail(ctx, strings.TrimSpace(email))
	if errors.Is(err, errs.ErrNotFound) {
		return model.User{}, false, errs.E(errs.NotFound, "user_not_found", "no user with this email").WithField("email")
	}
	if err != nil {
		return model.User{}, false, err
	}
	was, err := s.store.DisableTOTP(ctx, u.ID)
	return u, was, err
}

// Required reports whether user's login needs a second factor.
func (s *Service) Required(ctx context.Context, user model.UserID) (bool, error) {
	st, err := s.Status(ctx, user)
	return st.Enabled, err
}

// Verify checks a login's second factor, a TOTP code or a recovery code,
// and spends it. A wrong one is 401 invalid_credentials; past the
// account's WrongCodes in WrongCodesWindow, every code is 429
// too_many_attempts, unchecked.
func (s *Service) Verify(ctx context.Context, user model.UserID, code string) error {
	ok, err := s.use(ctx, user, code)
	if err != nil {
		return err
	}
	if !ok {
		return errs.E(errs.Unauthenticated, "invalid_credentials", "wrong email, password or code")
	}
	return nil
}

// use spends code, a current TOTP code or a recovery code of user's,
// within the account's bound on wrong codes.
func (s *Service) use(ctx context.Context, user model.UserID, code string) (bool, error) {
	return s.bounded(ctx, user, func() (bool, error) {
		if isTOTPCode(code) {
			return s.useTOTP(ctx, user, code)
		}
		rc, ok := normalizeRecoveryCode(code)
		if !ok {
			return false, nil
		}
		return s.store.UseRecoveryCode(ctx, user, auth.HashKey(rc))
	})
}

// useTOTP spends a current TOTP code of user's, once.
func (s *Service) useTOTP(ctx context.Context, user model.UserID, code string) (bool, error) {
	t, err := s.store.TOTP(ctx, user)
	if errors.Is(err, errs.ErrNotFound) || (err == nil && t.EnabledAt == nil) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	step, ok := s.match(t.Secret, code)
	if !ok || step <= t.LastStep {
		return false, nil
	}
	return s.store.UseTOTPStep(ctx, user, step)
}

// match finds the time step, the current one or one next to it, code is
// the code of.
func (s *Service) match(secret, code string) (int64, bool) {
	code = strings.ReplaceAll(code, " ", "")
	if !isTOTPCode(code) {
		return 0, false
	}
	current := s.now().Unix() / int64(Period/time.Second)
	for step := current - skew; step <= current+skew; step++ {
		if ok, err := hotp.ValidateCustom(code, uint64(step), secret, validateOpts); err == nil && ok {
			return step, true
		}
	}
	return 0, false
}

// Code is secret's code at t (for tests and tools).
func Code(secret string, t time.Time) (string, error) {
	return totp.GenerateCodeCustom(secret, t, totp.ValidateOpts{Period: uint(Period / time.Second), Digits: otp.DigitsSix,
		Algorithm: otp.AlgorithmSHA1})
}

func isTOTPCode(code string) bool {
	code = strings.ReplaceAll(code, " ", "")
	if len(code) != 6 {
		return false
	}
	for _, r := range code {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

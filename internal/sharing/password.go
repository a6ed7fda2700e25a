package sharing

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/model"
)

// A link with a password opens only to a browser that gave it. The server
// keeps no session for that: the browser keeps an Access, a signature of
// the link's id and its password's hash (with an expiry), which only the
// server can make. Changing or removing the password changes the hash
// (argon2id salts each hash anew, the same password too), and a deleted
// link is not found: either way every Access given before stops opening
// the link, on every server, at once.

// AccessLifetime is how long a browser that gave a link's password may
// open the link without giving it again: as long as a dashboard login.
const AccessLifetime = 14 * 24 * time.Hour

// Locked is how a link with a password is answered to a visitor without
// access to it.
func Locked() *errs.Error {
	return errs.E(errs.Unauthenticated, "shared_link_locked", "this shared dashboard asks for its password")
}

// IsLocked reports whether err is Locked's.
func IsLocked(err error) bool {
	var e *errs.Error
	return errors.As(err, &e) && e.Code == "shared_link_locked"
}

// wrongPassword is a password that is not the link's.
func wrongPassword() *errs.Error {
	return errs.E(errs.Unauthenticated, "wrong_password", "wrong password").WithField("password")
}

// hashPassword is the hash a link keeps of password: every password of a
// link follows the rule of accounts' passwords.
func (s *Service) hashPassword(ctx context.Context, password string) (string, error) {
	if err := auth.CheckNewPassword("password", password); err != nil {
		return "", err
	}
	return s.hasher.Hash(ctx, password)
}

// SetPassword gives a link of site a password, or a new one: every browser
// that opened it before must give this one.
func (s *Service) SetPassword(ctx context.Context, p auth.Principal, site model.SiteID, id model.SharedLinkID,
	password string) (model.SharedLink, error) {
	if err := s.manageable(ctx, p, site); err != nil {
		return model.SharedLink{}, err
	}
	hash, err := s.hashPassword(ctx, password)
	if err != nil {
		return model.SharedLink{}, err
	}
	return s.setPasswordHash(ctx, site, id, hash)
}

// RemovePassword opens a link of site to whoever has its URL again. A
// password given to it later voids no less every access given before.
func (s *Service) RemovePassword(ctx context.Context, p auth.Principal, site model.SiteID, id model.SharedLinkID) (model.SharedLink, error) {
	if err := s.manageable(ctx, p, site); err != nil {
		return model.SharedLink{}, err
	}
	return s.setPasswordHash(ctx, site, id, "")
}

func (s *Service) setPasswordHash(ctx context.Context, site model.SiteID, id model.SharedLinkID, hash string) (model.SharedLink, error) {
	l, err := s.store.SetSharedLinkPassword(ctx, site, id, hash)
	if errors.Is(err, errs.ErrNotFound) {
		return model.SharedLink{}, NotFound()
	}
	return l, err
}

// Access is what a browser keeps once it gave a link's password: Value,
// until Expires, opens the link (see Open).
type Access struct {
	Value   string
	Expires time.Time
}

// Unlock checks the password of the link of token and gives the access it
// earns. A link without a password needs none: the Access is empty. A wrong
// password is Unauthenticated, naming the field password.
func (s *Service) Unlock(ctx context.Context, token, password string) (Access, error) {
	o, err := s.find(ctx, token)
	if err != nil || !o.Link.Protected() {
		return Access{}, err
	}
	ok, err := s.hasher.Check(ctx, password, o.Link.PasswordHash)
	if err != nil {
		return Access{}, err
	}
	if !ok {
		return Access{}, wrongPassword()
	}
	expires := s.now().Add(AccessLifetime).Truncate(time.Second)
	return Access{Value: s.sign(o.Link, expires), Expires: expires}, nil
}

// admits reports whether access opens l: always when l has no password,
// else when it is unexpired and signed for l's id and current password.
func (s *Service) admits(l model.SharedLink, access string) bool {
	if !l.Protected() {
		return true
	}
	exp, _, ok := strings.Cut(access, ".")
	unix, err := strconv.ParseInt(exp, 10, 64)
	if !ok || err != nil || !s.now().Before(time.Unix(unix, 0)) {
		return false
	}
	return hmac.Equal([]byte(access), []byte(s.sign(l, time.Unix(unix, 0))))
}

// sign is the access to l until expires: the expiry (Unix seconds), a dot,
// and the HMAC-SHA256 of the link's id, its password's hash and the expiry.
func (s *Service) sign(l model.SharedLink, expires time.Time) string {
	exp := strconv.FormatInt(expires.Unix(), 10)
	m := hmac.New(sha256.New, s.accessKey)
	m.Write([]byte(string(l.ID) + "\x00" + l.PasswordHash + "\x00" + exp))
	return exp + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// accessKey is the key of the access signatures, derived from the server's
// signing secret so that no signature of one use is valid for the other.
func accessKey(secret string) []byte {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte("tally shared link access"))
	return m.Sum(nil)
}

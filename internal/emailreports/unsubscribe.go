package emailreports

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"net/url"

	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/errs"
)

// UnsubscribePath is the path of the reports' unsubscribe links, on the
// public URL. GET shows a page that asks; POST (the page's button, or a
// mail reader's one-click, RFC 8058) removes the recipient.
const UnsubscribePath = "/email-reports/unsubscribe"

// unsubscribeTokenBytes is the randomness of a message's unsubscribe token
// (256 bits): it is the whole of the link's authority, with no login.
const unsubscribeTokenBytes = 32

// newUnsubscribeToken makes the token of one message's unsubscribe link:
// random bytes in base64url without padding (43 characters), and the hash
// the store keeps and looks it up by (auth.HashKey's, as for shared links).
// Each message has its own, so no token is ever read back from the store.
func newUnsubscribeToken() (token string, hash []byte) {
	b := make([]byte, unsubscribeTokenBytes)
	rand.Read(b) //nolint:errcheck // crypto/rand.Read never fails (Go 1.24+)
	token = base64.RawURLEncoding.EncodeToString(b)
	return token, auth.HashKey(token)
}

// unsubscribeTokenWellFormed reports whether s can be a token, so that
// anything else is answered unlooked-up.
func unsubscribeTokenWellFormed(s string) bool {
	if len(s) != base64.RawURLEncoding.EncodedLen(unsubscribeTokenBytes) {
		return false
	}
	_, err := base64.RawURLEncoding.DecodeString(s)
	return err == nil
}

// UnsubscribeURL is the unsubscribe link of token on the server at base
// (the public URL, without a trailing slash).
func UnsubscribeURL(base, token string) string {
	return base + UnsubscribePath + "?" + url.Values{"token": {token}}.Encode()
}

// unsubscribeNotFound answers every token that removes nothing — malformed,
// unknown, forgotten, or its address already removed — alike.
func unsubscribeNotFound() *errs.Error {
	return errs.E(errs.NotFound, "unsubscribe_link_not_found",
		"This link removes no address: it is not valid, or its address was already removed.")
}

// UnsubscribeSite is the domain of the site whose reports the link of token
// stops, for the page that asks before it does. It changes nothing: mail
// scanners open the links of the messages they check.
func (s *Service) UnsubscribeSite(ctx context.Context, token string) (string, error) {
	if !unsubscribeTokenWellFormed(token) {
		return "", unsubscribeNotFound()
	}
	domain, err := s.store.ReportUnsubscribeSite(ctx, auth.HashKey(token))
	if errors.Is(err, errs.ErrNotFound) {
		return "", unsubscribeNotFound()
	}
	return domain, err
}

// Unsubscribe removes the recipient of the message whose link holds token
// (with the record of its deliveries and its other links), and returns the
// domain of the site whose reports it no longer gets. It needs no login:
// the token, sent to that address only, is the recipient's say-so.
func (s *Service) Unsubscribe(ctx context.Context, token string) (string, error) {
	if !unsubscribeTokenWellFormed(token) {
		return "", unsubscribeNotFound()
	}
	domain, err := s.store.UnsubscribeReports(ctx, auth.HashKey(token))
	if errors.Is(err, errs.ErrNotFound) {
		return "", unsubscribeNotFound()
	}
	return domain, err
}

package emailreports

import (
	"context"
	"errors"
	"net/url"

	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/errs"
)

// UnsubscribePath is the path of the reports' unsubscribe links, on the
// public URL. GET shows a page that asks; POST (the page's button, or a
// mail reader's one-click, RFC 8058) removes the recipient.
const UnsubscribePath = "/email-reports/unsubscribe"

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
	return ByUnsubscribeToken(ctx, token, s.store.ReportUnsubscribeSite)
}

// Unsubscribe removes the recipient of the message whose link holds token
// (with the record of its deliveries and its other links), and returns the
// domain of the site whose reports it no longer gets. It needs no login:
// the token, sent to that address only, is the recipient's say-so.
func (s *Service) Unsubscribe(ctx context.Context, token string) (string, error) {
	return ByUnsubscribeToken(ctx, token, s.store.UnsubscribeReports)
}

// ByUnsubscribeToken answers an unsubscribe link of any of a site's
// mailings: find is given the hash of a well-formed token (tokens are
// kept as hashes only) and answers the site's domain, or errs.ErrNotFound.
// Every token that names nothing is the same 404.
func ByUnsubscribeToken(ctx context.Context, token string, find func(context.Context, []byte) (string, error)) (string, error) {
	if !auth.LinkTokenWellFormed(token) {
		return "", unsubscribeNotFound()
	}
	domain, err := find(ctx, auth.HashKey(token))
	if errors.Is(err, errs.ErrNotFound) {
		return "", unsubscribeNotFound()
	}
	return domain, err
}

package spikes

import (
	"context"
	"net/url"

	"github.com/tally-analytics/tally/internal/emailreports"
)

// UnsubscribePath is the path of the notifications' unsubscribe links, on
// the public URL: GET shows a page that asks, POST (its button, or a mail
// reader's one-click, RFC 8058) removes the recipient, as for the email
// reports.
const UnsubscribePath = "/spike-notifications/unsubscribe"

// UnsubscribeURL is the unsubscribe link of token on the server at base
// (the public URL, without a trailing slash).
func UnsubscribeURL(base, token string) string {
	return base + UnsubscribePath + "?" + url.Values{"token": {token}}.Encode()
}

// UnsubscribeSite is the domain of the site whose notifications the link
// of token stops, for the page that asks before it does. It changes
// nothing: mail scanners open the links of the messages they check.
func (s *Service) UnsubscribeSite(ctx context.Context, token string) (string, error) {
	return emailreports.ByUnsubscribeToken(ctx, token, s.store.SpikeUnsubscribeSite)
}

// Unsubscribe removes the recipient of the message whose link holds token
// (with its other links), and returns the domain of the site whose
// notifications it no longer gets. The token, sent to that address only,
// is the recipient's say-so.
func (s *Service) Unsubscribe(ctx context.Context, token string) (string, error) {
	return emailreports.ByUnsubscribeToken(ctx, token, s.store.UnsubscribeSpikes)
}

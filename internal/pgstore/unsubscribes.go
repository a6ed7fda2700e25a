package pgstore

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// mailList names the tables of a kind of mail whose recipients leave it by
// the unsubscribe link of a message: the recipients, and the hashes of the
// messages' tokens (each a recipient's). Email reports and spike
// notifications keep theirs apart (a foreign key names one table), under
// the one rule here.
type mailList struct{ recipients, unsubscribes, name string }

var (
	reportList = mailList{recipients: "report_recipients", unsubscribes: "report_unsubscribes", name: "report"}
	spikeList  = mailList{recipients: "spike_recipients", unsubscribes: "spike_unsubscribes", name: "spike"}
)

// addUnsubscribe keeps the hash of a message's token for its recipient; a
// recipient removed meanwhile is errs.ErrNotFound.
func (s *Store) addUnsubscribe(ctx context.Context, l mailList, recipient string, tokenHash []byte, at time.Time) error {
	_, err := s.pool.Exec(ctx, "INSERT INTO "+l.unsubscribes+" (token_hash, recipient_id, created_at) VALUES ($1, $2, $3)",
		tokenHash, recipient, at)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23503" { // foreign_key_violation
		err = pgx.ErrNoRows
	}
	return translate("pgstore: add "+l.name+" unsubscribe", err)
}

// unsubscribeSite is the domain of the site whose mail the recipient of a
// token gets; an unknown token is errs.ErrNotFound. It changes nothing.
func (s *Store) unsubscribeSite(ctx context.Context, l mailList, tokenHash []byte) (string, error) {
	var domain string
	err := s.pool.QueryRow(ctx, `SELECT s.domain FROM `+l.unsubscribes+` u
		JOIN `+l.recipients+` r ON r.id = u.recipient_id JOIN sites s ON s.id = r.site_id
		WHERE u.token_hash = $1`, tokenHash).Scan(&domain)
	return domain, translate("pgstore: "+l.name+" unsubscribe site", err)
}

// unsubscribe removes the recipient of a token (its tokens, and what else
// hangs on it, go with it) and returns its site's domain; an unknown token,
// or one whose recipient is gone, is errs.ErrNotFound.
func (s *Store) unsubscribe(ctx context.Context, l mailList, tokenHash []byte) (string, error) {
	var domain string
	err := s.pool.QueryRow(ctx, `DELETE FROM `+l.recipients+` r USING `+l.unsubscribes+` u, sites s
		WHERE u.token_hash = $1 AND r.id = u.recipient_id AND s.id = r.site_id
		RETURNING s.domain`, tokenHash).Scan(&domain)
	return domain, translate("pgstore: unsubscribe "+l.name, err)
}

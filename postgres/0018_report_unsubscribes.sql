-- Unsubscribe links of the email reports: each message carries a token of
-- its own (in its List-Unsubscribe header and its Unsubscribe link) that
-- removes its recipient, without a login. Only the SHA-256 of a token is
-- kept, as for shared links: the token is in the message only, so this
-- table names no address and opens nothing. Removing the recipient (by its
-- link, by the site's settings, or with its site) removes its tokens; a
-- token is forgotten with the deliveries of its time.
CREATE TABLE IF NOT EXISTS report_unsubscribes (
    token_hash   bytea PRIMARY KEY,
    recipient_id uuid NOT NULL REFERENCES report_recipients (id) ON DELETE CASCADE,
    created_at   timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS report_unsubscribes_recipient_idx ON report_unsubscribes (recipient_id);
CREATE INDEX IF NOT EXISTS report_unsubscribes_created_idx ON report_unsubscribes (created_at);

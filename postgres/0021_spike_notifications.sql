-- Traffic spike notifications: per site, a threshold of current visitors
-- (the realtime view's count of the last 5 minutes) and up to 10
-- addresses (checked by tally) that are mailed once it is reached. An
-- address is personal data of the site's team: it lives in
-- spike_recipients only, never in ClickHouse or the logs.
CREATE TABLE IF NOT EXISTS spike_notifications (
    site_id      text PRIMARY KEY REFERENCES sites (id) ON DELETE CASCADE,
    -- NULL: turned off. The row stays, with its last notification, so
    -- that turning it off and on again does not cut the quiet period short
    threshold    integer CHECK (threshold >= 1),
    -- the latest notification, by the clock of the server that sent it:
    -- a server takes the right to send one with an UPDATE that sets it
    -- only if it is older than the quiet period, so of several servers
    -- checking at once one sends
    last_sent_at timestamptz,
    updated_at   timestamptz NOT NULL
);

CREATE TABLE IF NOT EXISTS spike_recipients (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    site_id    text NOT NULL REFERENCES spike_notifications (site_id) ON DELETE CASCADE,
    -- lower-cased by tally
    email      text NOT NULL,
    created_at timestamptz NOT NULL,
    UNIQUE (site_id, email)
);

-- Unsubscribe links of the notifications, as report_unsubscribes: a token
-- of its own in each message, kept as its SHA-256 only, that removes its
-- recipient without a login; removing the recipient removes its tokens.
CREATE TABLE IF NOT EXISTS spike_unsubscribes (
    token_hash   bytea PRIMARY KEY,
    recipient_id uuid NOT NULL REFERENCES spike_recipients (id) ON DELETE CASCADE,
    created_at   timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS spike_unsubscribes_recipient_idx ON spike_unsubscribes (recipient_id);
CREATE INDEX IF NOT EXISTS spike_unsubscribes_created_idx ON spike_unsubscribes (created_at);

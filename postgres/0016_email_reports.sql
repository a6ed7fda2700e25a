-- Email reports: per site, up to 10 recipients (checked by tally), each
-- weekly, monthly or both. An email address is personal data of the site's
-- team: it lives in this table only (deliveries point at the recipient, so
-- removing a recipient removes every trace of their address), never in
-- ClickHouse or the logs.
CREATE TABLE IF NOT EXISTS report_recipients (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    site_id    text NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    -- lower-cased by tally
    email      text NOT NULL,
    weekly     boolean NOT NULL,
    monthly    boolean NOT NULL,
    -- by the server's clock: a report is sent for periods due after it
    created_at timestamptz NOT NULL,
    UNIQUE (site_id, email),
    CHECK (weekly OR monthly)
);

-- One row per report a recipient is due: inserted (ON CONFLICT DO NOTHING)
-- before the first attempt, claimed for each attempt (claimed_until), so
-- that one server of many sends it; sent_at once the mail server took it.
-- A failed attempt keeps its error (never a secret) and is tried again on
-- a later pass, up to a bound.
CREATE TABLE IF NOT EXISTS report_deliveries (
    id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    recipient_id  uuid NOT NULL REFERENCES report_recipients (id) ON DELETE CASCADE,
    period_kind   text NOT NULL CHECK (period_kind IN ('weekly', 'monthly')),
    -- the first day of the period, in the site's time zone
    period_start  date NOT NULL,
    attempts      integer NOT NULL DEFAULT 0,
    claimed_until timestamptz,
    sent_at       timestamptz,
    last_error    text,
    UNIQUE (recipient_id, period_kind, period_start)
);
CREATE INDEX IF NOT EXISTS report_deliveries_period_idx ON report_deliveries (period_start);

-- Exchange rates: units of a currency per 1 EUR on a day (the ECB's reference rates).
CREATE TABLE exchange_rates (
    currency char(3) NOT NULL,
    day      date NOT NULL,
    rate     numeric(24, 10) NOT NULL CHECK (rate > 0),
    PRIMARY KEY (currency, day)
);

-- The payments ledger: every payment, refund and failed attempt, from the
-- payments API, the tracker's revenue events and the providers' webhooks.
-- The unique key deduplicates retries, concurrent ones included; the kind is
-- part of it so that a refund carrying its order's id is not a duplicate.
CREATE TABLE payments (
    id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    site_id        text NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    provider       text NOT NULL,
    transaction_id text NOT NULL,
    kind           text NOT NULL CHECK (kind IN ('payment', 'refund', 'failed')),
    -- minor units of currency, always positive (a refund is kind 'refund')
    amount         bigint NOT NULL CHECK (amount > 0),
    currency       char(3) NOT NULL,
    occurred_at    timestamptz NOT NULL,
    -- the provider's id that refunds reference, and the payment a refund undoes
    payment_ref    text,
    refund_of      uuid REFERENCES payments (id) ON DELETE SET NULL,
    -- tally's 64-bit visitor id (two's-complement bit pattern); NULL = unknown
    visitor_id     bigint,
    event_name     text NOT NULL,
    metadata       jsonb,
    -- conversion into the site's base currency; base_amount is NULL while
    -- the day's rate is missing (the payment waits, it is never dropped)
    base_currency  char(3) NOT NULL,
    base_amount    bigint,
    fx_rate        numeric(30, 12),
    fx_day         date,
    -- last and first touch (JSON), NULL when unattributed
    attribution    jsonb,
    -- when the row reached ClickHouse
    exported_at    timestamptz,
    created_at     timestamptz NOT NULL DEFAULT now(),
    UNIQUE (site_id, provider, transaction_id, kind)
);
CREATE INDEX payments_unexported_idx ON payments (created_at) WHERE exported_at IS NULL AND kind <> 'failed';
CREATE INDEX payments_ref_idx ON payments (site_id, provider, payment_ref);

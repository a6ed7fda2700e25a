-- Which visitor opened a payment provider's checkout session: the tracker
-- sends session_id / checkout_session_id from the page URL, and a later
-- payment webhook carrying that id is attributed to the visitor.
CREATE TABLE checkout_sessions (
    site_id             text NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    checkout_session_id text NOT NULL,
    -- tally's 64-bit visitor id (stored as its two's-complement bit pattern)
    visitor_id          bigint NOT NULL,
    created_at          timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (site_id, checkout_session_id)
);
CREATE INDEX checkout_sessions_created_idx ON checkout_sessions (created_at);

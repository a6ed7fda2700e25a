-- Funnels: an ordered list of 2 to 8 steps (a pageview of a path pattern, or
-- a custom event with props), and the window in which a visitor must go from
-- the first to the last. The steps are one JSON array: they are read and
-- written whole, never queried one by one.
CREATE TABLE funnels (
    id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    site_id        text NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    name           text NOT NULL,
    steps          jsonb NOT NULL CHECK (jsonb_typeof(steps) = 'array'),
    window_seconds integer NOT NULL CHECK (window_seconds BETWEEN 1 AND 2592000),
    created_at     timestamptz NOT NULL DEFAULT now(),
    updated_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX funnels_site_idx ON funnels (site_id, created_at);

-- Sites deleted through the API: their rows in ClickHouse and their Redis
-- state are removed in the background, in passes until the request is old
-- enough that no event accepted before the deletion can still arrive.
CREATE TABLE site_deletions (
    site_id      text PRIMARY KEY,
    requested_at timestamptz NOT NULL DEFAULT now(),
    done_at      timestamptz
);

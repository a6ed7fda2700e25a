-- Shared links: a read-only dashboard of one site, opened by a secret URL
-- without a login. Only the SHA-256 of the link's token is kept (as for API
-- keys): the URL is shown once, at creation. Deleting the site deletes its
-- links; a deleted link's URL opens nothing at once.
CREATE TABLE IF NOT EXISTS shared_links (
    id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    site_id      text NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    label        text NOT NULL,
    token_hash   bytea NOT NULL UNIQUE,
    show_revenue boolean NOT NULL DEFAULT false,
    -- who made it; the link outlives its maker's account or membership
    created_by   uuid REFERENCES users (id) ON DELETE SET NULL,
    created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS shared_links_site_idx ON shared_links (site_id, created_at);

-- Goals: a pageview of a path (with * and ** wildcards) or a custom event.
CREATE TABLE goals (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    site_id    text NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    name       text NOT NULL,
    type       text NOT NULL CHECK (type IN ('pageview', 'custom_event')),
    page_path  text,
    event_name text,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    CHECK ((type = 'pageview' AND page_path IS NOT NULL AND event_name IS NULL)
        OR (type = 'custom_event' AND event_name IS NOT NULL AND page_path IS NULL))
);
-- one goal per target and site
CREATE UNIQUE INDEX goals_target_key ON goals (site_id, type, coalesce(page_path, ''), coalesce(event_name, ''));

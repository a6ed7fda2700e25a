-- Segments: a site's saved sets of dashboard filters, each named (1 to 64
-- characters, unique per site whatever the case: "Germany" and "germany"
-- would be one entry twice in the picker). The filters are one JSON object
-- of the stats API's filter parameters and their values, as tally
-- validated and normalised them ({"country": "DE", "props[plan]": "pro"}):
-- read and written whole, never queried. At most 50 a site (checked by
-- tally, the site's row locked). Deleting the site deletes its segments.
CREATE TABLE IF NOT EXISTS segments (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    site_id    text NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    name       text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 64),
    filters    jsonb NOT NULL CHECK (jsonb_typeof(filters) = 'object'),
    -- who made it; the segment outlives its maker's account or membership
    created_by uuid REFERENCES users (id) ON DELETE SET NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX IF NOT EXISTS segments_site_name_idx ON segments (site_id, lower(name));

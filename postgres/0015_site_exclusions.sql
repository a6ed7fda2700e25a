-- A site's exclusions: traffic its owner keeps out of the statistics (their
-- office's addresses, admin pages, staging hosts). Events that match are
-- answered as if stored and only counted. At most 30 entries a list, checked
-- by tally when they are set. The sites trigger of 0010 announces a change
-- to every server, whose cached sites (and their exclusions) then reload.
ALTER TABLE sites ADD COLUMN IF NOT EXISTS excluded_pages text[] NOT NULL DEFAULT '{}';
ALTER TABLE sites ADD COLUMN IF NOT EXISTS excluded_addresses text[] NOT NULL DEFAULT '{}';
ALTER TABLE sites ADD COLUMN IF NOT EXISTS excluded_hosts text[] NOT NULL DEFAULT '{}';

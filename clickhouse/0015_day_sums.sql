-- The breakdowns kept by visitor blocks (sources, devices, countries,
-- locations) count their visitors from the blocks only. Their day tables
-- kept a uniqCombined(17) state of each day's visitors besides the sums:
-- the same visitors as the day's block of level 0 (0010), built again by
-- every insert of session rows and merged again by every merge of a day's
-- part. On ClickHouse alone, 100 inserts of 14,000 session rows took the
-- views 5 s of CPU more with those states than without (of 22–31 s that
-- the session views cost). Each day table loses its visitors column: its
-- view is dropped, the column too, and the view created again without it
-- (internal/stats/rollups.go declares them; a test holds this file to the
-- declarations). Then the sums are built again from the session rows, as
-- every rollup's migration does. As for 0008, migrate before tally servers
-- start: session rows inserted between the drop of a view and its creation
-- would miss the sums until the backfill.

DROP TABLE IF EXISTS {{local "source_days_mv"}} {{onCluster}};
{{alter "source_days" "DROP COLUMN visitors"}};
CREATE MATERIALIZED VIEW IF NOT EXISTS {{local "source_days_mv"}} {{onCluster}} TO {{local "source_days"}} AS
SELECT site_key, toDateTime(intDiv(toUInt32(started_at), 86400) * 86400) AS started_at, referrer_source, source_type, sum(sign) AS sessions, sum(sign * is_bounce) AS bounces, sum(sign * duration) AS duration_sum, sum(sign * pageviews) AS pageview_count
FROM {{local "sessions"}}
GROUP BY site_key, started_at, referrer_source, source_type;
TRUNCATE TABLE {{local "source_days"}} {{onCluster}};
INSERT INTO source_days (site_key, started_at, referrer_source, source_type, sessions, bounces, duration_sum, pageview_count)
SELECT site_key, toDateTime(intDiv(toUInt32(started_at), 86400) * 86400) AS started_at, referrer_source, source_type, sum(sign) AS sessions, sum(sign * is_bounce) AS bounces, sum(sign * duration) AS duration_sum, sum(sign * pageviews) AS pageview_count
FROM sessions
GROUP BY site_key, started_at, referrer_source, source_type;

DROP TABLE IF EXISTS {{local "device_days_mv"}} {{onCluster}};
{{alter "device_days" "DROP COLUMN visitors"}};
CREATE MATERIALIZED VIEW IF NOT EXISTS {{local "device_days_mv"}} {{onCluster}} TO {{local "device_days"}} AS
SELECT site_key, toDateTime(intDiv(toUInt32(started_at), 86400) * 86400) AS started_at, device, browser, os, sum(sign) AS sessions, sum(sign * is_bounce) AS bounces, sum(sign * duration) AS duration_sum, sum(sign * pageviews) AS pageview_count
FROM {{local "sessions"}}
GROUP BY site_key, started_at, device, browser, os;
TRUNCATE TABLE {{local "device_days"}} {{onCluster}};
INSERT INTO device_days (site_key, started_at, device, browser, os, sessions, bounces, duration_sum, pageview_count)
SELECT site_key, toDateTime(intDiv(toUInt32(started_at), 86400) * 86400) AS started_at, device, browser, os, sum(sign) AS sessions, sum(sign * is_bounce) AS bounces, sum(sign * duration) AS duration_sum, sum(sign * pageviews) AS pageview_count
FROM sessions
GROUP BY site_key, started_at, device, browser, os;

DROP TABLE IF EXISTS {{local "country_days_mv"}} {{onCluster}};
{{alter "country_days" "DROP COLUMN visitors"}};
CREATE MATERIALIZED VIEW IF NOT EXISTS {{local "country_days_mv"}} {{onCluster}} TO {{local "country_days"}} AS
SELECT site_key, toDateTime(intDiv(toUInt32(started_at), 86400) * 86400) AS started_at, country_code, sum(sign) AS sessions, sum(sign * is_bounce) AS bounces, sum(sign * duration) AS duration_sum, sum(sign * pageviews) AS pageview_count
FROM {{local "sessions"}}
GROUP BY site_key, started_at, country_code;
TRUNCATE TABLE {{local "country_days"}} {{onCluster}};
INSERT INTO country_days (site_key, started_at, country_code, sessions, bounces, duration_sum, pageview_count)
SELECT site_key, toDateTime(intDiv(toUInt32(started_at), 86400) * 86400) AS started_at, country_code, sum(sign) AS sessions, sum(sign * is_bounce) AS bounces, sum(sign * duration) AS duration_sum, sum(sign * pageviews) AS pageview_count
FROM sessions
GROUP BY site_key, started_at, country_code;

DROP TABLE IF EXISTS {{local "location_days_mv"}} {{onCluster}};
{{alter "location_days" "DROP COLUMN visitors"}};
CREATE MATERIALIZED VIEW IF NOT EXISTS {{local "location_days_mv"}} {{onCluster}} TO {{local "location_days"}} AS
SELECT site_key, toDateTime(intDiv(toUInt32(started_at), 86400) * 86400) AS started_at, country_code, region_code, region_name, city, sum(sign) AS sessions, sum(sign * is_bounce) AS bounces, sum(sign * duration) AS duration_sum, sum(sign * pageviews) AS pageview_count
FROM {{local "sessions"}}
GROUP BY site_key, started_at, country_code, region_code, region_name, city;
TRUNCATE TABLE {{local "location_days"}} {{onCluster}};
INSERT INTO location_days (site_key, started_at, country_code, region_code, region_name, city, sessions, bounces, duration_sum, pageview_count)
SELECT site_key, toDateTime(intDiv(toUInt32(started_at), 86400) * 86400) AS started_at, country_code, region_code, region_name, city, sum(sign) AS sessions, sum(sign * is_bounce) AS bounces, sum(sign * duration) AS duration_sum, sum(sign * pageviews) AS pageview_count
FROM sessions
GROUP BY site_key, started_at, country_code, region_code, region_name, city;

-- Visitors by country in a rollup of their own. The countries report read
-- location_days and its visitor blocks, whose rows are places (country,
-- region, city): a block's visitors of a country were the union of one
-- state a place, and a large state (uniqCombined(17) keeps 2^17 registers,
-- 82 KB) costs about half a millisecond to read and merge. On 10M demo
-- events a block holds 28 places and 15 countries, and a range of 30 days
-- covers 6 to 12 blocks by how its days fall on the blocks' (dyadic): the
-- countries report took 124–160 ms over 30 days, and 106 ms from
-- country_days with 12 blocks. Regions and cities still read location_days.
-- The sums, the view and the blocks are those of the other breakdowns
-- (internal/stats/rollups.go declares them; a test holds this file to the
-- declarations). As for 0008, migrate before tally servers start; the
-- backfill reads the sessions once for the sums and once a block level.

CREATE TABLE IF NOT EXISTS {{local "country_days"}} {{onCluster}} (
    site_key       UInt64,
    started_at     DateTime,
    country_code   String,
    sessions       Int64,
    bounces        Int64,
    duration_sum   Int64,
    pageview_count Int64,
    visitors       AggregateFunction(uniqCombined(17), UInt64)
) ENGINE = {{engine "country_days" "SummingMergeTree"}}
PARTITION BY toYYYYMM(started_at)
ORDER BY (site_key, started_at, country_code)
SETTINGS index_granularity = 256;

{{distributed "country_days" "rand()"}};

CREATE MATERIALIZED VIEW IF NOT EXISTS {{local "country_days_mv"}} {{onCluster}} TO {{local "country_days"}} AS
SELECT site_key, toDateTime(intDiv(toUInt32(started_at), 86400) * 86400) AS started_at, country_code, sum(sign) AS sessions, sum(sign * is_bounce) AS bounces, sum(sign * duration) AS duration_sum, sum(sign * pageviews) AS pageview_count, uniqCombinedState(17)(visitor_id) AS visitors
FROM {{local "sessions"}}
GROUP BY site_key, started_at, country_code;
TRUNCATE TABLE {{local "country_days"}} {{onCluster}};
INSERT INTO country_days (site_key, started_at, country_code, sessions, bounces, duration_sum, pageview_count, visitors)
SELECT site_key, toDateTime(intDiv(toUInt32(started_at), 86400) * 86400) AS started_at, country_code, sum(sign) AS sessions, sum(sign * is_bounce) AS bounces, sum(sign * duration) AS duration_sum, sum(sign * pageviews) AS pageview_count, uniqCombinedState(17)(visitor_id) AS visitors
FROM sessions
GROUP BY site_key, started_at, country_code;

CREATE TABLE IF NOT EXISTS {{local "country_days_blocks"}} {{onCluster}} (
    site_key     UInt64,
    level        UInt8,
    started_at   DateTime,
    country_code String,
    visitors     AggregateFunction(uniqCombined(17), UInt64)
) ENGINE = {{engine "country_days_blocks" "AggregatingMergeTree"}}
PARTITION BY toYYYYMM(started_at)
ORDER BY (site_key, level, started_at, country_code)
SETTINGS index_granularity = 16;

{{distributed "country_days_blocks" "rand()"}};

CREATE MATERIALIZED VIEW IF NOT EXISTS {{local "country_days_blocks_mv"}} {{onCluster}} TO {{local "country_days_blocks"}} AS
SELECT site_key, arrayJoin([toUInt8(4), toUInt8(2), toUInt8(0)]) AS level, toDateTime(intDiv(toUInt32(started_at), bitShiftLeft(toUInt32(86400), level)) * bitShiftLeft(toUInt32(86400), level)) AS started_at,
       country_code, uniqCombinedState(17)(visitor_id) AS visitors
FROM {{local "sessions"}} WHERE sign = 1
GROUP BY site_key, level, started_at, country_code;
TRUNCATE TABLE {{local "country_days_blocks"}} {{onCluster}};
INSERT INTO country_days_blocks (site_key, level, started_at, country_code, visitors)
SELECT site_key, toUInt8(4) AS level, toDateTime(intDiv(toUInt32(started_at), 1382400) * 1382400) AS started_at, country_code, uniqCombinedState(17)(visitor_id) AS visitors
FROM sessions
GROUP BY site_key, started_at, country_code;
INSERT INTO country_days_blocks (site_key, level, started_at, country_code, visitors)
SELECT site_key, toUInt8(2) AS level, toDateTime(intDiv(toUInt32(started_at), 345600) * 345600) AS started_at, country_code, uniqCombinedState(17)(visitor_id) AS visitors
FROM sessions
GROUP BY site_key, started_at, country_code;
INSERT INTO country_days_blocks (site_key, level, started_at, country_code, visitors)
SELECT site_key, toUInt8(0) AS level, toDateTime(intDiv(toUInt32(started_at), 86400) * 86400) AS started_at, country_code, uniqCombinedState(17)(visitor_id) AS visitors
FROM sessions
GROUP BY site_key, started_at, country_code;

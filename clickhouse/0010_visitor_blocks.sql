-- Visitor blocks: the visitors of the breakdowns with many large values
-- (sources, devices, locations: the day rollups of 0008) kept again by
-- blocks of 1, 4 and 16 UTC days — 2^level days (level 0, 2, 4) from a day
-- whose number since 1970-01-01 2^level divides — so that a range's
-- visitors merge a few states a value instead of one a day
-- (internal/stats/rollups.go declares them and plans the reads; a test
-- holds this file to the declarations). The sums stay in the day rollups.
--
-- One view a level, each a plain GROUP BY: a single view for every level
-- (ARRAY JOIN) copies each inserted block once a level, which cost inserts
-- far more. Visitor states are unions: inserting the same visitors again
-- changes nothing, so `tally rollups rebuild` mends blocks by inserting,
-- without deleting. Granules of 16 rows: a query reads a few blocks of a
-- site, and ClickHouse reads a column by whole granules, so small granules
-- keep it from deserialising the states of neighbouring blocks.

CREATE TABLE IF NOT EXISTS source_days_blocks (
    site_key        UInt64,
    level           UInt8,
    started_at      DateTime,
    referrer_source String,
    source_type     String,
    visitors        AggregateFunction(uniqCombined(17), UInt64)
) ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(started_at)
ORDER BY (site_key, level, started_at, referrer_source, source_type)
SETTINGS index_granularity = 16;

CREATE TABLE IF NOT EXISTS device_days_blocks (
    site_key   UInt64,
    level      UInt8,
    started_at DateTime,
    device     String,
    browser    String,
    os         String,
    visitors   AggregateFunction(uniqCombined(17), UInt64)
) ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(started_at)
ORDER BY (site_key, level, started_at, device, browser, os)
SETTINGS index_granularity = 16;

CREATE TABLE IF NOT EXISTS location_days_blocks (
    site_key     UInt64,
    level        UInt8,
    started_at   DateTime,
    country_code String,
    region_code  String,
    region_name  String,
    city         String,
    visitors     AggregateFunction(uniqCombined(17), UInt64)
) ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(started_at)
ORDER BY (site_key, level, started_at, country_code, region_code, region_name, city)
SETTINGS index_granularity = 16;

-- The views, then the backfill of what the raw tables held before them
-- (emptying first makes a re-run rebuild rather than double; as for 0008,
-- migrate before tally servers start).

CREATE MATERIALIZED VIEW IF NOT EXISTS source_days_blocks_4_mv TO source_days_blocks AS
SELECT site_key, toUInt8(4) AS level, toDateTime(intDiv(toUInt32(started_at), 1382400) * 1382400) AS started_at, referrer_source, source_type, uniqCombinedState(17)(visitor_id) AS visitors
FROM sessions
GROUP BY site_key, started_at, referrer_source, source_type;
CREATE MATERIALIZED VIEW IF NOT EXISTS source_days_blocks_2_mv TO source_days_blocks AS
SELECT site_key, toUInt8(2) AS level, toDateTime(intDiv(toUInt32(started_at), 345600) * 345600) AS started_at, referrer_source, source_type, uniqCombinedState(17)(visitor_id) AS visitors
FROM sessions
GROUP BY site_key, started_at, referrer_source, source_type;
CREATE MATERIALIZED VIEW IF NOT EXISTS source_days_blocks_0_mv TO source_days_blocks AS
SELECT site_key, toUInt8(0) AS level, toDateTime(intDiv(toUInt32(started_at), 86400) * 86400) AS started_at, referrer_source, source_type, uniqCombinedState(17)(visitor_id) AS visitors
FROM sessions
GROUP BY site_key, started_at, referrer_source, source_type;
TRUNCATE TABLE source_days_blocks;
INSERT INTO source_days_blocks (site_key, level, started_at, referrer_source, source_type, visitors)
SELECT site_key, toUInt8(4) AS level, toDateTime(intDiv(toUInt32(started_at), 1382400) * 1382400) AS started_at, referrer_source, source_type, uniqCombinedState(17)(visitor_id) AS visitors
FROM sessions
GROUP BY site_key, started_at, referrer_source, source_type;
INSERT INTO source_days_blocks (site_key, level, started_at, referrer_source, source_type, visitors)
SELECT site_key, toUInt8(2) AS level, toDateTime(intDiv(toUInt32(started_at), 345600) * 345600) AS started_at, referrer_source, source_type, uniqCombinedState(17)(visitor_id) AS visitors
FROM sessions
GROUP BY site_key, started_at, referrer_source, source_type;
INSERT INTO source_days_blocks (site_key, level, started_at, referrer_source, source_type, visitors)
SELECT site_key, toUInt8(0) AS level, toDateTime(intDiv(toUInt32(started_at), 86400) * 86400) AS started_at, referrer_source, source_type, uniqCombinedState(17)(visitor_id) AS visitors
FROM sessions
GROUP BY site_key, started_at, referrer_source, source_type;

CREATE MATERIALIZED VIEW IF NOT EXISTS device_days_blocks_4_mv TO device_days_blocks AS
SELECT site_key, toUInt8(4) AS level, toDateTime(intDiv(toUInt32(started_at), 1382400) * 1382400) AS started_at, device, browser, os, uniqCombinedState(17)(visitor_id) AS visitors
FROM sessions
GROUP BY site_key, started_at, device, browser, os;
CREATE MATERIALIZED VIEW IF NOT EXISTS device_days_blocks_2_mv TO device_days_blocks AS
SELECT site_key, toUInt8(2) AS level, toDateTime(intDiv(toUInt32(started_at), 345600) * 345600) AS started_at, device, browser, os, uniqCombinedState(17)(visitor_id) AS visitors
FROM sessions
GROUP BY site_key, started_at, device, browser, os;
CREATE MATERIALIZED VIEW IF NOT EXISTS device_days_blocks_0_mv TO device_days_blocks AS
SELECT site_key, toUInt8(0) AS level, toDateTime(intDiv(toUInt32(started_at), 86400) * 86400) AS started_at, device, browser, os, uniqCombinedState(17)(visitor_id) AS visitors
FROM sessions
GROUP BY site_key, started_at, device, browser, os;
TRUNCATE TABLE device_days_blocks;
INSERT INTO device_days_blocks (site_key, level, started_at, device, browser, os, visitors)
SELECT site_key, toUInt8(4) AS level, toDateTime(intDiv(toUInt32(started_at), 1382400) * 1382400) AS started_at, device, browser, os, uniqCombinedState(17)(visitor_id) AS visitors
FROM sessions
GROUP BY site_key, started_at, device, browser, os;
INSERT INTO device_days_blocks (site_key, level, started_at, device, browser, os, visitors)
SELECT site_key, toUInt8(2) AS level, toDateTime(intDiv(toUInt32(started_at), 345600) * 345600) AS started_at, device, browser, os, uniqCombinedState(17)(visitor_id) AS visitors
FROM sessions
GROUP BY site_key, started_at, device, browser, os;
INSERT INTO device_days_blocks (site_key, level, started_at, device, browser, os, visitors)
SELECT site_key, toUInt8(0) AS level, toDateTime(intDiv(toUInt32(started_at), 86400) * 86400) AS started_at, device, browser, os, uniqCombinedState(17)(visitor_id) AS visitors
FROM sessions
GROUP BY site_key, started_at, device, browser, os;

CREATE MATERIALIZED VIEW IF NOT EXISTS location_days_blocks_4_mv TO location_days_blocks AS
SELECT site_key, toUInt8(4) AS level, toDateTime(intDiv(toUInt32(started_at), 1382400) * 1382400) AS started_at, country_code, region_code, region_name, city, uniqCombinedState(17)(visitor_id) AS visitors
FROM sessions
GROUP BY site_key, started_at, country_code, region_code, region_name, city;
CREATE MATERIALIZED VIEW IF NOT EXISTS location_days_blocks_2_mv TO location_days_blocks AS
SELECT site_key, toUInt8(2) AS level, toDateTime(intDiv(toUInt32(started_at), 345600) * 345600) AS started_at, country_code, region_code, region_name, city, uniqCombinedState(17)(visitor_id) AS visitors
FROM sessions
GROUP BY site_key, started_at, country_code, region_code, region_name, city;
CREATE MATERIALIZED VIEW IF NOT EXISTS location_days_blocks_0_mv TO location_days_blocks AS
SELECT site_key, toUInt8(0) AS level, toDateTime(intDiv(toUInt32(started_at), 86400) * 86400) AS started_at, country_code, region_code, region_name, city, uniqCombinedState(17)(visitor_id) AS visitors
FROM sessions
GROUP BY site_key, started_at, country_code, region_code, region_name, city;
TRUNCATE TABLE location_days_blocks;
INSERT INTO location_days_blocks (site_key, level, started_at, country_code, region_code, region_name, city, visitors)
SELECT site_key, toUInt8(4) AS level, toDateTime(intDiv(toUInt32(started_at), 1382400) * 1382400) AS started_at, country_code, region_code, region_name, city, uniqCombinedState(17)(visitor_id) AS visitors
FROM sessions
GROUP BY site_key, started_at, country_code, region_code, region_name, city;
INSERT INTO location_days_blocks (site_key, level, started_at, country_code, region_code, region_name, city, visitors)
SELECT site_key, toUInt8(2) AS level, toDateTime(intDiv(toUInt32(started_at), 345600) * 345600) AS started_at, country_code, region_code, region_name, city, uniqCombinedState(17)(visitor_id) AS visitors
FROM sessions
GROUP BY site_key, started_at, country_code, region_code, region_name, city;
INSERT INTO location_days_blocks (site_key, level, started_at, country_code, region_code, region_name, city, visitors)
SELECT site_key, toUInt8(0) AS level, toDateTime(intDiv(toUInt32(started_at), 86400) * 86400) AS started_at, country_code, region_code, region_name, city, uniqCombinedState(17)(visitor_id) AS visitors
FROM sessions
GROUP BY site_key, started_at, country_code, region_code, region_name, city;

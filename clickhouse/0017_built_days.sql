-- Visitor days built once closed, like the longer blocks of 0016
-- (internal/stats/blocks.go). Each blocks view wrote every live session row
-- into its day's block: a state a value for every insert's part, rebuilt by
-- every merge of the day's parts for as long as the day took rows.
--
-- Each blocks view now writes the late rows only (of a session that
-- started more than 2 hours, 7,200 s, before the insert), into every
-- level. tally servers build a day once it ended 3 hours ago, from its
-- session rows, then the blocks of 4 and 16 days from their days, and
-- record each in rollup_blocks_built; reports read the days not recorded
-- from the raw rows. The record adds the days that have closed (by this
-- rule, 10,800 s after their end): the views wrote all their rows so far.
-- The days still open hold their rows so far, and the build adds the rest.
-- As for 0008, migrate before tally servers start: session rows inserted
-- between the drop of a view and its creation would miss their blocks
-- (`tally rollups rebuild` mends them).

DROP TABLE IF EXISTS {{local "source_days_blocks_mv"}} {{onCluster}};
CREATE MATERIALIZED VIEW IF NOT EXISTS {{local "source_days_blocks_mv"}} {{onCluster}} TO {{local "source_days_blocks"}} AS
SELECT site_key, arrayJoin([toUInt8(4), toUInt8(2), toUInt8(0)]) AS level, toDateTime(intDiv(toUInt32(started_at), bitShiftLeft(toUInt32(86400), level)) * bitShiftLeft(toUInt32(86400), level)) AS started_at,
       referrer_source, source_type, uniqCombinedState(17)(visitor_id) AS visitors
FROM {{local "sessions"}} WHERE sign = 1 AND toUInt32(ended_at) - duration < toUInt32(now()) - 7200
GROUP BY site_key, level, started_at, referrer_source, source_type;
INSERT INTO rollup_blocks_built (block_table, level, started_at)
SELECT DISTINCT 'source_days_blocks', level, started_at FROM source_days_blocks
WHERE level = 0 AND toUInt32(started_at) + 86400 <= toUInt32(now()) - 10800;

DROP TABLE IF EXISTS {{local "device_days_blocks_mv"}} {{onCluster}};
CREATE MATERIALIZED VIEW IF NOT EXISTS {{local "device_days_blocks_mv"}} {{onCluster}} TO {{local "device_days_blocks"}} AS
SELECT site_key, arrayJoin([toUInt8(4), toUInt8(2), toUInt8(0)]) AS level, toDateTime(intDiv(toUInt32(started_at), bitShiftLeft(toUInt32(86400), level)) * bitShiftLeft(toUInt32(86400), level)) AS started_at,
       device, browser, os, uniqCombinedState(17)(visitor_id) AS visitors
FROM {{local "sessions"}} WHERE sign = 1 AND toUInt32(ended_at) - duration < toUInt32(now()) - 7200
GROUP BY site_key, level, started_at, device, browser, os;
INSERT INTO rollup_blocks_built (block_table, level, started_at)
SELECT DISTINCT 'device_days_blocks', level, started_at FROM device_days_blocks
WHERE level = 0 AND toUInt32(started_at) + 86400 <= toUInt32(now()) - 10800;

DROP TABLE IF EXISTS {{local "country_days_blocks_mv"}} {{onCluster}};
CREATE MATERIALIZED VIEW IF NOT EXISTS {{local "country_days_blocks_mv"}} {{onCluster}} TO {{local "country_days_blocks"}} AS
SELECT site_key, arrayJoin([toUInt8(4), toUInt8(2), toUInt8(0)]) AS level, toDateTime(intDiv(toUInt32(started_at), bitShiftLeft(toUInt32(86400), level)) * bitShiftLeft(toUInt32(86400), level)) AS started_at,
       country_code, uniqCombinedState(17)(visitor_id) AS visitors
FROM {{local "sessions"}} WHERE sign = 1 AND toUInt32(ended_at) - duration < toUInt32(now()) - 7200
GROUP BY site_key, level, started_at, country_code;
INSERT INTO rollup_blocks_built (block_table, level, started_at)
SELECT DISTINCT 'country_days_blocks', level, started_at FROM country_days_blocks
WHERE level = 0 AND toUInt32(started_at) + 86400 <= toUInt32(now()) - 10800;

DROP TABLE IF EXISTS {{local "location_days_blocks_mv"}} {{onCluster}};
CREATE MATERIALIZED VIEW IF NOT EXISTS {{local "location_days_blocks_mv"}} {{onCluster}} TO {{local "location_days_blocks"}} AS
SELECT site_key, arrayJoin([toUInt8(4), toUInt8(2), toUInt8(0)]) AS level, toDateTime(intDiv(toUInt32(started_at), bitShiftLeft(toUInt32(86400), level)) * bitShiftLeft(toUInt32(86400), level)) AS started_at,
       country_code, region_code, region_name, city, uniqCombinedState(17)(visitor_id) AS visitors
FROM {{local "sessions"}} WHERE sign = 1 AND toUInt32(ended_at) - duration < toUInt32(now()) - 7200
GROUP BY site_key, level, started_at, country_code, region_code, region_name, city;
INSERT INTO rollup_blocks_built (block_table, level, started_at)
SELECT DISTINCT 'location_days_blocks', level, started_at FROM location_days_blocks
WHERE level = 0 AND toUInt32(started_at) + 86400 <= toUInt32(now()) - 10800;

-- Visitor blocks of 4 and 16 days built once closed, rather than by the
-- blocks' views on every insert (internal/stats/blocks.go). A block of 16
-- days is a state of up to 16 days of visitors, which every merge of its
-- part rewrote for 16 days: on ClickHouse alone, 100 inserts of 14,000
-- session rows cost the session views 13.5 s of CPU more with the blocks of
-- 4 and 16 days than with single days only
-- (bench/results/2026-11-27-day-states.md).
--
-- Each blocks view now writes a live session row into its day's block
-- only, and a late one (its session started more than 26 hours, 93,600 s,
-- before the insert) into every level. tally servers build a block once it
-- ended 27 hours ago, from its days, and record it in rollup_blocks_built;
-- reports merge a recorded block's state, and the days of one not recorded.
-- The record starts with the blocks that have closed (by this rule, 97,200
-- s after their end): the views wrote every level of them so far. Blocks
-- still open hold their rows so far, and the build adds the rest. As for
-- 0008, migrate before tally servers start: session rows inserted between
-- the drop of a view and its creation would miss their blocks (`tally
-- rollups rebuild` mends them).

CREATE TABLE IF NOT EXISTS {{local "rollup_blocks_built"}} {{onCluster}} (
    block_table String,
    level       UInt8,
    started_at  DateTime
) ENGINE = {{engine "rollup_blocks_built" "MergeTree"}}
ORDER BY (block_table, level, started_at);

{{distributed "rollup_blocks_built" "rand()"}};

DROP TABLE IF EXISTS {{local "source_days_blocks_mv"}} {{onCluster}};
CREATE MATERIALIZED VIEW IF NOT EXISTS {{local "source_days_blocks_mv"}} {{onCluster}} TO {{local "source_days_blocks"}} AS
SELECT site_key, arrayJoin(if(toUInt32(ended_at) - duration < toUInt32(now()) - 93600, [toUInt8(4), toUInt8(2), toUInt8(0)], [toUInt8(0)])) AS level, toDateTime(intDiv(toUInt32(started_at), bitShiftLeft(toUInt32(86400), level)) * bitShiftLeft(toUInt32(86400), level)) AS started_at,
       referrer_source, source_type, uniqCombinedState(17)(visitor_id) AS visitors
FROM {{local "sessions"}} WHERE sign = 1
GROUP BY site_key, level, started_at, referrer_source, source_type;
INSERT INTO rollup_blocks_built (block_table, level, started_at)
SELECT DISTINCT 'source_days_blocks', level, started_at FROM source_days_blocks
WHERE level > 0 AND toUInt32(started_at) + bitShiftLeft(toUInt32(86400), level) <= toUInt32(now()) - 97200;

DROP TABLE IF EXISTS {{local "device_days_blocks_mv"}} {{onCluster}};
CREATE MATERIALIZED VIEW IF NOT EXISTS {{local "device_days_blocks_mv"}} {{onCluster}} TO {{local "device_days_blocks"}} AS
SELECT site_key, arrayJoin(if(toUInt32(ended_at) - duration < toUInt32(now()) - 93600, [toUInt8(4), toUInt8(2), toUInt8(0)], [toUInt8(0)])) AS level, toDateTime(intDiv(toUInt32(started_at), bitShiftLeft(toUInt32(86400), level)) * bitShiftLeft(toUInt32(86400), level)) AS started_at,
       device, browser, os, uniqCombinedState(17)(visitor_id) AS visitors
FROM {{local "sessions"}} WHERE sign = 1
GROUP BY site_key, level, started_at, device, browser, os;
INSERT INTO rollup_blocks_built (block_table, level, started_at)
SELECT DISTINCT 'device_days_blocks', level, started_at FROM device_days_blocks
WHERE level > 0 AND toUInt32(started_at) + bitShiftLeft(toUInt32(86400), level) <= toUInt32(now()) - 97200;

DROP TABLE IF EXISTS {{local "country_days_blocks_mv"}} {{onCluster}};
CREATE MATERIALIZED VIEW IF NOT EXISTS {{local "country_days_blocks_mv"}} {{onCluster}} TO {{local "country_days_blocks"}} AS
SELECT site_key, arrayJoin(if(toUInt32(ended_at) - duration < toUInt32(now()) - 93600, [toUInt8(4), toUInt8(2), toUInt8(0)], [toUInt8(0)])) AS level, toDateTime(intDiv(toUInt32(started_at), bitShiftLeft(toUInt32(86400), level)) * bitShiftLeft(toUInt32(86400), level)) AS started_at,
       country_code, uniqCombinedState(17)(visitor_id) AS visitors
FROM {{local "sessions"}} WHERE sign = 1
GROUP BY site_key, level, started_at, country_code;
INSERT INTO rollup_blocks_built (block_table, level, started_at)
SELECT DISTINCT 'country_days_blocks', level, started_at FROM country_days_blocks
WHERE level > 0 AND toUInt32(started_at) + bitShiftLeft(toUInt32(86400), level) <= toUInt32(now()) - 97200;

DROP TABLE IF EXISTS {{local "location_days_blocks_mv"}} {{onCluster}};
CREATE MATERIALIZED VIEW IF NOT EXISTS {{local "location_days_blocks_mv"}} {{onCluster}} TO {{local "location_days_blocks"}} AS
SELECT site_key, arrayJoin(if(toUInt32(ended_at) - duration < toUInt32(now()) - 93600, [toUInt8(4), toUInt8(2), toUInt8(0)], [toUInt8(0)])) AS level, toDateTime(intDiv(toUInt32(started_at), bitShiftLeft(toUInt32(86400), level)) * bitShiftLeft(toUInt32(86400), level)) AS started_at,
       country_code, region_code, region_name, city, uniqCombinedState(17)(visitor_id) AS visitors
FROM {{local "sessions"}} WHERE sign = 1
GROUP BY site_key, level, started_at, country_code, region_code, region_name, city;
INSERT INTO rollup_blocks_built (block_table, level, started_at)
SELECT DISTINCT 'location_days_blocks', level, started_at FROM location_days_blocks
WHERE level > 0 AND toUInt32(started_at) + bitShiftLeft(toUInt32(86400), level) <= toUInt32(now()) - 97200;

-- One view a visitor-blocks table instead of one a level (0010). Each
-- view's insert writes a part, and a part costs ClickHouse a fixed few
-- milliseconds to write and more to merge, however few its rows: with the
-- 16 views on sessions, 50 inserts of 4,900 session rows took 7.4–9.4 s
-- against 1.9 s without views, and the same rows in 10 inserts 2.3 s. One
-- view takes each inserted row once a level with the arrayJoin function,
-- which repeats only the columns the view reads (0010 found an ARRAY JOIN
-- clause far dearer: it repeated every column of the inserted block; and
-- ClickHouse 18.16 refuses a view over a subquery when the insert comes
-- through a Distributed table). For those 50 inserts the three views took
-- 1.4–2.1 s more than none, where the nine took 3.4–4.2 s, and they leave
-- a third of the parts to merge. The views read the rows of sign 1 only: a
-- cancel row repeats the visitor and dims of a row inserted before it.
-- internal/stats/rollups_rebuild.go declares the views (a test holds this
-- file to the declarations); the tables and their rows stay as they are.
-- Migrate before tally servers start: sessions inserted between the drops
-- and the creates would miss the blocks (`tally rollups rebuild` mends
-- them).

DROP TABLE IF EXISTS {{local "source_days_blocks_4_mv"}} {{onCluster}};
DROP TABLE IF EXISTS {{local "source_days_blocks_2_mv"}} {{onCluster}};
DROP TABLE IF EXISTS {{local "source_days_blocks_0_mv"}} {{onCluster}};
CREATE MATERIALIZED VIEW IF NOT EXISTS {{local "source_days_blocks_mv"}} {{onCluster}} TO {{local "source_days_blocks"}} AS
SELECT site_key, arrayJoin([toUInt8(4), toUInt8(2), toUInt8(0)]) AS level, toDateTime(intDiv(toUInt32(started_at), bitShiftLeft(toUInt32(86400), level)) * bitShiftLeft(toUInt32(86400), level)) AS started_at,
       referrer_source, source_type, uniqCombinedState(17)(visitor_id) AS visitors
FROM {{local "sessions"}} WHERE sign = 1
GROUP BY site_key, level, started_at, referrer_source, source_type;

DROP TABLE IF EXISTS {{local "device_days_blocks_4_mv"}} {{onCluster}};
DROP TABLE IF EXISTS {{local "device_days_blocks_2_mv"}} {{onCluster}};
DROP TABLE IF EXISTS {{local "device_days_blocks_0_mv"}} {{onCluster}};
CREATE MATERIALIZED VIEW IF NOT EXISTS {{local "device_days_blocks_mv"}} {{onCluster}} TO {{local "device_days_blocks"}} AS
SELECT site_key, arrayJoin([toUInt8(4), toUInt8(2), toUInt8(0)]) AS level, toDateTime(intDiv(toUInt32(started_at), bitShiftLeft(toUInt32(86400), level)) * bitShiftLeft(toUInt32(86400), level)) AS started_at,
       device, browser, os, uniqCombinedState(17)(visitor_id) AS visitors
FROM {{local "sessions"}} WHERE sign = 1
GROUP BY site_key, level, started_at, device, browser, os;

DROP TABLE IF EXISTS {{local "location_days_blocks_4_mv"}} {{onCluster}};
DROP TABLE IF EXISTS {{local "location_days_blocks_2_mv"}} {{onCluster}};
DROP TABLE IF EXISTS {{local "location_days_blocks_0_mv"}} {{onCluster}};
CREATE MATERIALIZED VIEW IF NOT EXISTS {{local "location_days_blocks_mv"}} {{onCluster}} TO {{local "location_days_blocks"}} AS
SELECT site_key, arrayJoin([toUInt8(4), toUInt8(2), toUInt8(0)]) AS level, toDateTime(intDiv(toUInt32(started_at), bitShiftLeft(toUInt32(86400), level)) * bitShiftLeft(toUInt32(86400), level)) AS started_at,
       country_code, region_code, region_name, city, uniqCombinedState(17)(visitor_id) AS visitors
FROM {{local "sessions"}} WHERE sign = 1
GROUP BY site_key, level, started_at, country_code, region_code, region_name, city;

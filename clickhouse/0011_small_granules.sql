-- Small granules for the rollups that hold visitor states. ClickHouse reads
-- a column by whole granules (8,192 rows by default), so a report that
-- wanted a few rows of one site deserialised every uniqCombined state in the
-- granules around them, other sites' included: with a site of 100M events
-- in the database, site_days' 204 rows were one granule, and the events
-- report of a site of 10M (event_days) took 424 ms over 30 days. ClickHouse
-- 18.16 cannot change a table's granularity in place, so each such table is
-- dropped with its view and created again as before but for the setting:
-- 16 rows a granule where a site has a few rows a unit (site_days,
-- site_quarters, event_days), 256 for the breakdowns and the pages' visitor
-- states, where a site has many rows a day. Then its view again, and the
-- backfill from the raw rows with the view's SELECT (internal/stats/
-- rollups.go declares them; a test holds this file to the declarations). On
-- a cluster the new tables replicate under ZooKeeper paths of their own
-- (<table>_0011): the dropped tables' paths may outlive them. As for 0008,
-- migrate before tally servers start; the backfill reads the raw rows once
-- a table.

-- site_days
DROP TABLE IF EXISTS {{local "site_days_mv"}} {{onCluster}};
DROP TABLE IF EXISTS {{local "site_days"}} {{onCluster}};
CREATE TABLE IF NOT EXISTS {{local "site_days"}} {{onCluster}} (
    site_key       UInt64,
    ts             DateTime,
    visitors       AggregateFunction(uniqCombined(17), UInt64),
    pageview_count UInt64,
    event_count    UInt64
) ENGINE = {{engine "site_days_0011" "SummingMergeTree"}}
PARTITION BY toYYYYMM(ts)
ORDER BY (site_key, ts)
SETTINGS index_granularity = 16;

{{distributed "site_days" "rand()"}};

CREATE MATERIALIZED VIEW IF NOT EXISTS {{local "site_days_mv"}} {{onCluster}} TO {{local "site_days"}} AS
SELECT site_key, toDateTime(intDiv(toUInt32(ts), 86400) * 86400) AS ts, uniqCombinedState(17)(visitor_id) AS visitors, sum(is_pageview) AS pageview_count, count() AS event_count
FROM {{local "events"}}
GROUP BY site_key, ts;
TRUNCATE TABLE {{local "site_days"}} {{onCluster}};
INSERT INTO site_days (site_key, ts, visitors, pageview_count, event_count)
SELECT site_key, toDateTime(intDiv(toUInt32(ts), 86400) * 86400) AS ts, uniqCombinedState(17)(visitor_id) AS visitors, sum(is_pageview) AS pageview_count, count() AS event_count
FROM events
GROUP BY site_key, ts;

-- site_quarters
DROP TABLE IF EXISTS {{local "site_quarters_mv"}} {{onCluster}};
DROP TABLE IF EXISTS {{local "site_quarters"}} {{onCluster}};
CREATE TABLE IF NOT EXISTS {{local "site_quarters"}} {{onCluster}} (
    site_key       UInt64,
    ts             DateTime,
    visitors       AggregateFunction(uniqCombined(17), UInt64),
    pageview_count UInt64,
    event_count    UInt64
) ENGINE = {{engine "site_quarters_0011" "SummingMergeTree"}}
PARTITION BY toYYYYMM(ts)
ORDER BY (site_key, ts)
SETTINGS index_granularity = 16;

{{distributed "site_quarters" "rand()"}};

CREATE MATERIALIZED VIEW IF NOT EXISTS {{local "site_quarters_mv"}} {{onCluster}} TO {{local "site_quarters"}} AS
SELECT site_key, toDateTime(intDiv(toUInt32(ts), 900) * 900) AS ts, uniqCombinedState(17)(visitor_id) AS visitors, sum(is_pageview) AS pageview_count, count() AS event_count
FROM {{local "events"}}
GROUP BY site_key, ts;
TRUNCATE TABLE {{local "site_quarters"}} {{onCluster}};
INSERT INTO site_quarters (site_key, ts, visitors, pageview_count, event_count)
SELECT site_key, toDateTime(intDiv(toUInt32(ts), 900) * 900) AS ts, uniqCombinedState(17)(visitor_id) AS visitors, sum(is_pageview) AS pageview_count, count() AS event_count
FROM events
GROUP BY site_key, ts;

-- event_days
DROP TABLE IF EXISTS {{local "event_days_mv"}} {{onCluster}};
DROP TABLE IF EXISTS {{local "event_days"}} {{onCluster}};
CREATE TABLE IF NOT EXISTS {{local "event_days"}} {{onCluster}} (
    site_key       UInt64,
    ts             DateTime,
    is_pageview    UInt8,
    name           String,
    event_count    UInt64,
    visitors       AggregateFunction(uniqCombined(17), UInt64)
) ENGINE = {{engine "event_days_0011" "SummingMergeTree"}}
PARTITION BY toYYYYMM(ts)
ORDER BY (site_key, ts, is_pageview, name)
SETTINGS index_granularity = 16;

{{distributed "event_days" "rand()"}};

CREATE MATERIALIZED VIEW IF NOT EXISTS {{local "event_days_mv"}} {{onCluster}} TO {{local "event_days"}} AS
SELECT site_key, toDateTime(intDiv(toUInt32(ts), 86400) * 86400) AS ts, is_pageview, name, count() AS event_count, uniqCombinedState(17)(visitor_id) AS visitors
FROM {{local "events"}}
GROUP BY site_key, ts, is_pageview, name;
TRUNCATE TABLE {{local "event_days"}} {{onCluster}};
INSERT INTO event_days (site_key, ts, is_pageview, name, event_count, visitors)
SELECT site_key, toDateTime(intDiv(toUInt32(ts), 86400) * 86400) AS ts, is_pageview, name, count() AS event_count, uniqCombinedState(17)(visitor_id) AS visitors
FROM events
GROUP BY site_key, ts, is_pageview, name;

-- source_days
DROP TABLE IF EXISTS {{local "source_days_mv"}} {{onCluster}};
DROP TABLE IF EXISTS {{local "source_days"}} {{onCluster}};
CREATE TABLE IF NOT EXISTS {{local "source_days"}} {{onCluster}} (
    site_key       UInt64,
    started_at     DateTime,
    referrer_source String,
    source_type    String,
    sessions       Int64,
    bounces        Int64,
    duration_sum   Int64,
    pageview_count Int64,
    visitors       AggregateFunction(uniqCombined(17), UInt64)
) ENGINE = {{engine "source_days_0011" "SummingMergeTree"}}
PARTITION BY toYYYYMM(started_at)
ORDER BY (site_key, started_at, referrer_source, source_type)
SETTINGS index_granularity = 256;

{{distributed "source_days" "rand()"}};

CREATE MATERIALIZED VIEW IF NOT EXISTS {{local "source_days_mv"}} {{onCluster}} TO {{local "source_days"}} AS
SELECT site_key, toDateTime(intDiv(toUInt32(started_at), 86400) * 86400) AS started_at, referrer_source, source_type, sum(sign) AS sessions, sum(sign * is_bounce) AS bounces, sum(sign * duration) AS duration_sum, sum(sign * pageviews) AS pageview_count, uniqCombinedState(17)(visitor_id) AS visitors
FROM {{local "sessions"}}
GROUP BY site_key, started_at, referrer_source, source_type;
TRUNCATE TABLE {{local "source_days"}} {{onCluster}};
INSERT INTO source_days (site_key, started_at, referrer_source, source_type, sessions, bounces, duration_sum, pageview_count, visitors)
SELECT site_key, toDateTime(intDiv(toUInt32(started_at), 86400) * 86400) AS started_at, referrer_source, source_type, sum(sign) AS sessions, sum(sign * is_bounce) AS bounces, sum(sign * duration) AS duration_sum, sum(sign * pageviews) AS pageview_count, uniqCombinedState(17)(visitor_id) AS visitors
FROM sessions
GROUP BY site_key, started_at, referrer_source, source_type;

-- utm_days
DROP TABLE IF EXISTS {{local "utm_days_mv"}} {{onCluster}};
DROP TABLE IF EXISTS {{local "utm_days"}} {{onCluster}};
CREATE TABLE IF NOT EXISTS {{local "utm_days"}} {{onCluster}} (
    site_key       UInt64,
    started_at     DateTime,
    utm_source     String,
    utm_medium     String,
    utm_campaign   String,
    utm_content    String,
    sessions       Int64,
    bounces        Int64,
    duration_sum   Int64,
    pageview_count Int64,
    visitors       AggregateFunction(uniqCombined(17), UInt64)
) ENGINE = {{engine "utm_days_0011" "SummingMergeTree"}}
PARTITION BY toYYYYMM(started_at)
ORDER BY (site_key, started_at, utm_source, utm_medium, utm_campaign, utm_content)
SETTINGS index_granularity = 256;

{{distributed "utm_days" "rand()"}};

CREATE MATERIALIZED VIEW IF NOT EXISTS {{local "utm_days_mv"}} {{onCluster}} TO {{local "utm_days"}} AS
SELECT site_key, toDateTime(intDiv(toUInt32(started_at), 86400) * 86400) AS started_at, utm_source, utm_medium, utm_campaign, utm_content, sum(sign) AS sessions, sum(sign * is_bounce) AS bounces, sum(sign * duration) AS duration_sum, sum(sign * pageviews) AS pageview_count, uniqCombinedState(17)(visitor_id) AS visitors
FROM {{local "sessions"}}
GROUP BY site_key, started_at, utm_source, utm_medium, utm_campaign, utm_content;
TRUNCATE TABLE {{local "utm_days"}} {{onCluster}};
INSERT INTO utm_days (site_key, started_at, utm_source, utm_medium, utm_campaign, utm_content, sessions, bounces, duration_sum, pageview_count, visitors)
SELECT site_key, toDateTime(intDiv(toUInt32(started_at), 86400) * 86400) AS started_at, utm_source, utm_medium, utm_campaign, utm_content, sum(sign) AS sessions, sum(sign * is_bounce) AS bounces, sum(sign * duration) AS duration_sum, sum(sign * pageviews) AS pageview_count, uniqCombinedState(17)(visitor_id) AS visitors
FROM sessions
GROUP BY site_key, started_at, utm_source, utm_medium, utm_campaign, utm_content;

-- device_days
DROP TABLE IF EXISTS {{local "device_days_mv"}} {{onCluster}};
DROP TABLE IF EXISTS {{local "device_days"}} {{onCluster}};
CREATE TABLE IF NOT EXISTS {{local "device_days"}} {{onCluster}} (
    site_key       UInt64,
    started_at     DateTime,
    device         String,
    browser        String,
    os             String,
    sessions       Int64,
    bounces        Int64,
    duration_sum   Int64,
    pageview_count Int64,
    visitors       AggregateFunction(uniqCombined(17), UInt64)
) ENGINE = {{engine "device_days_0011" "SummingMergeTree"}}
PARTITION BY toYYYYMM(started_at)
ORDER BY (site_key, started_at, device, browser, os)
SETTINGS index_granularity = 256;

{{distributed "device_days" "rand()"}};

CREATE MATERIALIZED VIEW IF NOT EXISTS {{local "device_days_mv"}} {{onCluster}} TO {{local "device_days"}} AS
SELECT site_key, toDateTime(intDiv(toUInt32(started_at), 86400) * 86400) AS started_at, device, browser, os, sum(sign) AS sessions, sum(sign * is_bounce) AS bounces, sum(sign * duration) AS duration_sum, sum(sign * pageviews) AS pageview_count, uniqCombinedState(17)(visitor_id) AS visitors
FROM {{local "sessions"}}
GROUP BY site_key, started_at, device, browser, os;
TRUNCATE TABLE {{local "device_days"}} {{onCluster}};
INSERT INTO device_days (site_key, started_at, device, browser, os, sessions, bounces, duration_sum, pageview_count, visitors)
SELECT site_key, toDateTime(intDiv(toUInt32(started_at), 86400) * 86400) AS started_at, device, browser, os, sum(sign) AS sessions, sum(sign * is_bounce) AS bounces, sum(sign * duration) AS duration_sum, sum(sign * pageviews) AS pageview_count, uniqCombinedState(17)(visitor_id) AS visitors
FROM sessions
GROUP BY site_key, started_at, device, browser, os;

-- location_days
DROP TABLE IF EXISTS {{local "location_days_mv"}} {{onCluster}};
DROP TABLE IF EXISTS {{local "location_days"}} {{onCluster}};
CREATE TABLE IF NOT EXISTS {{local "location_days"}} {{onCluster}} (
    site_key       UInt64,
    started_at     DateTime,
    country_code   String,
    region_code    String,
    region_name    String,
    city           String,
    sessions       Int64,
    bounces        Int64,
    duration_sum   Int64,
    pageview_count Int64,
    visitors       AggregateFunction(uniqCombined(17), UInt64)
) ENGINE = {{engine "location_days_0011" "SummingMergeTree"}}
PARTITION BY toYYYYMM(started_at)
ORDER BY (site_key, started_at, country_code, region_code, region_name, city)
SETTINGS index_granularity = 256;

{{distributed "location_days" "rand()"}};

CREATE MATERIALIZED VIEW IF NOT EXISTS {{local "location_days_mv"}} {{onCluster}} TO {{local "location_days"}} AS
SELECT site_key, toDateTime(intDiv(toUInt32(started_at), 86400) * 86400) AS started_at, country_code, region_code, region_name, city, sum(sign) AS sessions, sum(sign * is_bounce) AS bounces, sum(sign * duration) AS duration_sum, sum(sign * pageviews) AS pageview_count, uniqCombinedState(17)(visitor_id) AS visitors
FROM {{local "sessions"}}
GROUP BY site_key, started_at, country_code, region_code, region_name, city;
TRUNCATE TABLE {{local "location_days"}} {{onCluster}};
INSERT INTO location_days (site_key, started_at, country_code, region_code, region_name, city, sessions, bounces, duration_sum, pageview_count, visitors)
SELECT site_key, toDateTime(intDiv(toUInt32(started_at), 86400) * 86400) AS started_at, country_code, region_code, region_name, city, sum(sign) AS sessions, sum(sign * is_bounce) AS bounces, sum(sign * duration) AS duration_sum, sum(sign * pageviews) AS pageview_count, uniqCombinedState(17)(visitor_id) AS visitors
FROM sessions
GROUP BY site_key, started_at, country_code, region_code, region_name, city;

-- page_visitor_days
DROP TABLE IF EXISTS {{local "page_visitor_days_mv"}} {{onCluster}};
DROP TABLE IF EXISTS {{local "page_visitor_days"}} {{onCluster}};
CREATE TABLE IF NOT EXISTS {{local "page_visitor_days"}} {{onCluster}} (
    site_key UInt64,
    day      Date,
    pathname String,
    visitors AggregateFunction(uniqCombined(14), UInt64)
) ENGINE = {{engine "page_visitor_days_0011" "AggregatingMergeTree"}}
PARTITION BY toYYYYMM(day)
ORDER BY (site_key, day, pathname)
SETTINGS index_granularity = 256;

{{distributed "page_visitor_days" "site_key"}};

CREATE MATERIALIZED VIEW IF NOT EXISTS {{local "page_visitor_days_mv"}} {{onCluster}} TO {{local "page_visitor_days"}} AS
SELECT site_key, toDate(ts, 'UTC') AS day, pathname, uniqCombinedState(14)(visitor_id) AS visitors
FROM {{local "events"}} WHERE is_pageview = 1
GROUP BY site_key, day, pathname;
TRUNCATE TABLE {{local "page_visitor_days"}} {{onCluster}};
INSERT INTO page_visitor_days (site_key, day, pathname, visitors)
SELECT site_key, toDate(ts, 'UTC') AS day, pathname, uniqCombinedState(14)(visitor_id)
FROM events WHERE is_pageview = 1
GROUP BY site_key, day, pathname;

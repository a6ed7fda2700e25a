-- Rollups of every report, kept in step with every insert by materialised
-- views, so a report of a range reads a few rows per site and unit of time
-- instead of every raw row: the whole units of the range from here, its
-- edges (a range that starts or ends inside a unit) from the raw tables.
-- Each rollup is declared once in internal/stats/rollups.go, whose
-- declarations a test holds these views and backfills to; the planner there
-- reads them, and `tally rollups rebuild` rebuilds them from raw rows.
--
-- The unit's start is stored in a column named as the raw table's time
-- column (ts, started_at), and dimensions keep their raw names, so the
-- statistics' expressions apply to both. Units are quarters of an hour for
-- the overview's totals (every time zone's day is made of whole quarters)
-- and UTC days for the breakdowns.
--
-- Sessions sum sign times each figure (sessions, bounces, durations,
-- pageviews): exact in SummingMergeTree, since cancel rows take out the
-- states they replace. Visitors are uniqCombined(17) states, uniqCombined's
-- default precision: merged, they count exactly what uniqCombined counts on
-- the raw rows. SummingMergeTree merges AggregateFunction columns with their
-- function (ClickHouse 18.16 included).

-- The overview: per site and quarter of an hour (UTC start), the events'
-- visitors, pageviews and events ...
CREATE TABLE IF NOT EXISTS site_quarters (
    site_key       UInt64,
    ts             DateTime,
    visitors       AggregateFunction(uniqCombined(17), UInt64),
    pageview_count UInt64,
    event_count    UInt64
) ENGINE = SummingMergeTree
PARTITION BY toYYYYMM(ts)
ORDER BY (site_key, ts);

-- ... and the sessions that started in it.
CREATE TABLE IF NOT EXISTS session_quarters (
    site_key       UInt64,
    started_at     DateTime,
    sessions       Int64,
    bounces        Int64,
    duration_sum   Int64,
    pageview_count Int64
) ENGINE = SummingMergeTree
PARTITION BY toYYYYMM(started_at)
ORDER BY (site_key, started_at);

-- Events by UTC day and name (custom events; pageviews are one row a day).
CREATE TABLE IF NOT EXISTS event_days (
    site_key       UInt64,
    ts             DateTime,
    is_pageview    UInt8,
    name           String,
    event_count    UInt64,
    visitors       AggregateFunction(uniqCombined(17), UInt64)
) ENGINE = SummingMergeTree
PARTITION BY toYYYYMM(ts)
ORDER BY (site_key, ts, is_pageview, name);

-- Bot events by UTC day and category (the overview's filtered bot traffic).
CREATE TABLE IF NOT EXISTS bot_days (
    site_key       UInt64,
    ts             DateTime,
    reason         String,
    event_count    UInt64
) ENGINE = SummingMergeTree
PARTITION BY toYYYYMM(ts)
ORDER BY (site_key, ts, reason);

-- Sessions by UTC day of their start and what they are broken down by.
CREATE TABLE IF NOT EXISTS source_days (
    site_key       UInt64,
    started_at     DateTime,
    referrer_source String,
    source_type    String,
    sessions       Int64,
    bounces        Int64,
    duration_sum   Int64,
    pageview_count Int64,
    visitors       AggregateFunction(uniqCombined(17), UInt64)
) ENGINE = SummingMergeTree
PARTITION BY toYYYYMM(started_at)
ORDER BY (site_key, started_at, referrer_source, source_type);

CREATE TABLE IF NOT EXISTS utm_days (
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
) ENGINE = SummingMergeTree
PARTITION BY toYYYYMM(started_at)
ORDER BY (site_key, started_at, utm_source, utm_medium, utm_campaign, utm_content);

CREATE TABLE IF NOT EXISTS device_days (
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
) ENGINE = SummingMergeTree
PARTITION BY toYYYYMM(started_at)
ORDER BY (site_key, started_at, device, browser, os);

CREATE TABLE IF NOT EXISTS location_days (
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
) ENGINE = SummingMergeTree
PARTITION BY toYYYYMM(started_at)
ORDER BY (site_key, started_at, country_code, region_code, region_name, city);

-- Entry and exit pages count sessions only (the exit page changes between
-- versions of a session: sums with sign follow it, visitor states could not).
CREATE TABLE IF NOT EXISTS entry_days (
    site_key       UInt64,
    started_at     DateTime,
    entry_page     String,
    sessions       Int64,
    bounces        Int64,
    duration_sum   Int64,
    pageview_count Int64
) ENGINE = SummingMergeTree
PARTITION BY toYYYYMM(started_at)
ORDER BY (site_key, started_at, entry_page);

CREATE TABLE IF NOT EXISTS exit_days (
    site_key       UInt64,
    started_at     DateTime,
    exit_page      String,
    sessions       Int64,
    bounces        Int64,
    duration_sum   Int64,
    pageview_count Int64
) ENGINE = SummingMergeTree
PARTITION BY toYYYYMM(started_at)
ORDER BY (site_key, started_at, exit_page);

-- The views, then the backfill of what the raw tables held before them.
-- Emptying first makes a re-run rebuild rather than double the rollups;
-- events inserted while this runs could count twice, so migrate before
-- tally servers start (as docker-compose and `go tool task up` do), from one
-- place; `tally rollups rebuild` mends them later.

CREATE MATERIALIZED VIEW IF NOT EXISTS site_quarters_mv TO site_quarters AS
SELECT site_key, toDateTime(intDiv(toUInt32(ts), 900) * 900) AS ts, uniqCombinedState(17)(visitor_id) AS visitors, sum(is_pageview) AS pageview_count, count() AS event_count
FROM events
GROUP BY site_key, ts;
TRUNCATE TABLE site_quarters;
INSERT INTO site_quarters (site_key, ts, visitors, pageview_count, event_count)
SELECT site_key, toDateTime(intDiv(toUInt32(ts), 900) * 900) AS ts, uniqCombinedState(17)(visitor_id) AS visitors, sum(is_pageview) AS pageview_count, count() AS event_count
FROM events
GROUP BY site_key, ts;

CREATE MATERIALIZED VIEW IF NOT EXISTS session_quarters_mv TO session_quarters AS
SELECT site_key, toDateTime(intDiv(toUInt32(started_at), 900) * 900) AS started_at, sum(sign) AS sessions, sum(sign * is_bounce) AS bounces, sum(sign * duration) AS duration_sum, sum(sign * pageviews) AS pageview_count
FROM sessions
GROUP BY site_key, started_at;
TRUNCATE TABLE session_quarters;
INSERT INTO session_quarters (site_key, started_at, sessions, bounces, duration_sum, pageview_count)
SELECT site_key, toDateTime(intDiv(toUInt32(started_at), 900) * 900) AS started_at, sum(sign) AS sessions, sum(sign * is_bounce) AS bounces, sum(sign * duration) AS duration_sum, sum(sign * pageviews) AS pageview_count
FROM sessions
GROUP BY site_key, started_at;

CREATE MATERIALIZED VIEW IF NOT EXISTS event_days_mv TO event_days AS
SELECT site_key, toDateTime(intDiv(toUInt32(ts), 86400) * 86400) AS ts, is_pageview, name, count() AS event_count, uniqCombinedState(17)(visitor_id) AS visitors
FROM events
GROUP BY site_key, ts, is_pageview, name;
TRUNCATE TABLE event_days;
INSERT INTO event_days (site_key, ts, is_pageview, name, event_count, visitors)
SELECT site_key, toDateTime(intDiv(toUInt32(ts), 86400) * 86400) AS ts, is_pageview, name, count() AS event_count, uniqCombinedState(17)(visitor_id) AS visitors
FROM events
GROUP BY site_key, ts, is_pageview, name;

CREATE MATERIALIZED VIEW IF NOT EXISTS bot_days_mv TO bot_days AS
SELECT site_key, toDateTime(intDiv(toUInt32(ts), 86400) * 86400) AS ts, reason, count() AS event_count
FROM bot_events
GROUP BY site_key, ts, reason;
TRUNCATE TABLE bot_days;
INSERT INTO bot_days (site_key, ts, reason, event_count)
SELECT site_key, toDateTime(intDiv(toUInt32(ts), 86400) * 86400) AS ts, reason, count() AS event_count
FROM bot_events
GROUP BY site_key, ts, reason;

CREATE MATERIALIZED VIEW IF NOT EXISTS source_days_mv TO source_days AS
SELECT site_key, toDateTime(intDiv(toUInt32(started_at), 86400) * 86400) AS started_at, referrer_source, source_type, sum(sign) AS sessions, sum(sign * is_bounce) AS bounces, sum(sign * duration) AS duration_sum, sum(sign * pageviews) AS pageview_count, uniqCombinedState(17)(visitor_id) AS visitors
FROM sessions
GROUP BY site_key, started_at, referrer_source, source_type;
TRUNCATE TABLE source_days;
INSERT INTO source_days (site_key, started_at, referrer_source, source_type, sessions, bounces, duration_sum, pageview_count, visitors)
SELECT site_key, toDateTime(intDiv(toUInt32(started_at), 86400) * 86400) AS started_at, referrer_source, source_type, sum(sign) AS sessions, sum(sign * is_bounce) AS bounces, sum(sign * duration) AS duration_sum, sum(sign * pageviews) AS pageview_count, uniqCombinedState(17)(visitor_id) AS visitors
FROM sessions
GROUP BY site_key, started_at, referrer_source, source_type;

CREATE MATERIALIZED VIEW IF NOT EXISTS utm_days_mv TO utm_days AS
SELECT site_key, toDateTime(intDiv(toUInt32(started_at), 86400) * 86400) AS started_at, utm_source, utm_medium, utm_campaign, utm_content, sum(sign) AS sessions, sum(sign * is_bounce) AS bounces, sum(sign * duration) AS duration_sum, sum(sign * pageviews) AS pageview_count, uniqCombinedState(17)(visitor_id) AS visitors
FROM sessions
GROUP BY site_key, started_at, utm_source, utm_medium, utm_campaign, utm_content;
TRUNCATE TABLE utm_days;
INSERT INTO utm_days (site_key, started_at, utm_source, utm_medium, utm_campaign, utm_content, sessions, bounces, duration_sum, pageview_count, visitors)
SELECT site_key, toDateTime(intDiv(toUInt32(started_at), 86400) * 86400) AS started_at, utm_source, utm_medium, utm_campaign, utm_content, sum(sign) AS sessions, sum(sign * is_bounce) AS bounces, sum(sign * duration) AS duration_sum, sum(sign * pageviews) AS pageview_count, uniqCombinedState(17)(visitor_id) AS visitors
FROM sessions
GROUP BY site_key, started_at, utm_source, utm_medium, utm_campaign, utm_content;

CREATE MATERIALIZED VIEW IF NOT EXISTS device_days_mv TO device_days AS
SELECT site_key, toDateTime(intDiv(toUInt32(started_at), 86400) * 86400) AS started_at, device, browser, os, sum(sign) AS sessions, sum(sign * is_bounce) AS bounces, sum(sign * duration) AS duration_sum, sum(sign * pageviews) AS pageview_count, uniqCombinedState(17)(visitor_id) AS visitors
FROM sessions
GROUP BY site_key, started_at, device, browser, os;
TRUNCATE TABLE device_days;
INSERT INTO device_days (site_key, started_at, device, browser, os, sessions, bounces, duration_sum, pageview_count, visitors)
SELECT site_key, toDateTime(intDiv(toUInt32(started_at), 86400) * 86400) AS started_at, device, browser, os, sum(sign) AS sessions, sum(sign * is_bounce) AS bounces, sum(sign * duration) AS duration_sum, sum(sign * pageviews) AS pageview_count, uniqCombinedState(17)(visitor_id) AS visitors
FROM sessions
GROUP BY site_key, started_at, device, browser, os;

CREATE MATERIALIZED VIEW IF NOT EXISTS location_days_mv TO location_days AS
SELECT site_key, toDateTime(intDiv(toUInt32(started_at), 86400) * 86400) AS started_at, country_code, region_code, region_name, city, sum(sign) AS sessions, sum(sign * is_bounce) AS bounces, sum(sign * duration) AS duration_sum, sum(sign * pageviews) AS pageview_count, uniqCombinedState(17)(visitor_id) AS visitors
FROM sessions
GROUP BY site_key, started_at, country_code, region_code, region_name, city;
TRUNCATE TABLE location_days;
INSERT INTO location_days (site_key, started_at, country_code, region_code, region_name, city, sessions, bounces, duration_sum, pageview_count, visitors)
SELECT site_key, toDateTime(intDiv(toUInt32(started_at), 86400) * 86400) AS started_at, country_code, region_code, region_name, city, sum(sign) AS sessions, sum(sign * is_bounce) AS bounces, sum(sign * duration) AS duration_sum, sum(sign * pageviews) AS pageview_count, uniqCombinedState(17)(visitor_id) AS visitors
FROM sessions
GROUP BY site_key, started_at, country_code, region_code, region_name, city;

CREATE MATERIALIZED VIEW IF NOT EXISTS entry_days_mv TO entry_days AS
SELECT site_key, toDateTime(intDiv(toUInt32(started_at), 86400) * 86400) AS started_at, entry_page, sum(sign) AS sessions, sum(sign * is_bounce) AS bounces, sum(sign * duration) AS duration_sum, sum(sign * pageviews) AS pageview_count
FROM sessions
GROUP BY site_key, started_at, entry_page;
TRUNCATE TABLE entry_days;
INSERT INTO entry_days (site_key, started_at, entry_page, sessions, bounces, duration_sum, pageview_count)
SELECT site_key, toDateTime(intDiv(toUInt32(started_at), 86400) * 86400) AS started_at, entry_page, sum(sign) AS sessions, sum(sign * is_bounce) AS bounces, sum(sign * duration) AS duration_sum, sum(sign * pageviews) AS pageview_count
FROM sessions
GROUP BY site_key, started_at, entry_page;

CREATE MATERIALIZED VIEW IF NOT EXISTS exit_days_mv TO exit_days AS
SELECT site_key, toDateTime(intDiv(toUInt32(started_at), 86400) * 86400) AS started_at, exit_page, sum(sign) AS sessions, sum(sign * is_bounce) AS bounces, sum(sign * duration) AS duration_sum, sum(sign * pageviews) AS pageview_count
FROM sessions
GROUP BY site_key, started_at, exit_page;
TRUNCATE TABLE exit_days;
INSERT INTO exit_days (site_key, started_at, exit_page, sessions, bounces, duration_sum, pageview_count)
SELECT site_key, toDateTime(intDiv(toUInt32(started_at), 86400) * 86400) AS started_at, exit_page, sum(sign) AS sessions, sum(sign * is_bounce) AS bounces, sum(sign * duration) AS duration_sum, sum(sign * pageviews) AS pageview_count
FROM sessions
GROUP BY site_key, started_at, exit_page;

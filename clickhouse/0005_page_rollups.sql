-- Daily per-page rollups of events, kept in step with every insert by
-- materialised views, so the pages report reads a few thousand rows per site
-- and month instead of every pageview (on 10M events: the 30-day top pages in
-- ~70 ms against ~1 s). Days are UTC days; a range in another time zone reads
-- its partial first and last days from events (internal/stats/rollup.go).
--
-- On a cluster the rollups are local tables beside each shard's events, fed
-- by views on the shard's own inserts, with Distributed tables to read them:
-- a page's rows of one day may sit on every shard, and queries add them up
-- (sum, uniqCombinedMerge) as they add up a node's unmerged parts.
--
-- page_days: pageviews of each page, and the time spent on it (time_on_prev
-- of the next pageview, summed by the page it was spent on).
CREATE TABLE IF NOT EXISTS {{local "page_days"}} {{onCluster}} (
    site_key   UInt64,
    day        Date,
    pathname   String,
    pageviews  UInt64,
    time_sum   UInt64,
    time_count UInt64
) ENGINE = {{engine "page_days" "SummingMergeTree"}}
PARTITION BY toYYYYMM(day)
ORDER BY (site_key, day, pathname);

{{distributed "page_days" "site_key"}};

-- page_visitor_days: the distinct visitors of each page, as mergeable
-- uniqCombined(14) states (~0.4 % error on large pages, exact on small ones;
-- ~12 KB per large page and day, 1 % of the events' size).
CREATE TABLE IF NOT EXISTS {{local "page_visitor_days"}} {{onCluster}} (
    site_key UInt64,
    day      Date,
    pathname String,
    visitors AggregateFunction(uniqCombined(14), UInt64)
) ENGINE = {{engine "page_visitor_days" "AggregatingMergeTree"}}
PARTITION BY toYYYYMM(day)
ORDER BY (site_key, day, pathname);

{{distributed "page_visitor_days" "site_key"}};

CREATE MATERIALIZED VIEW IF NOT EXISTS {{local "page_days_views"}} {{onCluster}} TO {{local "page_days"}} AS
SELECT site_key, toDate(ts, 'UTC') AS day, pathname,
       count() AS pageviews, toUInt64(0) AS time_sum, toUInt64(0) AS time_count
FROM {{local "events"}} WHERE is_pageview = 1
GROUP BY site_key, day, pathname;

CREATE MATERIALIZED VIEW IF NOT EXISTS {{local "page_days_times"}} {{onCluster}} TO {{local "page_days"}} AS
SELECT site_key, toDate(ts, 'UTC') AS day, prev_pathname AS pathname,
       toUInt64(0) AS pageviews, toUInt64(sum(time_on_prev)) AS time_sum, count() AS time_count
FROM {{local "events"}} WHERE is_pageview = 1 AND prev_pathname != ''
GROUP BY site_key, day, prev_pathname;

CREATE MATERIALIZED VIEW IF NOT EXISTS {{local "page_visitor_days_mv"}} {{onCluster}} TO {{local "page_visitor_days"}} AS
SELECT site_key, toDate(ts, 'UTC') AS day, pathname, uniqCombinedState(14)(visitor_id) AS visitors
FROM {{local "events"}} WHERE is_pageview = 1
GROUP BY site_key, day, pathname;

-- Backfill what events held before the views existed. Emptying first makes a
-- re-run rebuild rather than double the rollups; events inserted while this
-- runs could be counted twice, so migrate before tally servers start (as
-- docker-compose and `go tool task up` do), from one place. On a cluster the
-- inserts go through the Distributed tables, reading every shard's events.
TRUNCATE TABLE {{local "page_days"}} {{onCluster}};
TRUNCATE TABLE {{local "page_visitor_days"}} {{onCluster}};

INSERT INTO page_days (site_key, day, pathname, pageviews, time_sum, time_count)
SELECT site_key, toDate(ts, 'UTC') AS day, pathname, count(), toUInt64(0), toUInt64(0)
FROM events WHERE is_pageview = 1
GROUP BY site_key, day, pathname;

INSERT INTO page_days (site_key, day, pathname, pageviews, time_sum, time_count)
SELECT site_key, toDate(ts, 'UTC') AS day, prev_pathname, toUInt64(0), toUInt64(sum(time_on_prev)), count()
FROM events WHERE is_pageview = 1 AND prev_pathname != ''
GROUP BY site_key, day, prev_pathname;

INSERT INTO page_visitor_days (site_key, day, pathname, visitors)
SELECT site_key, toDate(ts, 'UTC') AS day, pathname, uniqCombinedState(14)(visitor_id)
FROM events WHERE is_pageview = 1
GROUP BY site_key, day, pathname;

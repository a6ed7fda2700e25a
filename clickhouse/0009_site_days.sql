-- The overview's totals by UTC day, beside site_quarters: a day's visitors
-- are one uniqCombined state to merge where its quarters' are 96, so a
-- range reads its whole UTC days here and only the parts of days at its
-- edges from site_quarters (internal/stats/rollups.go declares both; a test
-- holds this file to the declaration). Visitors, pageviews and events of
-- each site and UTC day, kept in step with every insert into events.
CREATE TABLE IF NOT EXISTS site_days (
    site_key       UInt64,
    ts             DateTime,
    visitors       AggregateFunction(uniqCombined(17), UInt64),
    pageview_count UInt64,
    event_count    UInt64
) ENGINE = SummingMergeTree
PARTITION BY toYYYYMM(ts)
ORDER BY (site_key, ts);

-- The view, then the backfill of what events held before it (emptying
-- first makes a re-run rebuild rather than double; as for 0008, migrate
-- before tally servers start).
CREATE MATERIALIZED VIEW IF NOT EXISTS site_days_mv TO site_days AS
SELECT site_key, toDateTime(intDiv(toUInt32(ts), 86400) * 86400) AS ts, uniqCombinedState(17)(visitor_id) AS visitors, sum(is_pageview) AS pageview_count, count() AS event_count
FROM events
GROUP BY site_key, ts;
TRUNCATE TABLE site_days;
INSERT INTO site_days (site_key, ts, visitors, pageview_count, event_count)
SELECT site_key, toDateTime(intDiv(toUInt32(ts), 86400) * 86400) AS ts, uniqCombinedState(17)(visitor_id) AS visitors, sum(is_pageview) AS pageview_count, count() AS event_count
FROM events
GROUP BY site_key, ts;

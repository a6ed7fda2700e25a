-- The events' visitor states count known visitors only. A payment sent
-- without a visitor is stored with visitor id 0, and so is the event it
-- names (an event and a conversion, but nobody): the overview's, the
-- events' and the goals' visitors counted a visitor 0 once a range. The
-- visitors of events are now uniqCombinedIf(visitor_id, visitor_id != 0)
-- (internal/stats/vocabulary.go), whose state has the type of
-- uniqCombined's, so the tables stay as they are. Each rollup of events
-- that holds visitor states gets its view again with the new state
-- (internal/stats/rollups.go declares them; a test holds this file to the
-- declarations), then is emptied and built again from the events, as every
-- rollup's migration does: a state cannot lose a visitor. As for 0008,
-- migrate before tally servers start; the backfill reads the events once a
-- table. The session rollups have no visitor 0 (such an event has no
-- session) and stay as they are.

-- site_days
DROP TABLE IF EXISTS {{local "site_days_mv"}} {{onCluster}};
CREATE MATERIALIZED VIEW IF NOT EXISTS {{local "site_days_mv"}} {{onCluster}} TO {{local "site_days"}} AS
SELECT site_key, toDateTime(intDiv(toUInt32(ts), 86400) * 86400) AS ts, uniqCombinedStateIf(17)(visitor_id, visitor_id != 0) AS visitors, sum(is_pageview) AS pageview_count, count() AS event_count
FROM {{local "events"}}
GROUP BY site_key, ts;
TRUNCATE TABLE {{local "site_days"}} {{onCluster}};
INSERT INTO site_days (site_key, ts, visitors, pageview_count, event_count)
SELECT site_key, toDateTime(intDiv(toUInt32(ts), 86400) * 86400) AS ts, uniqCombinedStateIf(17)(visitor_id, visitor_id != 0) AS visitors, sum(is_pageview) AS pageview_count, count() AS event_count
FROM events
GROUP BY site_key, ts;

-- site_quarters
DROP TABLE IF EXISTS {{local "site_quarters_mv"}} {{onCluster}};
CREATE MATERIALIZED VIEW IF NOT EXISTS {{local "site_quarters_mv"}} {{onCluster}} TO {{local "site_quarters"}} AS
SELECT site_key, toDateTime(intDiv(toUInt32(ts), 900) * 900) AS ts, uniqCombinedStateIf(17)(visitor_id, visitor_id != 0) AS visitors, sum(is_pageview) AS pageview_count, count() AS event_count
FROM {{local "events"}}
GROUP BY site_key, ts;
TRUNCATE TABLE {{local "site_quarters"}} {{onCluster}};
INSERT INTO site_quarters (site_key, ts, visitors, pageview_count, event_count)
SELECT site_key, toDateTime(intDiv(toUInt32(ts), 900) * 900) AS ts, uniqCombinedStateIf(17)(visitor_id, visitor_id != 0) AS visitors, sum(is_pageview) AS pageview_count, count() AS event_count
FROM events
GROUP BY site_key, ts;

-- event_days
DROP TABLE IF EXISTS {{local "event_days_mv"}} {{onCluster}};
CREATE MATERIALIZED VIEW IF NOT EXISTS {{local "event_days_mv"}} {{onCluster}} TO {{local "event_days"}} AS
SELECT site_key, toDateTime(intDiv(toUInt32(ts), 86400) * 86400) AS ts, is_pageview, name, count() AS event_count, uniqCombinedStateIf(17)(visitor_id, visitor_id != 0) AS visitors
FROM {{local "events"}}
GROUP BY site_key, ts, is_pageview, name;
TRUNCATE TABLE {{local "event_days"}} {{onCluster}};
INSERT INTO event_days (site_key, ts, is_pageview, name, event_count, visitors)
SELECT site_key, toDateTime(intDiv(toUInt32(ts), 86400) * 86400) AS ts, is_pageview, name, count() AS event_count, uniqCombinedStateIf(17)(visitor_id, visitor_id != 0) AS visitors
FROM events
GROUP BY site_key, ts, is_pageview, name;

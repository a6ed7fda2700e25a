-- How far visitors scrolled each page: one row per report of the tracking
-- script (sent when a page is hidden or left), no session, counted as no
-- event. The pages report averages each visitor's deepest scroll of a page.
-- Sharded, like events, by visitor, so that a filter's visitors and their
-- rows share a shard.
CREATE TABLE IF NOT EXISTS {{local "engagements"}} {{onCluster}} (
    site_key     UInt64 {{computed}} cityHash64(site_id),
    site_id      String,
    ts           DateTime,
    event_id     String,
    visitor_id   UInt64,
    pathname     String,
    scroll_depth UInt8
) ENGINE = {{engine "engagements" "MergeTree"}}
PARTITION BY toYYYYMM(ts)
ORDER BY (site_key, toDate(ts), pathname, visitor_id)
SAMPLE BY visitor_id;

{{distributed "engagements" "visitor_id"}};

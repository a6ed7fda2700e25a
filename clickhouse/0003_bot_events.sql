-- Traffic recognised as automated: counted, never part of the statistics.
-- No visitor: on a cluster, spread by event id.
CREATE TABLE IF NOT EXISTS {{local "bot_events"}} {{onCluster}} (
    site_key UInt64 {{computed}} cityHash64(site_id),
    site_id  String,
    ts       DateTime,
    event_id String,
    reason   String
) ENGINE = {{engine "bot_events" "MergeTree"}}
PARTITION BY toYYYYMM(ts)
ORDER BY (site_key, ts);

{{distributed "bot_events" "cityHash64(event_id)"}};

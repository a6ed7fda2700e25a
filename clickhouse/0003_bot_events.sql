-- Traffic recognised as automated: counted, never part of the statistics.
CREATE TABLE IF NOT EXISTS bot_events (
    site_key UInt64 MATERIALIZED cityHash64(site_id),
    site_id  String,
    ts       DateTime,
    event_id String,
    reason   String
) ENGINE = MergeTree
PARTITION BY toYYYYMM(ts)
ORDER BY (site_key, ts);

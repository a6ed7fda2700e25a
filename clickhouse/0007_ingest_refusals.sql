-- Tracking health: events refused, per site, quarter of an hour (UTC start;
-- every time zone's day is made of whole quarters) and reason. Each API
-- instance counts in memory and inserts its counts once per flush interval;
-- SummingMergeTree adds up the rows of the same key.
CREATE TABLE IF NOT EXISTS ingest_refusals (
    site_key UInt64 MATERIALIZED cityHash64(site_id),
    site_id  String,
    ts       DateTime,
    reason   String,
    events   UInt64
) ENGINE = SummingMergeTree(events)
PARTITION BY toYYYYMM(ts)
ORDER BY (site_key, ts, reason);

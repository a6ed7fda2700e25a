-- Sessions: one live state per session. Every event of a session writes a
-- cancel row (sign -1) for the previous state and a new state (sign +1,
-- version + 1); queries sum with sign instead of using FINAL. On a cluster,
-- sharded by visitor like events: a session's rows, and so their collapsing,
-- stay on one shard.
CREATE TABLE IF NOT EXISTS {{local "sessions"}} {{onCluster}} (
    site_key         UInt64 {{computed}} cityHash64(site_id),
    site_id          String,
    session_id       UInt64,
    visitor_id       UInt64,
    sign             Int8,
    version          UInt32,
    started_at       DateTime,
    ended_at         DateTime,
    duration         UInt32,
    pageviews        UInt32,
    events           UInt32,
    is_bounce        UInt8,
    entry_page       String,
    exit_page        String,
    hostname         String,
    referrer         String,
    referrer_source  String,
    source_type      String,
    utm_source       String,
    utm_medium       String,
    utm_campaign     String,
    utm_content      String,
    utm_term         String,
    device           String,
    browser          String,
    browser_version  String,
    os               String,
    os_version       String,
    country_code     String,
    region_code      String,
    region_name      String,
    city             String
) ENGINE = {{engine "sessions" "VersionedCollapsingMergeTree" "sign" "version"}}
PARTITION BY toYYYYMM(started_at)
ORDER BY (site_key, toDate(started_at), visitor_id, session_id)
SAMPLE BY visitor_id;

{{distributed "sessions" "visitor_id"}};

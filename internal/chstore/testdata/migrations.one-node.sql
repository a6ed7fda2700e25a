CREATE TABLE IF NOT EXISTS events (
    site_key         UInt64 MATERIALIZED cityHash64(site_id),
    site_id          String,
    ts               DateTime,
    event_id         String,
    name             String,
    is_pageview      UInt8 MATERIALIZED name = 'pageview',
    visitor_id       UInt64,
    session_id       UInt64,
    hostname         String,
    pathname         String,
    prev_pathname    String,
    time_on_prev     UInt32,
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
    city             String,
    props_keys       Array(String),
    props_values     Array(String),
    revenue_amount   Int64,
    revenue_currency String
) ENGINE = MergeTree
PARTITION BY toYYYYMM(ts)
ORDER BY (site_key, toDate(ts), name, visitor_id, ts)
SAMPLE BY visitor_id;
CREATE TABLE IF NOT EXISTS sessions (
    site_key         UInt64 MATERIALIZED cityHash64(site_id),
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
) ENGINE = VersionedCollapsingMergeTree(sign, version)
PARTITION BY toYYYYMM(started_at)
ORDER BY (site_key, toDate(started_at), visitor_id, session_id)
SAMPLE BY visitor_id;
CREATE TABLE IF NOT EXISTS bot_events (
    site_key UInt64 MATERIALIZED cityHash64(site_id),
    site_id  String,
    ts       DateTime,
    event_id String,
    reason   String
) ENGINE = MergeTree
PARTITION BY toYYYYMM(ts)
ORDER BY (site_key, ts);
CREATE TABLE IF NOT EXISTS payments (
    site_key         UInt64 MATERIALIZED cityHash64(site_id),
    site_id          String,
    ts               DateTime,
    payment_id       String,
    provider         String,
    transaction_id   String,
    kind             String,
    amount           Int64,
    currency         String,
    base_amount      Int64,
    base_currency    String,
    visitor_id       UInt64,
    event_name       String,
    attributed       UInt8,
    source           String,
    source_type      String,
    entry_page       String,
    utm_source       String,
    utm_medium       String,
    utm_campaign     String,
    utm_content      String,
    country_code     String,
    device           String,
    ft_source        String,
    ft_source_type   String,
    ft_entry_page    String,
    ft_utm_source    String,
    ft_utm_medium    String,
    ft_utm_campaign  String,
    ft_utm_content   String,
    ft_country_code  String,
    ft_device        String,
    written_at       DateTime
) ENGINE = ReplacingMergeTree(written_at)
PARTITION BY toYYYYMM(ts)
ORDER BY (site_key, toDate(ts), payment_id);
CREATE TABLE IF NOT EXISTS page_days (
    site_key   UInt64,
    day        Date,
    pathname   String,
    pageviews  UInt64,
    time_sum   UInt64,
    time_count UInt64
) ENGINE = SummingMergeTree
PARTITION BY toYYYYMM(day)
ORDER BY (site_key, day, pathname);
CREATE TABLE IF NOT EXISTS page_visitor_days (
    site_key UInt64,
    day      Date,
    pathname String,
    visitors AggregateFunction(uniqCombined(14), UInt64)
) ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(day)
ORDER BY (site_key, day, pathname);
CREATE MATERIALIZED VIEW IF NOT EXISTS page_days_views TO page_days AS
SELECT site_key, toDate(ts, 'UTC') AS day, pathname,
       count() AS pageviews, toUInt64(0) AS time_sum, toUInt64(0) AS time_count
FROM events WHERE is_pageview = 1
GROUP BY site_key, day, pathname;
CREATE MATERIALIZED VIEW IF NOT EXISTS page_days_times TO page_days AS
SELECT site_key, toDate(ts, 'UTC') AS day, prev_pathname AS pathname,
       toUInt64(0) AS pageviews, toUInt64(sum(time_on_prev)) AS time_sum, count() AS time_count
FROM events WHERE is_pageview = 1 AND prev_pathname != ''
GROUP BY site_key, day, prev_pathname;
CREATE MATERIALIZED VIEW IF NOT EXISTS page_visitor_days_mv TO page_visitor_days AS
SELECT site_key, toDate(ts, 'UTC') AS day, pathname, uniqCombinedState(14)(visitor_id) AS visitors
FROM events WHERE is_pageview = 1
GROUP BY site_key, day, pathname;
TRUNCATE TABLE page_days;
TRUNCATE TABLE page_visitor_days;
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

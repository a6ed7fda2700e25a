-- Payments and refunds converted into the site's base currency, with their
-- attribution (last touch, and first touch as ft_*). Written from the
-- Postgres ledger once converted; ReplacingMergeTree is a backstop against a
-- row written twice, which the exporter already avoids. On a cluster,
-- sharded by visitor: a payment's copies meet on one shard, where they are
-- replaced, beside the sessions of its visitor.
CREATE TABLE IF NOT EXISTS {{local "payments"}} {{onCluster}} (
    site_key         UInt64 {{computed}} cityHash64(site_id),
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
) ENGINE = {{engine "payments" "ReplacingMergeTree" "written_at"}}
PARTITION BY toYYYYMM(ts)
ORDER BY (site_key, toDate(ts), payment_id);

{{distributed "payments" "visitor_id"}};

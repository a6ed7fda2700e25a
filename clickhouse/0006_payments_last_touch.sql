-- The last touch of each payment: the visitor's last session before it,
-- direct visits included (lt_*), beside the last non-direct touch (the
-- unprefixed columns) and the first touch (ft_*). Rows written before this
-- migration read their last non-direct values here (the DEFAULT of a column
-- an ALTER adds is computed when old parts are read): that is all tally knew
-- of them. The exporter writes every lt_* column of new rows.
--
-- One column per statement and no IF NOT EXISTS, which ClickHouse 18.16
-- cannot parse: the migrator takes an ADD COLUMN whose column exists as
-- applied, so a run cut short after some of them finishes on the next start.
ALTER TABLE payments ADD COLUMN lt_source String DEFAULT source;
ALTER TABLE payments ADD COLUMN lt_source_type String DEFAULT source_type;
ALTER TABLE payments ADD COLUMN lt_entry_page String DEFAULT entry_page;
ALTER TABLE payments ADD COLUMN lt_utm_source String DEFAULT utm_source;
ALTER TABLE payments ADD COLUMN lt_utm_medium String DEFAULT utm_medium;
ALTER TABLE payments ADD COLUMN lt_utm_campaign String DEFAULT utm_campaign;
ALTER TABLE payments ADD COLUMN lt_utm_content String DEFAULT utm_content;
ALTER TABLE payments ADD COLUMN lt_country_code String DEFAULT country_code;
ALTER TABLE payments ADD COLUMN lt_device String DEFAULT device;

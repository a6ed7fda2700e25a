-- A report handed over to the mail server whose reply never came (a
-- timeout after the message's data, a dropped connection): the server may
-- have queued it, so it is never sent again automatically, which could
-- deliver it twice. unknown_at is when that attempt ended; such a
-- delivery is settled as a sent one is, its error kept in last_error.
ALTER TABLE report_deliveries ADD COLUMN IF NOT EXISTS unknown_at timestamptz;

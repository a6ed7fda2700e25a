-- A refund of a payment the ledger does not hold yet (providers deliver out
-- of order) waits for its payment until held_until before it is exported:
-- a payment recorded meanwhile gives it its visitor and attribution. NULL:
-- not held (a linked refund, a payment, every row from before this column).
ALTER TABLE payments ADD COLUMN IF NOT EXISTS held_until timestamptz;

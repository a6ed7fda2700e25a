-- Payments waiting for an exchange rate, read page by page in this order:
-- those of a currency without rates must not hold back the others.
CREATE INDEX IF NOT EXISTS payments_pending_idx ON payments (occurred_at, id)
    WHERE base_amount IS NULL AND kind <> 'failed';

-- A refund keeps the provider's id of the payment it undoes (payment_ref),
-- so that a running refund total counts once whether or not the payment is
-- in the ledger. Refunds linked before kept none: they take their payment's.
UPDATE payments AS r SET payment_ref = p.payment_ref
    FROM payments AS p
    WHERE r.kind = 'refund' AND r.payment_ref IS NULL AND r.refund_of = p.id;

-- Payments waiting for an exchange rate, read page by page in this order:
-- those of a currency without rates must not hold back the others.
CREATE INDEX IF NOT EXISTS payments_pending_idx ON payments (occurred_at, id)
    WHERE base_amount IS NULL AND kind <> 'failed';

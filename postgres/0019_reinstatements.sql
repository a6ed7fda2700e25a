-- A payment that is money a won dispute brought back (Stripe's
-- charge.dispute.funds_reinstated, Paddle's chargeback_reverse): its
-- chargeback was recorded as a refund of payment_ref, and a provider's
-- running refund total (Stripe's amount_refunded) counts neither, so what is
-- refunded of a payment is its refunds less these. The service sets it.
ALTER TABLE payments ADD COLUMN IF NOT EXISTS reinstatement boolean NOT NULL DEFAULT false;

-- Rows recorded before the column are known by the keys tally gave them:
-- "<dispute id>:reinstated" for Stripe, the reversing adjustment's id
-- (adj_…, where Paddle's payments are keyed by their txn_… id) for Paddle.
UPDATE payments SET reinstatement = true
    WHERE kind = 'payment' AND payment_ref IS NOT NULL AND (
        provider = 'provider_a' AND transaction_id LIKE '%:reinstated'
        OR provider = 'provider_c' AND transaction_id LIKE 'adj\_%');

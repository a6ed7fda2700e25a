-- Revenue the tracking script reports is unsigned: anyone can send it. Each
-- site says whether it counts with verified revenue (webhooks, the payments
-- API, the Events API) and caps what one event may report, in minor units of
-- the base currency (0: the site takes none).
ALTER TABLE sites ADD COLUMN client_revenue_included boolean NOT NULL DEFAULT false;
ALTER TABLE sites ADD COLUMN client_revenue_cap bigint NOT NULL DEFAULT 1000000 CHECK (client_revenue_cap >= 0);

-- Several visitors may claim one checkout session; the first who had viewed
-- a page of the site before claiming it is the buyer. Claims expire.
ALTER TABLE checkout_sessions ADD COLUMN claimed_at timestamptz;
UPDATE checkout_sessions SET claimed_at = created_at;
ALTER TABLE checkout_sessions ALTER COLUMN claimed_at SET NOT NULL;
ALTER TABLE checkout_sessions DROP CONSTRAINT checkout_sessions_pkey;
ALTER TABLE checkout_sessions ADD PRIMARY KEY (site_id, checkout_session_id, visitor_id);

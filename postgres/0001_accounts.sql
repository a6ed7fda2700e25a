-- Accounts, sites, memberships and API keys.

CREATE TABLE users (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    email           text NOT NULL,
    name            text NOT NULL,
    password_hash   text NOT NULL,
    plan            text NOT NULL DEFAULT 'free' CHECK (plan IN ('free', 'pro', 'enterprise')),
    -- events per hour for enterprise accounts; NULL means the plan's default
    events_per_hour integer CHECK (events_per_hour IS NULL OR events_per_hour > 0),
    created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX users_email_key ON users (lower(email));

CREATE TABLE sites (
    id            text PRIMARY KEY,
    domain        text NOT NULL,
    timezone      text NOT NULL DEFAULT 'UTC',
    base_currency char(3) NOT NULL DEFAULT 'USD',
    created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX sites_domain_idx ON sites (domain);

CREATE TABLE site_members (
    site_id    text NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    user_id    uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    role       text NOT NULL CHECK (role IN ('owner', 'admin', 'viewer')),
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (site_id, user_id)
);
CREATE INDEX site_members_user_idx ON site_members (user_id);

CREATE TABLE api_keys (
    id           text PRIMARY KEY,
    user_id      uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name         text NOT NULL,
    -- the first characters of the key, shown in listings
    prefix       text NOT NULL,
    -- SHA-256 of the whole key; the key itself is never stored
    hash         bytea NOT NULL UNIQUE,
    environment  text NOT NULL CHECK (environment IN ('live', 'test')),
    scopes       text[] NOT NULL,
    expires_at   timestamptz,
    revoked_at   timestamptz,
    last_used_at timestamptz,
    created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX api_keys_user_idx ON api_keys (user_id);

-- Webhook signing secrets of the payment providers, per site.
CREATE TABLE site_provider_secrets (
    site_id    text NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    provider   text NOT NULL CHECK (provider IN ('provider_a', 'provider_b', 'provider_c', 'provider_d')),
    secret     text NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (site_id, provider)
);

-- Daily random salts for visitor ids of events that carry no visitor id.
-- Old salts are deleted so yesterday's visitors cannot be re-identified.
CREATE TABLE visitor_salts (
    day  date PRIMARY KEY,
    salt bytea NOT NULL
);

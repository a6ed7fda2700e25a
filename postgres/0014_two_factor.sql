-- Two-factor authentication (TOTP, RFC 6238) of accounts. The secret is
-- sealed with TALLY_SECRETS_KEY (as the webhook secrets are), bound to its
-- user; enabled_at is NULL while the user is setting it up (the secret is
-- shown, no code confirmed yet), and 2FA is on once it is set. last_step is
-- the last time step a code was accepted for: a code is accepted only for a
-- later step, so none is accepted twice.
CREATE TABLE IF NOT EXISTS user_totp (
    user_id    uuid PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    secret     text NOT NULL,
    enabled_at timestamptz,
    last_step  bigint,
    created_at timestamptz NOT NULL DEFAULT now()
);

-- Single-use recovery codes: only their SHA-256 is kept (they are random,
-- 80 bits: no slow hash is needed); a used one is deleted.
CREATE TABLE IF NOT EXISTS user_recovery_codes (
    user_id    uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    code_hash  bytea NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, code_hash)
);

-- Dashboard logins whose password was right and that wait for the second
-- factor: the browser holds a random token, only its SHA-256 is kept. It is
-- no login: it opens no page, and it ends when used or after five minutes.
CREATE TABLE IF NOT EXISTS login_challenges (
    token_hash bytea PRIMARY KEY,
    user_id    uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    expires_at timestamptz NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS login_challenges_expiry_idx ON login_challenges (expires_at);

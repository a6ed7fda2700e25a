-- Passwords changed and reset.
--
-- A login token (JWT) is not stored: it carries the token generation of its
-- user at issue, and is refused once the user's has moved on. Changing or
-- resetting a password moves it on, which ends every login token of the
-- user at once; API keys are not login tokens and stay.
ALTER TABLE users ADD COLUMN IF NOT EXISTS token_generation bigint NOT NULL DEFAULT 0;

-- Servers cache what a login token resolved to: a generation moved on,
-- by tally or by hand, is announced like every other change to access.
DROP TRIGGER IF EXISTS users_access_changed ON users;
CREATE TRIGGER users_access_changed AFTER DELETE OR UPDATE OF plan, events_per_hour, token_generation ON users
    FOR EACH STATEMENT EXECUTE FUNCTION tally_access_changed();

-- The link of a forgotten password: a random token of 256 bits, of which
-- only the SHA-256 is kept. One per user (the newest: asking again replaces
-- it), single-use, valid for an hour.
CREATE TABLE IF NOT EXISTS password_resets (
    user_id    uuid PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    token_hash bytea NOT NULL UNIQUE,
    expires_at timestamptz NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS password_resets_expiry_idx ON password_resets (expires_at);

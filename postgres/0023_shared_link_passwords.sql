-- A shared link may have a password: only its argon2id hash is kept (as for
-- accounts' passwords), NULL when the link has none. A visitor who gives it
-- gets a cookie the server checks against the link's id and this hash, so
-- that changing or removing the password closes the link to every browser
-- that opened it before.
ALTER TABLE shared_links ADD COLUMN IF NOT EXISTS password_hash text;

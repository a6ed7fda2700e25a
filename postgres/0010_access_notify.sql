-- Every change to credentials and access — made by tally or by hand in this
-- database — is announced on the channel tally_access when its transaction
-- commits. Each server listens and forgets the credentials, roles and sites
-- it cached, so a key or user deleted by hand stops working at once.
-- (Function bodies stay on one line: migrations split at a semicolon that
-- ends a line.)
CREATE OR REPLACE FUNCTION tally_access_changed() RETURNS trigger LANGUAGE plpgsql AS
$$ BEGIN PERFORM pg_notify('tally_access', TG_TABLE_NAME); RETURN NULL; END $$;

DROP TRIGGER IF EXISTS users_access_changed ON users;
CREATE TRIGGER users_access_changed AFTER DELETE OR UPDATE OF plan, events_per_hour ON users
    FOR EACH STATEMENT EXECUTE FUNCTION tally_access_changed();

-- last_used_at is written every 30 s and changes no access
DROP TRIGGER IF EXISTS api_keys_access_changed ON api_keys;
CREATE TRIGGER api_keys_access_changed
    AFTER DELETE OR UPDATE OF user_id, hash, environment, scopes, expires_at, revoked_at ON api_keys
    FOR EACH STATEMENT EXECUTE FUNCTION tally_access_changed();

DROP TRIGGER IF EXISTS site_members_access_changed ON site_members;
CREATE TRIGGER site_members_access_changed AFTER INSERT OR UPDATE OR DELETE ON site_members
    FOR EACH STATEMENT EXECUTE FUNCTION tally_access_changed();

DROP TRIGGER IF EXISTS sites_access_changed ON sites;
CREATE TRIGGER sites_access_changed AFTER UPDATE OR DELETE ON sites
    FOR EACH STATEMENT EXECUTE FUNCTION tally_access_changed();

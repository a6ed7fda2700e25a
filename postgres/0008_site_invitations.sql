-- A role given to an email that has no account yet: it becomes a membership
-- when an account with that email is created. The member form answers the
-- same whether the email has an account or not, so it tells nobody which
-- emails do.
CREATE TABLE site_invitations (
    site_id    text NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    email      text NOT NULL CHECK (email = lower(email)),
    role       text NOT NULL CHECK (role IN ('admin', 'viewer')),
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (site_id, email)
);
CREATE INDEX site_invitations_email_idx ON site_invitations (email);

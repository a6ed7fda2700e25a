package pgstore

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/tally-analytics/tally/internal/model"
)

const siteColumns = "id, domain, timezone, base_currency, client_revenue_included, client_revenue_cap, " +
	"excluded_pages, excluded_addresses, excluded_hosts, created_at"

// siteFields are siteColumns of the table aliased s.
const siteFields = "s.id, s.domain, s.timezone, s.base_currency, s.client_revenue_included, s.client_revenue_cap, " +
	"s.excluded_pages, s.excluded_addresses, s.excluded_hosts, s.created_at"

// scanSite reads siteColumns (or siteFields), then extra.
func scanSite(row interface{ Scan(...any) error }, extra ...any) (model.Site, error) {
	var s model.Site
	var id string
	err := row.Scan(append([]any{&id, &s.Domain, &s.Timezone, &s.BaseCurrency, &s.ClientRevenue.Included,
		&s.ClientRevenue.Cap, &s.Exclusions.Pages, &s.Exclusions.Addresses, &s.Exclusions.Hosts, &s.CreatedAt}, extra...)...)
	s.ID = model.SiteID(id)
	return s, err
}

// CreateSite stores a site and makes owner its owner, in one transaction.
func (s *Store) CreateSite(ctx context.Context, site model.Site, owner model.UserID) (model.Site, error) {
	var created model.Site
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var err error
		created, err = scanSite(tx.QueryRow(ctx, `INSERT INTO sites (id, domain, timezone, base_currency,
			client_revenue_included, client_revenue_cap, excluded_pages, excluded_addresses, excluded_hosts)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING `+siteColumns,
			string(site.ID), site.Domain, site.Timezone, site.BaseCurrency, site.ClientRevenue.Included, site.ClientRevenue.Cap,
			list(site.Exclusions.Pages), list(site.Exclusions.Addresses), list(site.Exclusions.Hosts)))
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, "INSERT INTO site_members (site_id, user_id, role) VALUES ($1, $2, $3)",
			string(site.ID), string(owner), string(model.RoleOwner))
		return err
	})
	return created, translate("pgstore: create site", err)
}

// SiteByID finds a site.
func (s *Store) SiteByID(ctx context.Context, id model.SiteID) (model.Site, error) {
	site, err := scanSite(s.pool.QueryRow(ctx, "SELECT "+siteColumns+" FROM sites WHERE id = $1", string(id)))
	return site, translate("pgstore: site by id", err)
}

// SitesByUser lists the sites a user is a member of, oldest first.
func (s *Store) SitesByUser(ctx context.Context, user model.UserID) ([]model.Site, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+siteFields+`
		FROM sites s JOIN site_members m ON m.site_id = s.id
		WHERE m.user_id = $1 ORDER BY s.created_at, s.id`, string(user))
	if err != nil {
		return nil, translate("pgstore: sites by user", err)
	}
	sites, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (model.Site, error) { return scanSite(r) })
	return sites, translate("pgstore: sites by user", err)
}

// AddMember gives user a role on site, replacing any role they had.
func (s *Store) AddMember(ctx context.Context, site model.SiteID, user model.UserID, role model.Role) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO site_members (site_id, user_id, role) VALUES ($1, $2, $3)
		ON CONFLICT (site_id, user_id) DO UPDATE SET role = EXCLUDED.role`, string(site), string(user), string(role))
	return translate("pgstore: add member", err)
}

// MemberRole is user's role on site; errs.ErrNotFound when the site does not
// exist or the user is not a member (the two are deliberately the same).
func (s *Store) MemberRole(ctx context.Context, site model.SiteID, user model.UserID) (model.Role, error) {
	var role string
	err := s.pool.QueryRow(ctx, "SELECT role FROM site_members WHERE site_id = $1 AND user_id = $2",
		string(site), string(user)).Scan(&role)
	return model.Role(role), translate("pgstore: member role", err)
}

// UpdateProviderSecrets changes a site's webhook signing secrets for a
// provider: update is given the secrets held now (none when there is no row)
// and returns those to keep, sealed together as one value (see WithSecrets
// and joinSecrets). The row is locked meanwhile, so two changes at once do
// not lose one another; an error from update is returned as it is.
func (s *Store) UpdateProviderSecrets(ctx context.Context, site model.SiteID, p model.Provider, update func(current []string) ([]string, error)) error {
	if s.secrets == nil {
		return errNoSecretsKey
	}
	var updateErr error
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var current []string
		var sealed string
		err := tx.QueryRow(ctx, `SELECT secret FROM site_provider_secrets WHERE site_id = $1 AND provider = $2 FOR UPDATE`,
			string(site), string(p)).Scan(&sealed)
		switch {
		case err == nil:
			plain, _, err := s.secrets.Open(sealed, secretRow(site, p))
			if err != nil {
				return fmt.Errorf("open the secrets of %s/%s: %w", site, p, err)
			}
			current = splitSecrets(plain)
		case !errors.Is(err, pgx.ErrNoRows):
			return err
		}
		next, err := update(current)
		if err != nil {
			updateErr = err
			return err
		}
		if sealed, err = s.secrets.Seal(joinSecrets(next), secretRow(site, p)); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO site_provider_secrets (site_id, provider, secret) VALUES ($1, $2, $3)
			ON CONFLICT (site_id, provider) DO UPDATE SET secret = EXCLUDED.secret, updated_at = now()`,
			string(site), string(p), sealed)
		return err
	})
	if updateErr != nil {
		return updateErr
	}
	return translate("pgstore: set provider secrets", err)
}

// ProviderSecrets returns a site's webhook signing secrets for a provider,
// in the order they were set (errs.ErrNotFound when there are none).
func (s *Store) ProviderSecrets(ctx context.Context, site model.SiteID, p model.Provider) ([]string, error) {
	if s.secrets == nil {
		return nil, errNoSecretsKey
	}
	var sealed string
	err := s.pool.QueryRow(ctx, "SELECT secret FROM site_provider_secrets WHERE site_id = $1 AND provider = $2",
		string(site), string(p)).Scan(&sealed)
	if err != nil {
		return nil, translate("pgstore: provider secrets", err)
	}
	plain, _, err := s.secrets.Open(sealed, secretRow(site, p))
	if err != nil {
		return nil, fmt.Errorf("pgstore: provider secrets of %s/%s: %w", site, p, err)
	}
	secrets := splitSecrets(plain)
	if len(secrets) == 0 {
		return nil, translate("pgstore: provider secrets", pgx.ErrNoRows)
	}
	return secrets, nil
}

// A provider's secrets are sealed together, one a line: no secret holds a
// line break (accounts refuses control characters in a secret, and always
// has), so a value sealed before a site could hold several is a list of one.
func joinSecrets(secrets []string) string { return strings.Join(secrets, "\n") }

func splitSecrets(plain string) []string {
	var out []string
	for _, s := range strings.Split(plain, "\n") {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// ResealSecrets seals again, with the current key, every provider secret
// and TOTP secret sealed with an earlier key (or a provider secret stored
// before secrets were sealed), and says how many it changed. A secret no
// configured key opens is an error.
func (s *Store) ResealSecrets(ctx context.Context) (int, error) {
	if s.secrets == nil {
		return 0, errNoSecretsKey
	}
	n, err := s.resealProviderSecrets(ctx)
	if err != nil {
		return n, err
	}
	m, err := s.resealTOTP(ctx)
	return n + m, err
}

func (s *Store) resealProviderSecrets(ctx context.Context) (int, error) {
	rows, err := s.pool.Query(ctx, "SELECT site_id, provider, secret FROM site_provider_secrets")
	if err != nil {
		return 0, translate("pgstore: reseal secrets", err)
	}
	type row struct{ site, provider, secret string }
	all, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (row, error) {
		var x row
		err := r.Scan(&x.site, &x.provider, &x.secret)
		return x, err
	})
	if err != nil {
		return 0, translate("pgstore: reseal secrets", err)
	}
	n := 0
	for _, x := range all {
		aad := secretRow(model.SiteID(x.site), model.Provider(x.provider))
		plain, current, err := s.secrets.Open(x.secret, aad)
		if err != nil {
			return n, fmt.Errorf("pgstore: reseal the secret of %s/%s: %w", x.site, x.provider, err)
		}
		if current {
			continue
		}
		sealed, err := s.secrets.Seal(plain, aad)
		if err != nil {
			return n, fmt.Errorf("pgstore: reseal secrets: %w", err)
		}
		// only if unchanged meanwhile
		tag, err := s.pool.Exec(ctx, `UPDATE site_provider_secrets SET secret = $4
			WHERE site_id = $1 AND provider = $2 AND secret = $3`, x.site, x.provider, x.secret, sealed)
		if err != nil {
			return n, translate("pgstore: reseal secrets", err)
		}
		n += int(tag.RowsAffected())
	}
	return n, nil
}

// errNoSecretsKey: the store was opened without WithSecrets.
var errNoSecretsKey = errors.New("pgstore: no key to seal provider secrets with (TALLY_SECRETS_KEY)")

// secretRow binds a sealed secret to its row.
func secretRow(site model.SiteID, p model.Provider) string { return string(site) + "/" + string(p) }

// UpdateSite replaces a site's domain, time zone, base currency, client
// revenue policy and exclusions.
func (s *Store) UpdateSite(ctx context.Context, site model.Site) (model.Site, error) {
	updated, err := scanSite(s.pool.QueryRow(ctx, `UPDATE sites SET domain = $2, timezone = $3, base_currency = $4,
		client_revenue_included = $5, client_revenue_cap = $6,
		excluded_pages = $7, excluded_addresses = $8, excluded_hosts = $9
		WHERE id = $1 RETURNING `+siteColumns, string(site.ID), site.Domain, site.Timezone, site.BaseCurrency,
		site.ClientRevenue.Included, site.ClientRevenue.Cap,
		list(site.Exclusions.Pages), list(site.Exclusions.Addresses), list(site.Exclusions.Hosts)))
	return updated, translate("pgstore: update site", err)
}

// list is l as a Postgres array: empty, not NULL, when l is nil.
func list(l []string) []string {
	if l == nil {
		return []string{}
	}
	return l
}

// HasPayments reports whether a site has recorded payments.
func (s *Store) HasPayments(ctx context.Context, site model.SiteID) (bool, error) {
	var has bool
	err := s.pool.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM payments WHERE site_id = $1)", string(site)).Scan(&has)
	return has, translate("pgstore: has payments", err)
}

// DeleteSite deletes a site and everything Postgres holds for it, and
// queues the removal of its data elsewhere, in one transaction.
func (s *Store) DeleteSite(ctx context.Context, site model.SiteID) error {
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, "DELETE FROM sites WHERE id = $1", string(site))
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return pgx.ErrNoRows
		}
		_, err = tx.Exec(ctx, `INSERT INTO site_deletions (site_id) VALUES ($1)
			ON CONFLICT (site_id) DO UPDATE SET requested_at = now(), done_at = NULL`, string(site))
		return err
	})
	return translate("pgstore: delete site", err)
}

// PendingDeletions lists the deletions not finished yet.
func (s *Store) PendingDeletions(ctx context.Context) ([]model.SiteDeletion, error) {
	rows, err := s.pool.Query(ctx, "SELECT site_id, requested_at FROM site_deletions WHERE done_at IS NULL ORDER BY requested_at")
	if err != nil {
		return nil, translate("pgstore: pending deletions", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (model.SiteDeletion, error) {
		var d model.SiteDeletion
		var id string
		err := r.Scan(&id, &d.RequestedAt)
		d.SiteID = model.SiteID(id)
		return d, err
	})
	return out, translate("pgstore: pending deletions", err)
}

// FinishDeletion marks a deletion done.
func (s *Store) FinishDeletion(ctx context.Context, site model.SiteID) error {
	_, err := s.pool.Exec(ctx, "UPDATE site_deletions SET done_at = now() WHERE site_id = $1", string(site))
	return translate("pgstore: finish deletion", err)
}

// Memberships lists the sites a user is a member of with their role, oldest first.
func (s *Store) Memberships(ctx context.Context, user model.UserID) ([]model.Membership, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+siteFields+`, m.role
		FROM sites s JOIN site_members m ON m.site_id = s.id
		WHERE m.user_id = $1 ORDER BY s.created_at, s.id`, string(user))
	if err != nil {
		return nil, translate("pgstore: memberships", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (model.Membership, error) {
		var m model.Membership
		var role string
		site, err := scanSite(r, &role)
		m.Site, m.Role = site, model.Role(role)
		return m, err
	})
	return out, translate("pgstore: memberships", err)
}

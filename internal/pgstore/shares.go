package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/model"
)

// errFull ends the creation of a link of a site that has its limit.
var errFull = errors.New("the site has its most shared links")

const sharedLinkColumns = "id, site_id, label, show_revenue, coalesce(created_by::text, ''), created_at, coalesce(password_hash, '')"

func scanSharedLink(row interface{ Scan(...any) error }) (model.SharedLink, error) {
	var l model.SharedLink
	var id, site, by string
	err := row.Scan(&id, &site, &l.Label, &l.ShowRevenue, &by, &l.CreatedAt, &l.PasswordHash)
	l.ID, l.SiteID, l.CreatedBy = model.SharedLinkID(id), model.SiteID(site), model.UserID(by)
	return l, err
}

// CreateSharedLink stores a link by the hash of its token (and the hash of
// its password, if it has one), unless its site
// already has limit links: then it is errs.ErrConflict. Creations for one
// site wait for each other (the site's row is locked, without blocking the
// site's other writes), so concurrent ones cannot pass the limit together.
func (s *Store) CreateSharedLink(ctx context.Context, l model.SharedLink, tokenHash []byte, limit int) (model.SharedLink, error) {
	var created model.SharedLink
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var n int
		if err := tx.QueryRow(ctx, "SELECT 1 FROM sites WHERE id = $1 FOR NO KEY UPDATE", string(l.SiteID)).Scan(&n); err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, "SELECT count(*) FROM shared_links WHERE site_id = $1", string(l.SiteID)).Scan(&n); err != nil {
			return err
		}
		if n >= limit {
			return errFull
		}
		var err error
		created, err = scanSharedLink(tx.QueryRow(ctx, `INSERT INTO shared_links (site_id, label, token_hash, show_revenue, created_by, password_hash)
			VALUES ($1, $2, $3, $4, nullif($5, '')::uuid, nullif($6, '')) RETURNING `+sharedLinkColumns,
			string(l.SiteID), l.Label, tokenHash, l.ShowRevenue, string(l.CreatedBy), l.PasswordHash))
		return err
	})
	if errors.Is(err, errFull) {
		return model.SharedLink{}, fmt.Errorf("pgstore: create shared link: %w", errs.ErrConflict)
	}
	return created, translate("pgstore: create shared link", err)
}

// SharedLinksBySite lists a site's links, oldest first.
func (s *Store) SharedLinksBySite(ctx context.Context, site model.SiteID) ([]model.SharedLink, error) {
	rows, err := s.pool.Query(ctx, "SELECT "+sharedLinkColumns+" FROM shared_links WHERE site_id = $1 ORDER BY created_at, id",
		string(site))
	if err != nil {
		return nil, translate("pgstore: shared links by site", err)
	}
	list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (model.SharedLink, error) { return scanSharedLink(r) })
	return list, translate("pgstore: shared links by site", err)
}

// SharedLinkByHash finds a link by the hash of its token.
func (s *Store) SharedLinkByHash(ctx context.Context, tokenHash []byte) (model.SharedLink, error) {
	l, err := scanSharedLink(s.pool.QueryRow(ctx, "SELECT "+sharedLinkColumns+" FROM shared_links WHERE token_hash = $1", tokenHash))
	return l, translate("pgstore: shared link by hash", err)
}

// SetSharedLinkPassword sets the password hash of a link of site ("" removes
// the password) and returns the link; a link of another site, or an
// unknown id, is errs.ErrNotFound.
func (s *Store) SetSharedLinkPassword(ctx context.Context, site model.SiteID, id model.SharedLinkID, hash string) (model.SharedLink, error) {
	l, err := scanSharedLink(s.pool.QueryRow(ctx, "UPDATE shared_links SET password_hash = nullif($3, '') WHERE id = $1 AND site_id = $2 RETURNING "+
		sharedLinkColumns, string(id), string(site), hash))
	return l, translate("pgstore: set shared link password", err)
}

// DeleteSharedLink deletes a link of site; a link of another site, or an
// unknown id, is errs.ErrNotFound.
func (s *Store) DeleteSharedLink(ctx context.Context, site model.SiteID, id model.SharedLinkID) error {
	tag, err := s.pool.Exec(ctx, "DELETE FROM shared_links WHERE id = $1 AND site_id = $2", string(id), string(site))
	if err == nil && tag.RowsAffected() == 0 {
		err = pgx.ErrNoRows
	}
	return translate("pgstore: delete shared link", err)
}

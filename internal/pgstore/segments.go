package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/model"
)

const segmentColumns = "id, site_id, name, filters, coalesce(created_by::text, ''), created_at"

func scanSegment(row interface{ Scan(...any) error }) (model.Segment, error) {
	var sg model.Segment
	var id, site, by string
	var filters []byte
	if err := row.Scan(&id, &site, &sg.Name, &filters, &by, &sg.CreatedAt); err != nil {
		return sg, err
	}
	sg.ID, sg.SiteID, sg.CreatedBy = model.SegmentID(id), model.SiteID(site), model.UserID(by)
	if err := json.Unmarshal(filters, &sg.Filters); err != nil {
		return sg, fmt.Errorf("filters of segment %s: %w", id, err)
	}
	return sg, nil
}

// CreateSegment stores a segment, unless its site already has limit
// segments (errs.ErrFull) or one of the same name, whatever its case
// (errs.ErrConflict); a site that does not exist is errs.ErrNotFound.
// Creations for one site wait for each other (the site's row is locked,
// without blocking the site's other writes), so concurrent ones cannot pass
// the limit together.
func (s *Store) CreateSegment(ctx context.Context, sg model.Segment, limit int) (model.Segment, error) {
	filters, err := json.Marshal(sg.Filters)
	if err != nil {
		return model.Segment{}, fmt.Errorf("pgstore: create segment: %w", err)
	}
	var created model.Segment
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var n int
		if err := tx.QueryRow(ctx, "SELECT 1 FROM sites WHERE id = $1 FOR NO KEY UPDATE", string(sg.SiteID)).Scan(&n); err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, "SELECT count(*) FROM segments WHERE site_id = $1", string(sg.SiteID)).Scan(&n); err != nil {
			return err
		}
		if n >= limit {
			return errFull
		}
		var err error
		created, err = scanSegment(tx.QueryRow(ctx, `INSERT INTO segments (site_id, name, filters, created_by)
			VALUES ($1, $2, $3, nullif($4, '')::uuid) RETURNING `+segmentColumns,
			string(sg.SiteID), sg.Name, filters, string(sg.CreatedBy)))
		return err
	})
	if errors.Is(err, errFull) {
		return model.Segment{}, fmt.Errorf("pgstore: create segment: %w", errs.ErrFull)
	}
	return created, translate("pgstore: create segment", err)
}

// SegmentsBySite lists a site's segments by name (as people read them:
// case aside), then by age.
func (s *Store) SegmentsBySite(ctx context.Context, site model.SiteID) ([]model.Segment, error) {
	rows, err := s.pool.Query(ctx, "SELECT "+segmentColumns+" FROM segments WHERE site_id = $1 ORDER BY lower(name), created_at, id",
		string(site))
	if err != nil {
		return nil, translate("pgstore: segments by site", err)
	}
	list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (model.Segment, error) { return scanSegment(r) })
	return list, translate("pgstore: segments by site", err)
}

// SegmentOf finds a segment of site; one of another site, or an id that
// is no UUID, is errs.ErrNotFound.
func (s *Store) SegmentOf(ctx context.Context, site model.SiteID, id model.SegmentID) (model.Segment, error) {
	sg, err := scanSegment(s.pool.QueryRow(ctx, "SELECT "+segmentColumns+" FROM segments WHERE id = $1 AND site_id = $2",
		string(id), string(site)))
	return sg, translate("pgstore: segment", err)
}

// UpdateSegment replaces the name and filters of a segment of its site
// (sg.SiteID); another name of the site, whatever its case, is
// errs.ErrConflict, a segment of another site errs.ErrNotFound.
func (s *Store) UpdateSegment(ctx context.Context, sg model.Segment) (model.Segment, error) {
	filters, err := json.Marshal(sg.Filters)
	if err != nil {
		return model.Segment{}, fmt.Errorf("pgstore: update segment: %w", err)
	}
	updated, err := scanSegment(s.pool.QueryRow(ctx, `UPDATE segments SET name = $3, filters = $4
		WHERE id = $1 AND site_id = $2 RETURNING `+segmentColumns, string(sg.ID), string(sg.SiteID), sg.Name, filters))
	return updated, translate("pgstore: update segment", err)
}

// DeleteSegment deletes a segment of site; one of another site, or an
// unknown id, is errs.ErrNotFound.
func (s *Store) DeleteSegment(ctx context.Context, site model.SiteID, id model.SegmentID) error {
	tag, err := s.pool.Exec(ctx, "DELETE FROM segments WHERE id = $1 AND site_id = $2", string(id), string(site))
	if err == nil && tag.RowsAffected() == 0 {
		err = pgx.ErrNoRows
	}
	return translate("pgstore: delete segment", err)
}

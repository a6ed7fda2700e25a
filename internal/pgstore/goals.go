package pgstore

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/tally-analytics/tally/internal/model"
)

const goalColumns = "id, site_id, name, type, coalesce(page_path, ''), coalesce(event_name, ''), created_at"

func scanGoal(row interface{ Scan(...any) error }) (model.Goal, error) {
	var g model.Goal
	var id, site, typ string
	err := row.Scan(&id, &site, &g.Name, &typ, &g.PagePath, &g.EventName, &g.CreatedAt)
	g.ID, g.SiteID, g.Type = model.GoalID(id), model.SiteID(site), model.GoalType(typ)
	return g, err
}

// nullable stores "" as NULL (the column of the other goal type).
func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// CreateGoal stores a goal; the same target twice on a site is errs.ErrConflict.
func (s *Store) CreateGoal(ctx context.Context, g model.Goal) (model.Goal, error) {
	created, err := scanGoal(s.pool.QueryRow(ctx, `INSERT INTO goals (site_id, name, type, page_path, event_name)
		VALUES ($1, $2, $3, $4, $5) RETURNING `+goalColumns,
		string(g.SiteID), g.Name, string(g.Type), nullable(g.PagePath), nullable(g.EventName)))
	return created, translate("pgstore: create goal", err)
}

// GoalByID finds a goal by its UUID.
func (s *Store) GoalByID(ctx context.Context, id model.GoalID) (model.Goal, error) {
	g, err := scanGoal(s.pool.QueryRow(ctx, "SELECT "+goalColumns+" FROM goals WHERE id = $1", string(id)))
	return g, translate("pgstore: goal by id", err)
}

// GoalsBySite lists a site's goals, oldest first.
func (s *Store) GoalsBySite(ctx context.Context, site model.SiteID) ([]model.Goal, error) {
	rows, err := s.pool.Query(ctx, "SELECT "+goalColumns+" FROM goals WHERE site_id = $1 ORDER BY created_at, id", string(site))
	if err != nil {
		return nil, translate("pgstore: goals by site", err)
	}
	goals, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (model.Goal, error) { return scanGoal(r) })
	return goals, translate("pgstore: goals by site", err)
}

// UpdateGoal replaces a goal's name, type and target.
func (s *Store) UpdateGoal(ctx context.Context, g model.Goal) (model.Goal, error) {
	updated, err := scanGoal(s.pool.QueryRow(ctx, `UPDATE goals SET name = $2, type = $3, page_path = $4, event_name = $5,
		updated_at = now() WHERE id = $1 RETURNING `+goalColumns,
		string(g.ID), g.Name, string(g.Type), nullable(g.PagePath), nullable(g.EventName)))
	return updated, translate("pgstore: update goal", err)
}

// DeleteGoal deletes a goal; an unknown id is errs.ErrNotFound.
func (s *Store) DeleteGoal(ctx context.Context, id model.GoalID) error {
	tag, err := s.pool.Exec(ctx, "DELETE FROM goals WHERE id = $1", string(id))
	if err == nil && tag.RowsAffected() == 0 {
		err = pgx.ErrNoRows
	}
	return translate("pgstore: delete goal", err)
}

package pgstore

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tally-analytics/tally/internal/model"
)

const funnelColumns = "id, site_id, name, steps, window_seconds, created_at"

// funnelStep is a step as the steps column holds it.
type funnelStep struct {
	Type      string            `json:"type"`
	PagePath  string            `json:"page_path,omitempty"`
	EventName string            `json:"event_name,omitempty"`
	Props     map[string]string `json:"props,omitempty"`
}

func stepsJSON(steps []model.FunnelStep) ([]byte, error) {
	out := make([]funnelStep, len(steps))
	for i, s := range steps {
		out[i] = funnelStep{Type: string(s.Type), PagePath: s.PagePath, EventName: s.EventName, Props: s.Props}
	}
	return json.Marshal(out)
}

func scanFunnel(row interface{ Scan(...any) error }) (model.Funnel, error) {
	var f model.Funnel
	var id, site string
	var steps []byte
	var window int64
	if err := row.Scan(&id, &site, &f.Name, &steps, &window, &f.CreatedAt); err != nil {
		return f, err
	}
	var stored []funnelStep
	if err := json.Unmarshal(steps, &stored); err != nil {
		return f, fmt.Errorf("steps of funnel %s: %w", id, err)
	}
	f.ID, f.SiteID, f.Window = model.FunnelID(id), model.SiteID(site), time.Duration(window)*time.Second
	f.Steps = make([]model.FunnelStep, len(stored))
	for i, s := range stored {
		f.Steps[i] = model.FunnelStep{Type: model.GoalType(s.Type), PagePath: s.PagePath, EventName: s.EventName, Props: s.Props}
	}
	return f, nil
}

// CreateFunnel stores a funnel.
func (s *Store) CreateFunnel(ctx context.Context, f model.Funnel) (model.Funnel, error) {
	steps, err := stepsJSON(f.Steps)
	if err != nil {
		return model.Funnel{}, fmt.Errorf("pgstore: create funnel: %w", err)
	}
	created, err := scanFunnel(s.pool.QueryRow(ctx, `INSERT INTO funnels (site_id, name, steps, window_seconds)
		VALUES ($1, $2, $3, $4) RETURNING `+funnelColumns,
		string(f.SiteID), f.Name, steps, int64(f.Window/time.Second)))
	return created, translate("pgstore: create funnel", err)
}

// FunnelByID finds a funnel by its UUID.
func (s *Store) FunnelByID(ctx context.Context, id model.FunnelID) (model.Funnel, error) {
	f, err := scanFunnel(s.pool.QueryRow(ctx, "SELECT "+funnelColumns+" FROM funnels WHERE id = $1", string(id)))
	return f, translate("pgstore: funnel by id", err)
}

// FunnelsBySite lists a site's funnels, oldest first.
func (s *Store) FunnelsBySite(ctx context.Context, site model.SiteID) ([]model.Funnel, error) {
	rows, err := s.pool.Query(ctx, "SELECT "+funnelColumns+" FROM funnels WHERE site_id = $1 ORDER BY created_at, id", string(site))
	if err != nil {
		return nil, translate("pgstore: funnels by site", err)
	}
	list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (model.Funnel, error) { return scanFunnel(r) })
	return list, translate("pgstore: funnels by site", err)
}

// UpdateFunnel replaces a funnel's name, steps and window.
func (s *Store) UpdateFunnel(ctx context.Context, f model.Funnel) (model.Funnel, error) {
	steps, err := stepsJSON(f.Steps)
	if err != nil {
		return model.Funnel{}, fmt.Errorf("pgstore: update funnel: %w", err)
	}
	updated, err := scanFunnel(s.pool.QueryRow(ctx, `UPDATE funnels SET name = $2, steps = $3, window_seconds = $4,
		updated_at = now() WHERE id = $1 RETURNING `+funnelColumns,
		string(f.ID), f.Name, steps, int64(f.Window/time.Second)))
	return updated, translate("pgstore: update funnel", err)
}

// DeleteFunnel deletes a funnel; an unknown id is errs.ErrNotFound.
func (s *Store) DeleteFunnel(ctx context.Context, id model.FunnelID) error {
	tag, err := s.pool.Exec(ctx, "DELETE FROM funnels WHERE id = $1", string(id))
	if err == nil && tag.RowsAffected() == 0 {
		err = pgx.ErrNoRows
	}
	return translate("pgstore: delete funnel", err)
}

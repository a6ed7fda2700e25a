// Package funnels holds the rules of funnels: what a funnel is (its steps,
// its window), who may read and change them. Funnels live in Postgres; the
// funnel report is computed by the stats service.
package funnels

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/tally-analytics/tally/internal/accounts"
	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/goals"
	"github.com/tally-analytics/tally/internal/model"
)

// Limits of a funnel definition.
const (
	// MaxPerSite is the most funnels a site may have (the dashboard's picker
	// lists them all).
	MaxPerSite = 50
	// MinSteps and MaxSteps bound a funnel's steps; the report's one query
	// grows with each.
	MinSteps = 2
	MaxSteps = 8
	// MaxNameLen is the longest name, in characters.
	MaxNameLen = 120
	// MaxProps is the most props one step may require, and MaxPropKeyLen and
	// MaxPropValueLen their sizes: those of an event's props.
	MaxProps        = model.MaxProps
	MaxPropKeyLen   = model.MaxPropKeyLen
	MaxPropValueLen = model.MaxPropValueLen
	// DefaultWindow is the window of a funnel created without one;
	// MaxWindow the longest.
	DefaultWindow = 24 * time.Hour
	MaxWindow     = 30 * 24 * time.Hour
)

// Store keeps funnels.
type Store interface {
	CreateFunnel(ctx context.Context, f model.Funnel) (model.Funnel, error)
	FunnelByID(ctx context.Context, id model.FunnelID) (model.Funnel, error)
	FunnelsBySite(ctx context.Context, site model.SiteID) ([]model.Funnel, error)
	UpdateFunnel(ctx context.Context, f model.Funnel) (model.Funnel, error)
	DeleteFunnel(ctx context.Context, id model.FunnelID) error
}

// Sites answers whether a principal may do an action to a site (the
// accounts' guard).
type Sites interface {
	Check(ctx context.Context, p auth.Principal, id model.SiteID, a accounts.Action) (model.Site, model.Role, error)
}

// Service manages funnels.
type Service struct {
	store Store
	sites Sites
}

// NewService wires the funnels service.
func NewService(store Store, sites Sites) *Service { return &Service{store: store, sites: sites} }

// Input is a funnel as a client sends it (create and update).
type Input struct {
	SiteID string
	Name   string
	Steps  []StepInput
	// WindowSeconds is nil for the default window.
	WindowSeconds *int64
}

// StepInput is a step as a client sends it.
type StepInput struct {
	Type      string
	PagePath  string
	EventName string
	Props     map[string]string
}

// NotFound is how every funnel the caller cannot see is answered.
func NotFound() *errs.Error { return errs.E(errs.NotFound, "funnel_not_found", "funnel not found") }

// validate checks a funnel's fields; every problem names its field
// (steps.<index>.<field>, the index counting from 0 as in the request).
func validate(in Input) (model.Funnel, error) {
	f := model.Funnel{SiteID: model.SiteID(strings.TrimSpace(in.SiteID)), Name: strings.TrimSpace(in.Name), Window: DefaultWindow}
	if f.SiteID == "" {
		return f, errs.InvalidField("site_id", "site_id is required")
	}
	if f.Name == "" || utf8.RuneCountInString(f.Name) > MaxNameLen {
		return f, errs.InvalidField("name", "must be 1 to %d characters", MaxNameLen)
	}
	if len(in.Steps) < MinSteps || len(in.Steps) > MaxSteps {
		return f, errs.InvalidField("steps", "a funnel has %d to %d steps", MinSteps, MaxSteps)
	}
	for i, s := range in.Steps {
		step, err := validateStep(s)
		if err != nil {
			var e *errs.Error
			if errors.As(err, &e) {
				return f, e.WithField(fmt.Sprintf("steps.%d.%s", i, e.Field))
			}
			return f, err
		}
		f.Steps = append(f.Steps, step)
	}
	if in.WindowSeconds != nil {
		w := *in.WindowSeconds
		if w < 1 || w > int64(MaxWindow/time.Second) {
			return f, errs.InvalidField("window_seconds", "must be 1 to %d seconds (30 days)", int64(MaxWindow/time.Second))
		}
		f.Window = time.Duration(w) * time.Second
	}
	return f, nil
}

// validateStep checks one step; errors name the step's own field.
func validateStep(in StepInput) (model.FunnelStep, error) {
	s := model.FunnelStep{Type: model.GoalType(in.Type), PagePath: strings.TrimSpace(in.PagePath), EventName: strings.TrimSpace(in.EventName)}
	switch s.Type {
	case model.GoalPageview:
		if s.EventName != "" {
			return s, errs.InvalidField("event_name", "only custom_event steps have an event_name")
		}
		if len(in.Props) > 0 {
			return s, errs.InvalidField("props", "only custom_event steps have props")
		}
		return s, goals.ValidatePath(s.PagePath)
	case model.GoalCustomEvent:
		if s.PagePath != "" {
			return s, errs.InvalidField("page_path", "only pageview steps have a page_path")
		}
		if err := goals.ValidateEventName(s.EventName); err != nil {
			return s, err
		}
		if len(in.Props) > MaxProps {
			return s, errs.InvalidField("props", "a step requires at most %d props", MaxProps)
		}
		for k, v := range in.Props {
			if !model.PropKeyFits(k) {
				return s, errs.InvalidField("props", "prop keys must be 1 to %d characters", MaxPropKeyLen)
			}
			if utf8.RuneCountInString(v) > MaxPropValueLen {
				return s, errs.InvalidField("props."+k, "prop values must be at most %d characters", MaxPropValueLen)
			}
		}
		if len(in.Props) > 0 {
			s.Props = in.Props
		}
		return s, nil
	}
	return s, errs.InvalidField("type", "must be pageview or custom_event")
}

// writable checks that p may change the funnels of site.
func (s *Service) writable(ctx context.Context, p auth.Principal, site model.SiteID) error {
	_, _, err := s.sites.Check(ctx, p, site, accounts.ManageFunnels)
	return err
}

// Create adds a funnel to a site.
func (s *Service) Create(ctx context.Context, p auth.Principal, in Input) (model.Funnel, error) {
	if err := p.Require(model.ScopeGoalsManage); err != nil {
		return model.Funnel{}, err
	}
	f, err := validate(in)
	if err != nil {
		return model.Funnel{}, err
	}
	if err := s.writable(ctx, p, f.SiteID); err != nil {
		return model.Funnel{}, err
	}
	existing, err := s.store.FunnelsBySite(ctx, f.SiteID)
	if err != nil {
		return model.Funnel{}, err
	}
	if len(existing) >= MaxPerSite {
		return model.Funnel{}, errs.E(errs.Conflict, "too_many_funnels", "a site has at most %d funnels; delete one first", MaxPerSite).WithField("site_id")
	}
	return s.store.CreateFunnel(ctx, f)
}

// List returns the funnels of a site the principal can read.
func (s *Service) List(ctx context.Context, p auth.Principal, site model.SiteID) ([]model.Funnel, error) {
	if err := p.Require(model.ScopeStatsRead); err != nil {
		return nil, err
	}
	if site == "" {
		return nil, errs.InvalidField("site_id", "site_id is required")
	}
	if _, _, err := s.sites.Check(ctx, p, site, accounts.ReadStats); err != nil {
		return nil, err
	}
	return s.store.FunnelsBySite(ctx, site)
}

// Get returns a funnel of a site the principal can read; any other funnel,
// existing or not, is funnel_not_found.
func (s *Service) Get(ctx context.Context, p auth.Principal, id model.FunnelID) (model.Funnel, error) {
	if err := p.Require(model.ScopeStatsRead); err != nil {
		return model.Funnel{}, err
	}
	return s.visible(ctx, p, id, accounts.ReadStats)
}

// Of returns funnel id of site, for a principal already allowed to read
// the site's statistics (the funnel report): a funnel of another site is
// funnel_not_found.
func (s *Service) Of(ctx context.Context, site model.SiteID, id model.FunnelID) (model.Funnel, error) {
	f, err := s.find(ctx, id)
	if err == nil && f.SiteID != site {
		return model.Funnel{}, NotFound()
	}
	return f, err
}

func (s *Service) find(ctx context.Context, id model.FunnelID) (model.Funnel, error) {
	if _, err := uuid.Parse(string(id)); err != nil {
		return model.Funnel{}, NotFound()
	}
	f, err := s.store.FunnelByID(ctx, id)
	if errors.Is(err, errs.ErrNotFound) {
		return model.Funnel{}, NotFound()
	}
	return f, err
}

func (s *Service) visible(ctx context.Context, p auth.Principal, id model.FunnelID, act accounts.Action) (model.Funnel, error) {
	f, err := s.find(ctx, id)
	if err != nil {
		return model.Funnel{}, err
	}
	if _, _, err := s.sites.Check(ctx, p, f.SiteID, act); errs.Is(err, errs.NotFound) {
		return model.Funnel{}, NotFound()
	} else if err != nil {
		return model.Funnel{}, err
	}
	return f, nil
}

// Update replaces a funnel's name, steps and window (a window left out is
// the default again: PUT replaces). A site_id in the input must be the
// funnel's own: funnels do not move between sites.
func (s *Service) Update(ctx context.Context, p auth.Principal, id model.FunnelID, in Input) (model.Funnel, error) {
	if err := p.Require(model.ScopeGoalsManage); err != nil {
		return model.Funnel{}, err
	}
	current, err := s.visible(ctx, p, id, accounts.FindFunnel)
	if err != nil {
		return model.Funnel{}, err
	}
	if strings.TrimSpace(in.SiteID) == "" {
		in.SiteID = string(current.SiteID)
	}
	if model.SiteID(strings.TrimSpace(in.SiteID)) != current.SiteID {
		return model.Funnel{}, errs.InvalidField("site_id", "a funnel cannot move to another site")
	}
	f, err := validate(in)
	if err != nil {
		return model.Funnel{}, err
	}
	if err := s.writable(ctx, p, current.SiteID); err != nil {
		return model.Funnel{}, err
	}
	f.ID = current.ID
	updated, err := s.store.UpdateFunnel(ctx, f)
	if errors.Is(err, errs.ErrNotFound) {
		return model.Funnel{}, NotFound()
	}
	return updated, err
}

// Delete removes a funnel.
func (s *Service) Delete(ctx context.Context, p auth.Principal, id model.FunnelID) error {
	if err := p.Require(model.ScopeGoalsManage); err != nil {
		return err
	}
	f, err := s.visible(ctx, p, id, accounts.FindFunnel)
	if err != nil {
		return err
	}
	if err := s.writable(ctx, p, f.SiteID); err != nil {
		return err
	}
	if err := s.store.DeleteFunnel(ctx, id); errors.Is(err, errs.ErrNotFound) {
		return NotFound()
	} else if err != nil {
		return err
	}
	return nil
}

// Package goals holds the rules of goals: what a goal is (a page path
// pattern of package pagepattern, or a custom event), who may read and
// change them. Goals live in
// Postgres; their conversions are computed by the stats service.
package goals

import (
	"context"
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/tally-analytics/tally/internal/accounts"
	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/pagepattern"
)

// Store keeps goals.
type Store interface {
	CreateGoal(ctx context.Context, g model.Goal) (model.Goal, error)
	GoalByID(ctx context.Context, id model.GoalID) (model.Goal, error)
	GoalsBySite(ctx context.Context, site model.SiteID) ([]model.Goal, error)
	UpdateGoal(ctx context.Context, g model.Goal) (model.Goal, error)
	DeleteGoal(ctx context.Context, id model.GoalID) error
}

// Sites answers whether a principal may do an action to a site (the
// accounts' guard).
type Sites interface {
	Check(ctx context.Context, p auth.Principal, id model.SiteID, a accounts.Action) (model.Site, model.Role, error)
}

// Service manages goals.
type Service struct {
	store Store
	sites Sites
}

// NewService wires the goals service.
func NewService(store Store, sites Sites) *Service { return &Service{store: store, sites: sites} }

// Input is a goal as a client sends it (create and update).
type Input struct {
	SiteID    string
	Name      string
	Type      string
	PagePath  string
	EventName string
}

const maxNameLen = 120

// validate checks a goal's fields; every problem names its field.
func validate(in Input) (model.Goal, error) {
	g := model.Goal{SiteID: model.SiteID(strings.TrimSpace(in.SiteID)), Name: strings.TrimSpace(in.Name),
		Type: model.GoalType(in.Type), PagePath: strings.TrimSpace(in.PagePath), EventName: strings.TrimSpace(in.EventName)}
	if g.SiteID == "" {
		return g, errs.InvalidField("site_id", "site_id is required")
	}
	if g.Name == "" || utf8.RuneCountInString(g.Name) > maxNameLen {
		return g, errs.InvalidField("goal_name", "must be 1 to %d characters", maxNameLen)
	}
	switch g.Type {
	case model.GoalPageview:
		if g.EventName != "" {
			return g, errs.InvalidField("event_name", "only custom_event goals have an event_name")
		}
		if err := ValidatePath(g.PagePath); err != nil {
			return g, err
		}
	case model.GoalCustomEvent:
		if g.PagePath != "" {
			return g, errs.InvalidField("page_path", "only pageview goals have a page_path")
		}
		if err := ValidateEventName(g.EventName); err != nil {
			return g, err
		}
	default:
		return g, errs.InvalidField("goal_type", "must be pageview or custom_event")
	}
	return g, nil
}

// ValidateEventName checks the name of a custom event a goal (or a funnel
// step) waits for.
func ValidateEventName(name string) error {
	if !model.EventNameFits(name) {
		return errs.InvalidField("event_name", "custom events need an event_name of 1 to %d characters", model.MaxEventNameLen)
	}
	if name == model.PageviewName {
		return errs.InvalidField("event_name", `"pageview" is not a custom event; use a pageview step or goal`)
	}
	return nil
}

// ValidatePath checks a page path pattern (package pagepattern): absolute,
// without query string, with * for one path segment and ** for any depth,
// and on a site that records hash routes one # before a pattern of the route.
func ValidatePath(p string) error {
	if p == "" {
		return errs.InvalidField("page_path", "pageview goals need a page_path such as /signup or /blog/**")
	}
	if _, err := pagepattern.Parse(p); err != nil {
		return errs.InvalidField("page_path", "%s", err.Error())
	}
	return nil
}

func goalNotFound() *errs.Error { return errs.E(errs.NotFound, "goal_not_found", "goal not found") }

// writable checks that p may change the goals of site.
func (s *Service) writable(ctx context.Context, p auth.Principal, site model.SiteID) error {
	_, _, err := s.sites.Check(ctx, p, site, accounts.ManageGoals)
	return err
}

// Create adds a goal to a site.
func (s *Service) Create(ctx context.Context, p auth.Principal, in Input) (model.Goal, error) {
	if err := p.Require(model.ScopeGoalsManage); err != nil {
		return model.Goal{}, err
	}
	g, err := validate(in)
	if err != nil {
		return model.Goal{}, err
	}
	if err := s.writable(ctx, p, g.SiteID); err != nil {
		return model.Goal{}, err
	}
	existing, err := s.store.GoalsBySite(ctx, g.SiteID)
	if err != nil {
		return model.Goal{}, err
	}
	if len(existing) >= MaxPerSite {
		return model.Goal{}, errs.E(errs.Conflict, "too_many_goals", "a site has at most %d goals; delete one first", MaxPerSite).WithField("site_id")
	}
	created, err := s.store.CreateGoal(ctx, g)
	return created, conflict(err)
}

// MaxPerSite is the most goals a site may have: the conversions report
// computes them all for every request.
const MaxPerSite = 100

func conflict(err error) error {
	if errors.Is(err, errs.ErrConflict) {
		return errs.E(errs.Conflict, "goal_exists", "this site already has a goal for this target")
	}
	return err
}

// List returns the goals of a site the principal can read.
func (s *Service) List(ctx context.Context, p auth.Principal, site model.SiteID) ([]model.Goal, error) {
	if err := p.Require(model.ScopeStatsRead); err != nil {
		return nil, err
	}
	if site == "" {
		return nil, errs.InvalidField("site_id", "site_id is required")
	}
	if _, _, err := s.sites.Check(ctx, p, site, accounts.ReadStats); err != nil {
		return nil, err
	}
	return s.store.GoalsBySite(ctx, site)
}

// Get returns a goal of a site the principal can read; any other goal,
// existing or not, is goal_not_found.
func (s *Service) Get(ctx context.Context, p auth.Principal, id model.GoalID) (model.Goal, error) {
	if err := p.Require(model.ScopeStatsRead); err != nil {
		return model.Goal{}, err
	}
	return s.visible(ctx, p, id, accounts.ReadStats)
}

func (s *Service) visible(ctx context.Context, p auth.Principal, id model.GoalID, act accounts.Action) (model.Goal, error) {
	if _, err := uuid.Parse(string(id)); err != nil {
		return model.Goal{}, goalNotFound()
	}
	g, err := s.store.GoalByID(ctx, id)
	if errors.Is(err, errs.ErrNotFound) {
		return model.Goal{}, goalNotFound()
	}
	if err != nil {
		return model.Goal{}, err
	}
	if _, _, err := s.sites.Check(ctx, p, g.SiteID, act); errs.Is(err, errs.NotFound) {
		return model.Goal{}, goalNotFound()
	} else if err != nil {
		return model.Goal{}, err
	}
	return g, nil
}

// Update replaces a goal's name, type and target. A site_id in the input
// must be the goal's own: goals do not move between sites.
func (s *Service) Update(ctx context.Context, p auth.Principal, id model.GoalID, in Input) (model.Goal, error) {
	if err := p.Require(model.ScopeGoalsManage); err != nil {
		return model.Goal{}, err
	}
	current, err := s.visible(ctx, p, id, accounts.FindGoal)
	if err != nil {
		return model.Goal{}, err
	}
	if strings.TrimSpace(in.SiteID) == "" {
		in.SiteID = string(current.SiteID)
	}
	if model.SiteID(strings.TrimSpace(in.SiteID)) != current.SiteID {
		return model.Goal{}, errs.InvalidField("site_id", "a goal cannot move to another site")
	}
	g, err := validate(in)
	if err != nil {
		return model.Goal{}, err
	}
	if err := s.writable(ctx, p, current.SiteID); err != nil {
		return model.Goal{}, err
	}
	g.ID = current.ID
	updated, err := s.store.UpdateGoal(ctx, g)
	return updated, conflict(err)
}

// Delete removes a goal.
func (s *Service) Delete(ctx context.Context, p auth.Principal, id model.GoalID) error {
	if err := p.Require(model.ScopeGoalsManage); err != nil {
		return err
	}
	g, err := s.visible(ctx, p, id, accounts.FindGoal)
	if err != nil {
		return err
	}
	if err := s.writable(ctx, p, g.SiteID); err != nil {
		return err
	}
	if err := s.store.DeleteGoal(ctx, id); errors.Is(err, errs.ErrNotFound) {
		return goalNotFound()
	} else if err != nil {
		return err
	}
	return nil
}

package accounts

import (
	"context"
	"errors"
	"slices"

	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/model"
)

// Action is what a caller wants to do to a site.
type Action int

// The actions; README's "Who may do what" table lists their rules.
const (
	ReadStats     Action = iota // reports, goals and their conversions, the raw export
	SendEvents                  // the Events API and batches
	SendPayments                // the payments API
	FindGoal                    // find a goal to change (any role; the change is ManageGoals)
	ManageGoals                 // create, change, delete goals
	ViewSite                    // the Sites API's read of one site
	ManageSite                  // change the site's settings
	DeleteSite                  // delete the site
	ManageTeam                  // members and webhook secrets (the dashboard)
	ManageRevenue               // purge client-reported revenue
	FindFunnel                  // find a funnel to change (any role; the change is ManageFunnels)
	ManageFunnels               // create, change, delete funnels
)

// rule is who may do an action and how each refusal is answered.
type rule struct {
	scope model.Scope
	// roles that may; nil: every role
	roles []model.Role
	// unknown answers a site that does not exist or that the caller has no
	// role on: the same answer, so existence does not leak
	unknown func() *errs.Error
	// denied answers a member whose role does not allow the action
	denied string
}

var (
	writers = []model.Role{model.RoleOwner, model.RoleAdmin}
	// siteNotFound: reads and management
	siteNotFound = func() *errs.Error {
		return errs.E(errs.NotFound, "site_not_found", "site not found").WithField("site_id")
	}
)

// InvalidSite is how the write APIs (and the tracker) answer a site that does
// not exist or that the caller may not send to: an invalid field.
func InvalidSite() *errs.Error {
	return errs.E(errs.Invalid, "invalid_site_id", "unknown site, or not one this credential can send to").WithField("site_id")
}

// rules is the one place that says who may do what to a site.
var rules = map[Action]rule{
	ReadStats:     {scope: model.ScopeStatsRead, unknown: siteNotFound},
	SendEvents:    {scope: model.ScopeEventsWrite, roles: writers, unknown: InvalidSite, denied: "viewers cannot send events to this site"},
	SendPayments:  {scope: model.ScopeEventsWrite, roles: writers, unknown: InvalidSite, denied: "viewers cannot send payments to this site"},
	FindGoal:      {scope: model.ScopeGoalsManage, unknown: siteNotFound},
	ManageGoals:   {scope: model.ScopeGoalsManage, roles: writers, unknown: siteNotFound, denied: "viewers cannot change goals"},
	ViewSite:      {scope: model.ScopeSitesManage, unknown: siteNotFound},
	ManageSite:    {scope: model.ScopeSitesManage, roles: writers, unknown: siteNotFound, denied: "viewers cannot change the site"},
	DeleteSite:    {scope: model.ScopeSitesManage, roles: []model.Role{model.RoleOwner}, unknown: siteNotFound, denied: "only the owner can delete a site"},
	ManageTeam:    {scope: model.ScopeSitesManage, roles: writers, unknown: siteNotFound, denied: "only the site's owner and admins manage its members and secrets"},
	ManageRevenue: {scope: model.ScopeSitesManage, roles: writers, unknown: siteNotFound, denied: "viewers cannot change the site's revenue"},
	// funnels are managed as goals are, with the same scope
	FindFunnel:    {scope: model.ScopeGoalsManage, unknown: siteNotFound},
	ManageFunnels: {scope: model.ScopeGoalsManage, roles: writers, unknown: siteNotFound, denied: "viewers cannot change funnels"},
}

// Lookup finds a user's role on a site (errs.ErrNotFound when they have
// none) and the site: the cached Access on the ingest path, the store
// elsewhere.
type Lookup interface {
	Role(ctx context.Context, user model.UserID, site model.SiteID) (model.Role, error)
	Site(ctx context.Context, id model.SiteID) (model.Site, error)
}

// Guard answers "may this principal do this to this site?" for every
// service and the dashboard, with the one right error: 403 forbidden for a
// missing scope or role, the action's answer for an unknown site.
type Guard struct{ lookup Lookup }

// NewGuard makes a guard over lookup.
func NewGuard(lookup Lookup) *Guard { return &Guard{lookup: lookup} }

// Check returns the site and the principal's role on it when the principal
// may do a to it.
func (g *Guard) Check(ctx context.Context, p auth.Principal, id model.SiteID, a Action) (model.Site, model.Role, error) {
	r, ok := rules[a]
	if !ok {
		return model.Site{}, "", errors.New("accounts: an action without a rule")
	}
	if err := p.Require(r.scope); err != nil {
		return model.Site{}, "", err
	}
	if !id.Text() {
		return model.Site{}, "", r.unknown()
	}
	if p.SharedSite != "" {
		return g.shared(ctx, p, id, a, r)
	}
	role, err := g.lookup.Role(ctx, p.UserID, id)
	if errors.Is(err, errs.ErrNotFound) {
		return model.Site{}, "", r.unknown()
	}
	if err != nil {
		return model.Site{}, "", unavailable(err)
	}
	if r.roles != nil && !slices.Contains(r.roles, role) {
		return model.Site{}, role, errs.E(errs.Forbidden, "forbidden", "%s", r.denied)
	}
	site, err := g.lookup.Site(ctx, id)
	if errors.Is(err, errs.ErrNotFound) {
		return model.Site{}, "", r.unknown()
	}
	if err != nil {
		return model.Site{}, "", unavailable(err)
	}
	return site, role, nil
}

// shared answers the visitor of a shared link: they read the statistics of
// the link's site as a viewer would; another site, or anything else, is as
// if the site did not exist.
func (g *Guard) shared(ctx context.Context, p auth.Principal, id model.SiteID, a Action, r rule) (model.Site, model.Role, error) {
	if a != ReadStats || id != p.SharedSite {
		return model.Site{}, "", r.unknown()
	}
	site, err := g.lookup.Site(ctx, id)
	if errors.Is(err, errs.ErrNotFound) {
		return model.Site{}, "", r.unknown()
	}
	if err != nil {
		return model.Site{}, "", unavailable(err)
	}
	return site, model.RoleViewer, nil
}

// unavailable keeps a store's own answer (it says 503 when it is down) and
// makes anything else a 503 too: access cannot be checked now.
func unavailable(err error) error {
	var e *errs.Error
	if errors.As(err, &e) {
		return err
	}
	return errs.E(errs.Unavailable, "service_unavailable", "cannot check the site now").Wrap(err)
}

// storeLookup reads roles and sites from the store, uncached.
type storeLookup struct{ store Store }

func (l storeLookup) Role(ctx context.Context, user model.UserID, site model.SiteID) (model.Role, error) {
	return l.store.MemberRole(ctx, site, user)
}

func (l storeLookup) Site(ctx context.Context, id model.SiteID) (model.Site, error) {
	return l.store.SiteByID(ctx, id)
}

package accounts

import (
	"context"
	"errors"

	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/model"
)

// SiteStore is what the Sites API needs beyond Store.
type SiteStore interface {
	Memberships(ctx context.Context, user model.UserID) ([]model.Membership, error)
	UpdateSite(ctx context.Context, site model.Site) (model.Site, error)
	DeleteSite(ctx context.Context, site model.SiteID) error
	HasPayments(ctx context.Context, site model.SiteID) (bool, error)
}

// SiteChange is the input of the Sites API; empty fields keep their value
// (on create: the defaults UTC, USD, client revenue apart and capped at
// model.DefaultClientRevenueCap).
type SiteChange struct {
	Domain, Timezone, BaseCurrency string
	ClientRevenueIncluded          *bool
	ClientRevenueCap               *int64 // minor units of the base currency
	// The lists of the site's exclusions; nil keeps a list, empty clears it.
	ExcludedPages, ExcludedAddresses, ExcludedHosts *[]string
}

// ExclusionRules checks and normalises a site's exclusions, naming the first
// bad entry (exclusions.Validate: its page patterns are the goals', and the
// goals' package sits above this one).
type ExclusionRules func(model.Exclusions) (model.Exclusions, error)

// applyExclusions sets the exclusions in ch on site, checked by rules.
func applyExclusions(site *model.Site, ch SiteChange, rules ExclusionRules) error {
	if ch.ExcludedPages == nil && ch.ExcludedAddresses == nil && ch.ExcludedHosts == nil {
		return nil
	}
	next := site.Exclusions
	for _, f := range []struct {
		in  *[]string
		out *[]string
	}{{ch.ExcludedPages, &next.Pages}, {ch.ExcludedAddresses, &next.Addresses}, {ch.ExcludedHosts, &next.Hosts}} {
		if f.in != nil {
			*f.out = *f.in
		}
	}
	checked, err := rules(next)
	if err != nil {
		return err
	}
	site.Exclusions = checked
	return nil
}

// maxClientRevenueCap bounds the cap a site may set: 10^12 minor units.
const maxClientRevenueCap = 1_000_000_000_000

// applyClientRevenue sets the client revenue policy in ch on site.
func applyClientRevenue(site *model.Site, ch SiteChange) error {
	if ch.ClientRevenueIncluded != nil {
		site.ClientRevenue.Included = *ch.ClientRevenueIncluded
	}
	if c := ch.ClientRevenueCap; c != nil {
		if *c < 0 || *c > maxClientRevenueCap {
			return errs.InvalidField("client_revenue.cap", "must be from 0 to %d minor units of the base currency", int64(maxClientRevenueCap))
		}
		site.ClientRevenue.Cap = *c
	}
	return nil
}

// Sites is the Sites API: every operation needs the sites:manage scope.
type Sites struct {
	*Service
	store SiteStore
	rules ExclusionRules
}

// NewSites wires the Sites API over the accounts service.
func NewSites(svc *Service, store SiteStore, rules ExclusionRules) *Sites {
	return &Sites{Service: svc, store: store, rules: rules}
}

// List returns the sites the caller is a member of, with their role.
func (s *Sites) List(ctx context.Context, p auth.Principal) ([]model.Membership, error) {
	if err := p.Require(model.ScopeSitesManage); err != nil {
		return nil, err
	}
	return s.store.Memberships(ctx, p.UserID)
}

// Create makes a site owned by the caller.
func (s *Sites) Create(ctx context.Context, p auth.Principal, in SiteChange) (model.Membership, error) {
	if err := p.Require(model.ScopeSitesManage); err != nil {
		return model.Membership{}, err
	}
	site, err := ValidateSite(in.Domain, in.Timezone, in.BaseCurrency)
	if err != nil {
		return model.Membership{}, err
	}
	if err := applyClientRevenue(&site, in); err != nil {
		return model.Membership{}, err
	}
	if err := applyExclusions(&site, in, s.rules); err != nil {
		return model.Membership{}, err
	}
	site.ID = model.SiteID(auth.RandomString(12, idAlphabet))
	created, err := s.Service.store.CreateSite(ctx, site, p.UserID)
	return model.Membership{Site: created, Role: model.RoleOwner}, err
}

// Get returns one of the caller's sites.
func (s *Sites) Get(ctx context.Context, p auth.Principal, id model.SiteID) (model.Membership, error) {
	site, role, err := s.Check(ctx, p, id, ViewSite)
	return model.Membership{Site: site, Role: role}, err
}

// Update changes a site's domain, time zone, base currency, client revenue
// policy or exclusions (owners and admins). The base currency is fixed once payments were converted into it.
func (s *Sites) Update(ctx context.Context, p auth.Principal, id model.SiteID, in SiteChange) (model.Membership, error) {
	site, role, err := s.Check(ctx, p, id, ManageSite)
	if err != nil {
		return model.Membership{}, err
	}
	next, err := ValidateSite(or(in.Domain, site.Domain), or(in.Timezone, site.Timezone), or(in.BaseCurrency, site.BaseCurrency))
	if err != nil {
		return model.Membership{}, err
	}
	next.ClientRevenue, next.Exclusions = site.ClientRevenue, site.Exclusions
	if err := applyClientRevenue(&next, in); err != nil {
		return model.Membership{}, err
	}
	if err := applyExclusions(&next, in, s.rules); err != nil {
		return model.Membership{}, err
	}
	if next.BaseCurrency != site.BaseCurrency {
		has, err := s.store.HasPayments(ctx, id)
		if err != nil {
			return model.Membership{}, err
		}
		if has {
			return model.Membership{}, errs.E(errs.Conflict, "conflict",
				"the base currency cannot change once payments were converted into it").WithField("base_currency")
		}
	}
	next.ID = id
	updated, err := s.store.UpdateSite(ctx, next)
	if err != nil {
		return model.Membership{}, err
	}
	// the ingest path holds sites: a changed domain, client revenue policy
	// or exclusions apply on the next event
	s.accessChanged(ctx)
	return model.Membership{Site: updated, Role: role}, nil
}

// Delete removes a site (owners only). Postgres forgets it at once; its
// statistics, payments and realtime state are removed in the background.
func (s *Sites) Delete(ctx context.Context, p auth.Principal, id model.SiteID) error {
	if _, _, err := s.Check(ctx, p, id, DeleteSite); err != nil {
		return err
	}
	err := s.store.DeleteSite(ctx, id)
	if errors.Is(err, errs.ErrNotFound) {
		return errs.E(errs.NotFound, "site_not_found", "site not found").WithField("site_id")
	}
	if err != nil {
		return err
	}
	s.accessChanged(ctx)
	return nil
}

func or(v, fallback string) string {
	if v == "" {
		return fallback
	}
	return v
}

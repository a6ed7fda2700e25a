// Package segments holds the rules of segments: a site's named, saved sets
// of dashboard filters. Whoever may read the site's statistics (viewers
// included) lists and applies them; whoever may change the site's settings
// (owners and admins, as for shared links) saves, changes and deletes them.
// A segment's filters are the stats API's, read by its own parser
// (stats.ParseFilterSet) and kept in the form it normalises them to;
// applying one is the stats service's (segment=).
package segments

import (
	"context"
	"errors"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/tally-analytics/tally/internal/accounts"
	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/stats"
)

// Limits of segments.
const (
	// MaxPerSite is the most segments a site may have (the dashboard's
	// picker lists them all).
	MaxPerSite = 50
	// MaxNameLen is the longest name, in characters.
	MaxNameLen = 64
)

// Store keeps segments.
type Store interface {
	CreateSegment(ctx context.Context, sg model.Segment, limit int) (model.Segment, error)
	SegmentsBySite(ctx context.Context, site model.SiteID) ([]model.Segment, error)
	SegmentOf(ctx context.Context, site model.SiteID, id model.SegmentID) (model.Segment, error)
	UpdateSegment(ctx context.Context, sg model.Segment) (model.Segment, error)
	DeleteSegment(ctx context.Context, site model.SiteID, id model.SegmentID) error
}

// Sites answers whether a principal may do an action to a site (the
// accounts' guard).
type Sites interface {
	Check(ctx context.Context, p auth.Principal, id model.SiteID, a accounts.Action) (model.Site, model.Role, error)
}

// Service manages segments.
type Service struct {
	store Store
	sites Sites
}

// NewService wires the segments service.
func NewService(store Store, sites Sites) *Service { return &Service{store: store, sites: sites} }

// Input is a new segment as a client sends it: a name, and filters as the
// stats API's parameters and their values (country: DE, props[plan]: pro).
type Input struct {
	Name    string
	Filters map[string]string
}

// Change is a change of a segment: what is nil stays as it is.
type Change struct {
	Name    *string
	Filters map[string]string
}

// NotFound is how a segment the caller cannot see is answered.
func NotFound() *errs.Error { return stats.SegmentNotFound() }

// List lists a site's segments by name, for whoever may read its
// statistics.
func (s *Service) List(ctx context.Context, p auth.Principal, site model.SiteID) ([]model.Segment, error) {
	if _, _, err := s.sites.Check(ctx, p, site, accounts.ReadStats); err != nil {
		return nil, err
	}
	return s.store.SegmentsBySite(ctx, site)
}

// manageable checks that p may change the segments of site: whoever may
// change the site's settings (its shared links among them).
func (s *Service) manageable(ctx context.Context, p auth.Principal, site model.SiteID) error {
	_, _, err := s.sites.Check(ctx, p, site, accounts.ManageSite)
	return err
}

// Create saves a segment of a site.
func (s *Service) Create(ctx context.Context, p auth.Principal, site model.SiteID, in Input) (model.Segment, error) {
	if err := s.manageable(ctx, p, site); err != nil {
		return model.Segment{}, err
	}
	sg, err := validate(model.Segment{SiteID: site, Name: in.Name, Filters: in.Filters, CreatedBy: p.UserID})
	if err != nil {
		return model.Segment{}, err
	}
	created, err := s.store.CreateSegment(ctx, sg, MaxPerSite)
	switch {
	case errors.Is(err, errs.ErrFull):
		return model.Segment{}, errs.E(errs.Conflict, "too_many_segments", "a site has at most %d segments; delete one first", MaxPerSite)
	case errors.Is(err, errs.ErrNotFound): // the site went meanwhile
		return model.Segment{}, errs.E(errs.NotFound, "site_not_found", "site not found").WithField("site_id")
	case err != nil:
		return model.Segment{}, named(err, sg.Name)
	}
	return created, nil
}

// Update renames a segment of a site, or changes its filters, or both.
func (s *Service) Update(ctx context.Context, p auth.Principal, site model.SiteID, id model.SegmentID, ch Change) (model.Segment, error) {
	if err := s.manageable(ctx, p, site); err != nil {
		return model.Segment{}, err
	}
	sg, err := s.find(ctx, site, id)
	if err != nil {
		return model.Segment{}, err
	}
	if ch.Name != nil {
		sg.Name = *ch.Name
	}
	if ch.Filters != nil {
		sg.Filters = ch.Filters
	}
	if sg, err = validate(sg); err != nil {
		return model.Segment{}, err
	}
	updated, err := s.store.UpdateSegment(ctx, sg)
	if errors.Is(err, errs.ErrNotFound) { // deleted meanwhile
		return model.Segment{}, NotFound()
	}
	return updated, named(err, sg.Name)
}

// Delete deletes a segment of a site.
func (s *Service) Delete(ctx context.Context, p auth.Principal, site model.SiteID, id model.SegmentID) error {
	if err := s.manageable(ctx, p, site); err != nil {
		return err
	}
	if _, err := uuid.Parse(string(id)); err != nil {
		return NotFound()
	}
	err := s.store.DeleteSegment(ctx, site, id)
	if errors.Is(err, errs.ErrNotFound) {
		return NotFound()
	}
	return err
}

// Of returns segment id of site, for a caller already allowed to read the
// site's statistics (a report applying it): a segment of another site is
// segment_not_found.
func (s *Service) Of(ctx context.Context, site model.SiteID, id model.SegmentID) (model.Segment, error) {
	return s.find(ctx, site, id)
}

func (s *Service) find(ctx context.Context, site model.SiteID, id model.SegmentID) (model.Segment, error) {
	if _, err := uuid.Parse(string(id)); err != nil {
		return model.Segment{}, NotFound()
	}
	sg, err := s.store.SegmentOf(ctx, site, id)
	if errors.Is(err, errs.ErrNotFound) {
		return model.Segment{}, NotFound()
	}
	return sg, err
}

// validate checks a segment's name and filters, and puts its filters in
// the form the stats API normalises them to. A bad filter is refused with
// the stats API's own message, naming filters.<parameter>.
func validate(sg model.Segment) (model.Segment, error) {
	sg.Name = strings.TrimSpace(sg.Name)
	if sg.Name == "" || utf8.RuneCountInString(sg.Name) > MaxNameLen || strings.ContainsFunc(sg.Name, unicode.IsControl) {
		return sg, errs.InvalidField("name", "must be 1 to %d characters, none of them control characters", MaxNameLen)
	}
	filters, err := stats.ParseFilterSet(sg.Filters)
	if err != nil {
		var e *errs.Error
		if errors.As(err, &e) {
			return sg, e.WithField(strings.TrimSuffix("filters."+e.Field, "."))
		}
		return sg, err
	}
	sg.Filters = stats.FilterSet(filters)
	return sg, nil
}

// named answers a store's conflict: another segment of the site has the
// name, whatever its case.
func named(err error, name string) error {
	if errors.Is(err, errs.ErrConflict) {
		return errs.E(errs.Conflict, "segment_exists", "the site already has a segment named %q", name).WithField("name")
	}
	return err
}

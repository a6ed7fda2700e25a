package web

import (
	"context"
	"maps"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/httpapi"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/segments"
	"github.com/tally-analytics/tally/internal/stats"
)

// Segments manages a site's saved sets of filters, as the API's segment
// endpoints do.
type Segments interface {
	List(ctx context.Context, p auth.Principal, site model.SiteID) ([]model.Segment, error)
	Create(ctx context.Context, p auth.Principal, site model.SiteID, in segments.Input) (model.Segment, error)
	Delete(ctx context.Context, p auth.Principal, site model.SiteID, id model.SegmentID) error
}

// segmentItem is a segment in the dashboard's picker.
type segmentItem struct {
	ID, Name string
	// Summary says what it filters: "Device: Desktop, plan: pro".
	Summary string
	// URL applies it: the view with its filters instead of the view's.
	URL string
	// DeleteURL is its deletion form's action, which comes back to the view.
	DeleteURL string
	// Active: the view's filters are the segment's.
	Active bool
}

// segmentForm is the dashboard's "save as segment" form: the name typed
// and why it was refused, when it was.
type segmentForm struct {
	Name, Error string
}

// segmentNotices are the dashboard's notices after a segment's form.
var segmentNotices = map[string]string{
	"segment_saved":   "Segment saved: these filters are in the segment picker.",
	"segment_deleted": "Segment deleted.",
}

// memberDashboard is the dashboard page of a site's member: the view's
// cards with the site's segments, and the saving form (owners and
// admins; form is what was refused). A shared dashboard has no segments:
// their names are the team's, and a link shows statistics, not how the
// team reads them.
func (s *Server) memberDashboard(c echo.Context, status int, m model.Membership, p auth.Principal, v view, form segmentForm) error {
	pg := dashboardOf(pageFor(c, m.Site.Domain, "sites"), v, m.Role)
	list, err := s.deps.Segments.List(c.Request().Context(), p, m.Site.ID)
	if err != nil {
		return err
	}
	pg.Segments = segmentItems(v, list)
	pg.CanManageSegments, pg.SegmentForm = m.Role.CanWrite(), form
	pg.SaveSegmentURL = sitePath(m.Site.ID) + "/segments?" + v.Query()
	pg.Notice = segmentNotices[c.QueryParam("notice")]
	return s.render(c, status, "dashboard", pg)
}

// segmentItems are the picker's entries of list for the view v.
func segmentItems(v view, list []model.Segment) []segmentItem {
	current := v.filterSet()
	items := make([]segmentItem, len(list))
	for i, sg := range list {
		items[i] = segmentItem{ID: string(sg.ID), Name: sg.Name, Summary: segmentSummary(sg), URL: v.withFilters(sg.Filters),
			DeleteURL: sitePath(v.Site.ID) + "/segments/" + string(sg.ID) + "/delete?" + v.Query(), Active: maps.Equal(current, sg.Filters)}
	}
	return items
}

// segmentSummary lists a segment's filters as the dashboard's chips name
// them, in the order of the stats API's parameters.
func segmentSummary(sg model.Segment) string {
	filters, err := stats.ParseFilterSet(sg.Filters)
	if err != nil {
		return ""
	}
	parts := make([]string, len(filters))
	for i, f := range filters {
		parts[i] = filterLabel(stats.ParamOf(f.Dim)) + ": " + f.Value.(string)
	}
	return strings.Join(parts, ", ")
}

// createSegment saves the filters of the view the form was posted from
// (its query string) under the name typed, then shows that view again.
func (s *Server) createSegment(c echo.Context) error {
	m, p, v, err := s.memberView(c)
	if err != nil {
		return err
	}
	name := c.FormValue("name")
	_, err = s.deps.Segments.Create(c.Request().Context(), p, m.Site.ID, segments.Input{Name: name, Filters: v.filterSet()})
	if e := formError(err); e != nil && (e.Kind == errs.Invalid || e.Kind == errs.Conflict) {
		return s.memberDashboard(c, httpapi.StatusOf(e.Kind), m, p, v, segmentForm{Name: name, Error: e.Message})
	}
	if err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, v.Base+"?"+v.Query()+"&notice=segment_saved")
}

// deleteSegment deletes a segment, then shows the view the form was
// posted from.
func (s *Server) deleteSegment(c echo.Context) error {
	m, p, v, err := s.memberView(c)
	if err != nil {
		return err
	}
	if err := s.deps.Segments.Delete(c.Request().Context(), p, m.Site.ID, model.SegmentID(c.Param("segment"))); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, v.Base+"?"+v.Query()+"&notice=segment_deleted")
}

package httpapi

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/segments"
	"github.com/tally-analytics/tally/pkg/api"
)

// Segments manages a site's saved sets of filters (applying one is the
// stats endpoints' segment=).
type Segments interface {
	List(ctx context.Context, p auth.Principal, site model.SiteID) ([]model.Segment, error)
	Create(ctx context.Context, p auth.Principal, site model.SiteID, in segments.Input) (model.Segment, error)
	Update(ctx context.Context, p auth.Principal, site model.SiteID, id model.SegmentID, ch segments.Change) (model.Segment, error)
	Delete(ctx context.Context, p auth.Principal, site model.SiteID, id model.SegmentID) error
}

// segmentRoutes registers the segments of a site, managed as the site's
// shared links are: the management allowance.
func (s *Server) segmentRoutes(g *echo.Group, authn echo.MiddlewareFunc) {
	g.GET("/sites/:id/segments", s.listSegments, s.reads(authn, s.limitManage)...)
	g.POST("/sites/:id/segments", s.createSegment, authn, s.limitManage, bodyLimit(64<<10))
	g.PATCH("/sites/:id/segments/:segment_id", s.updateSegment, authn, s.limitManage, bodyLimit(64<<10))
	g.DELETE("/sites/:id/segments/:segment_id", s.deleteSegment, authn, s.limitManage)
}

func segmentView(sg model.Segment) api.Segment {
	return api.Segment{ID: string(sg.ID), SiteID: string(sg.SiteID), Name: sg.Name, Filters: sg.Filters, CreatedAt: sg.CreatedAt.UTC()}
}

func (s *Server) listSegments(c echo.Context) error {
	list, err := s.deps.Segments.List(c.Request().Context(), principal(c), model.SiteID(c.Param("id")))
	if err != nil {
		return err
	}
	res := api.SegmentsResponse{Data: make([]api.Segment, len(list))}
	for i, sg := range list {
		res.Data[i] = segmentView(sg)
	}
	return c.JSON(http.StatusOK, res)
}

func (s *Server) createSegment(c echo.Context) error {
	var req api.SegmentRequest
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	sg, err := s.deps.Segments.Create(c.Request().Context(), principal(c), model.SiteID(c.Param("id")),
		segments.Input{Name: req.Name, Filters: req.Filters})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, api.SegmentResponse{Data: segmentView(sg)})
}

func (s *Server) updateSegment(c echo.Context) error {
	var req api.SegmentChange
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	sg, err := s.deps.Segments.Update(c.Request().Context(), principal(c), model.SiteID(c.Param("id")),
		model.SegmentID(c.Param("segment_id")), segments.Change{Name: req.Name, Filters: req.Filters})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, api.SegmentResponse{Data: segmentView(sg)})
}

func (s *Server) deleteSegment(c echo.Context) error {
	err := s.deps.Segments.Delete(c.Request().Context(), principal(c), model.SiteID(c.Param("id")), model.SegmentID(c.Param("segment_id")))
	if err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

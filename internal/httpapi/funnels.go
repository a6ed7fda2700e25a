package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/funnels"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/stats"
	"github.com/tally-analytics/tally/internal/wire"
	"github.com/tally-analytics/tally/pkg/api"
)

// Funnels manages funnel definitions.
type Funnels interface {
	Create(ctx context.Context, p auth.Principal, in funnels.Input) (model.Funnel, error)
	List(ctx context.Context, p auth.Principal, site model.SiteID) ([]model.Funnel, error)
	Get(ctx context.Context, p auth.Principal, id model.FunnelID) (model.Funnel, error)
	Update(ctx context.Context, p auth.Principal, id model.FunnelID, in funnels.Input) (model.Funnel, error)
	Delete(ctx context.Context, p auth.Principal, id model.FunnelID) error
}

// funnelRoutes registers the funnel routes behind authn: definitions count
// against the management allowance (as goals do), the report against stats.
func (s *Server) funnelRoutes(g *echo.Group, authn echo.MiddlewareFunc) {
	manage := []echo.MiddlewareFunc{authn, s.limitManage}
	write := []echo.MiddlewareFunc{authn, s.limitManage, bodyLimit(64 << 10)}
	g.GET("/funnels", s.listFunnels, s.reads(manage...)...)
	g.POST("/funnels", s.createFunnel, write...)
	g.GET("/funnels/:id", s.getFunnel, s.reads(manage...)...)
	g.PUT("/funnels/:id", s.updateFunnel, write...)
	g.DELETE("/funnels/:id", s.deleteFunnel, manage...)
	g.GET("/stats/funnel", report(stats.Endpoint{Funnel: true}, s.deps.Stats.Funnel, wire.Funnel), s.reads(authn, s.limitStats)...)
}

// funnelView is a funnel as the API shows it.
func funnelView(f model.Funnel) api.Funnel {
	out := api.Funnel{FunnelID: string(f.ID), SiteID: string(f.SiteID), Name: f.Name, WindowSeconds: int64(f.Window / time.Second),
		CreatedAt: f.CreatedAt.UTC(), Steps: make([]api.FunnelStep, len(f.Steps))}
	for i, st := range f.Steps {
		out.Steps[i] = api.FunnelStep{Type: string(st.Type), PagePath: st.PagePath, EventName: st.EventName, Props: st.Props}
	}
	return out
}

// funnelInput is a request's funnel as the service takes it.
func funnelInput(r api.FunnelRequest) funnels.Input {
	in := funnels.Input{SiteID: r.SiteID, Name: r.Name, WindowSeconds: r.WindowSeconds, Steps: make([]funnels.StepInput, len(r.Steps))}
	for i, st := range r.Steps {
		in.Steps[i] = funnels.StepInput{Type: st.Type, PagePath: st.PagePath, EventName: st.EventName, Props: st.Props}
	}
	return in
}

func (s *Server) listFunnels(c echo.Context) error {
	list, err := s.deps.Funnels.List(c.Request().Context(), principal(c), model.SiteID(c.QueryParam("site_id")))
	if err != nil {
		return err
	}
	res := api.FunnelsResponse{Data: make([]api.Funnel, len(list))}
	for i, f := range list {
		res.Data[i] = funnelView(f)
	}
	return c.JSON(http.StatusOK, res)
}

func (s *Server) createFunnel(c echo.Context) error {
	var req api.FunnelRequest
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	f, err := s.deps.Funnels.Create(c.Request().Context(), principal(c), funnelInput(req))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, api.FunnelResponse{Data: funnelView(f)})
}

func (s *Server) getFunnel(c echo.Context) error {
	f, err := s.deps.Funnels.Get(c.Request().Context(), principal(c), model.FunnelID(c.Param("id")))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, api.FunnelResponse{Data: funnelView(f)})
}

func (s *Server) updateFunnel(c echo.Context) error {
	var req api.FunnelRequest
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	f, err := s.deps.Funnels.Update(c.Request().Context(), principal(c), model.FunnelID(c.Param("id")), funnelInput(req))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, api.FunnelResponse{Data: funnelView(f)})
}

func (s *Server) deleteFunnel(c echo.Context) error {
	if err := s.deps.Funnels.Delete(c.Request().Context(), principal(c), model.FunnelID(c.Param("id"))); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

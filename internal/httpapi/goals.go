package httpapi

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/goals"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/stats"
	"github.com/tally-analytics/tally/internal/wire"
	"github.com/tally-analytics/tally/pkg/api"
)

// Goals manages goals.
type Goals interface {
	Create(ctx context.Context, p auth.Principal, in goals.Input) (model.Goal, error)
	List(ctx context.Context, p auth.Principal, site model.SiteID) ([]model.Goal, error)
	Get(ctx context.Context, p auth.Principal, id model.GoalID) (model.Goal, error)
	Update(ctx context.Context, p auth.Principal, id model.GoalID, in goals.Input) (model.Goal, error)
	Delete(ctx context.Context, p auth.Principal, id model.GoalID) error
}

// goalRoutes registers the goal routes behind authn: definitions count
// against the management allowance, the conversions report against stats.
func (s *Server) goalRoutes(g *echo.Group, authn echo.MiddlewareFunc) {
	manage := []echo.MiddlewareFunc{authn, s.limitManage}
	write := []echo.MiddlewareFunc{authn, s.limitManage, bodyLimit(64 << 10)}
	g.GET("/goals", s.listGoals, s.reads(manage...)...)
	g.POST("/goals", s.createGoal, write...)
	g.GET("/goals/conversions", report(stats.Endpoint{}, s.deps.Stats.Conversions, wire.Conversions), s.reads(authn, s.limitStats)...)
	g.GET("/goals/:id", s.getGoal, s.reads(manage...)...)
	g.PUT("/goals/:id", s.updateGoal, write...)
	g.DELETE("/goals/:id", s.deleteGoal, manage...)
}

func goalView(g model.Goal) api.Goal {
	return api.Goal{GoalID: string(g.ID), SiteID: string(g.SiteID), GoalName: g.Name, GoalType: string(g.Type),
		PagePath: g.PagePath, EventName: g.EventName, CreatedAt: g.CreatedAt.UTC()}
}

func goalInput(r api.GoalRequest) goals.Input {
	return goals.Input{SiteID: r.SiteID, Name: r.GoalName, Type: r.GoalType, PagePath: r.PagePath, EventName: r.EventName}
}

func (s *Server) listGoals(c echo.Context) error {
	list, err := s.deps.Goals.List(c.Request().Context(), principal(c), model.SiteID(c.QueryParam("site_id")))
	if err != nil {
		return err
	}
	res := api.GoalsResponse{Data: make([]api.Goal, len(list))}
	for i, g := range list {
		res.Data[i] = goalView(g)
	}
	return c.JSON(http.StatusOK, res)
}

func (s *Server) createGoal(c echo.Context) error {
	var req api.GoalRequest
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	g, err := s.deps.Goals.Create(c.Request().Context(), principal(c), goalInput(req))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, api.GoalResponse{Data: goalView(g)})
}

func (s *Server) getGoal(c echo.Context) error {
	g, err := s.deps.Goals.Get(c.Request().Context(), principal(c), model.GoalID(c.Param("id")))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, api.GoalResponse{Data: goalView(g)})
}

func (s *Server) updateGoal(c echo.Context) error {
	var req api.GoalRequest
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	g, err := s.deps.Goals.Update(c.Request().Context(), principal(c), model.GoalID(c.Param("id")), goalInput(req))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, api.GoalResponse{Data: goalView(g)})
}

func (s *Server) deleteGoal(c echo.Context) error {
	if err := s.deps.Goals.Delete(c.Request().Context(), principal(c), model.GoalID(c.Param("id"))); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

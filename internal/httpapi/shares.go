package httpapi

import (
	"context"
	"net"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/sharing"
	"github.com/tally-analytics/tally/pkg/api"
)

// SharedLinks manages the links to sites' read-only dashboards.
type SharedLinks interface {
	List(ctx context.Context, p auth.Principal, site model.SiteID) ([]model.SharedLink, error)
	Create(ctx context.Context, p auth.Principal, site model.SiteID, in sharing.Input) (sharing.Created, error)
	SetPassword(ctx context.Context, p auth.Principal, site model.SiteID, id model.SharedLinkID, password string) (model.SharedLink, error)
	RemovePassword(ctx context.Context, p auth.Principal, site model.SiteID, id model.SharedLinkID) (model.SharedLink, error)
	Delete(ctx context.Context, p auth.Principal, site model.SiteID, id model.SharedLinkID) error
}

// sharedLinkRoutes registers the shared links of a site, managed as the
// site's settings are: the management allowance.
func (s *Server) sharedLinkRoutes(g *echo.Group, authn echo.MiddlewareFunc) {
	g.GET("/sites/:id/shared-links", s.listSharedLinks, s.reads(authn, s.limitManage)...)
	g.POST("/sites/:id/shared-links", s.createSharedLink, authn, s.limitManage, bodyLimit(64<<10))
	g.DELETE("/sites/:id/shared-links/:link_id", s.deleteSharedLink, authn, s.limitManage)
	g.PUT("/sites/:id/shared-links/:link_id/password", s.setSharedLinkPassword, authn, s.limitManage, bodyLimit(64<<10))
	g.DELETE("/sites/:id/shared-links/:link_id/password", s.removeSharedLinkPassword, authn, s.limitManage)
}

// BaseURL is the server's address as browsers and payment providers reach
// it: public (TALLY_PUBLIC_URL) when set, else the request's own origin,
// its scheme as Scheme decides it with the trusted proxies (never echo's
// c.Scheme(), which believes any client's X-Forwarded-Proto).
func BaseURL(c echo.Context, public string, trusted []*net.IPNet) string {
	if public != "" {
		return strings.TrimSuffix(public, "/")
	}
	return Scheme(c.Request(), trusted) + "://" + c.Request().Host
}

func sharedLinkView(l model.SharedLink) api.SharedLink {
	return api.SharedLink{ID: string(l.ID), Label: l.Label, ShowRevenue: l.ShowRevenue, PasswordProtected: l.Protected(),
		CreatedAt: l.CreatedAt.UTC()}
}

func (s *Server) listSharedLinks(c echo.Context) error {
	list, err := s.deps.SharedLinks.List(c.Request().Context(), principal(c), model.SiteID(c.Param("id")))
	if err != nil {
		return err
	}
	res := api.SharedLinksResponse{Data: make([]api.SharedLink, len(list))}
	for i, l := range list {
		res.Data[i] = sharedLinkView(l)
	}
	return c.JSON(http.StatusOK, res)
}

func (s *Server) createSharedLink(c echo.Context) error {
	var req api.SharedLinkRequest
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	in := sharing.Input{Label: req.Label, ShowRevenue: req.ShowRevenue, Password: req.Password}
	created, err := s.deps.SharedLinks.Create(c.Request().Context(), principal(c), model.SiteID(c.Param("id")), in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, api.CreatedSharedLinkResponse{Data: api.CreatedSharedLink{SharedLink: sharedLinkView(created.Link),
		URL: sharing.URL(BaseURL(c, s.deps.PublicURL, s.deps.TrustedProxies), created.Token), Token: created.Token}})
}

func (s *Server) deleteSharedLink(c echo.Context) error {
	err := s.deps.SharedLinks.Delete(c.Request().Context(), principal(c), model.SiteID(c.Param("id")), model.SharedLinkID(c.Param("link_id")))
	if err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

func (s *Server) setSharedLinkPassword(c echo.Context) error {
	var req api.SharedLinkPasswordRequest
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	l, err := s.deps.SharedLinks.SetPassword(c.Request().Context(), principal(c), model.SiteID(c.Param("id")),
		model.SharedLinkID(c.Param("link_id")), req.Password)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, api.SharedLinkResponse{Data: sharedLinkView(l)})
}

func (s *Server) removeSharedLinkPassword(c echo.Context) error {
	l, err := s.deps.SharedLinks.RemovePassword(c.Request().Context(), principal(c), model.SiteID(c.Param("id")),
		model.SharedLinkID(c.Param("link_id")))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, api.SharedLinkResponse{Data: sharedLinkView(l)})
}

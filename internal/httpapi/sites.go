package httpapi

import (
	"context"
	"net/http"
	"slices"

	"github.com/labstack/echo/v4"

	"github.com/tally-analytics/tally/internal/accounts"
	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/pkg/api"
)

// SitesAPI manages sites.
type SitesAPI interface {
	List(ctx context.Context, p auth.Principal) ([]model.Membership, error)
	Create(ctx context.Context, p auth.Principal, in accounts.SiteChange) (model.Membership, error)
	Get(ctx context.Context, p auth.Principal, id model.SiteID) (model.Membership, error)
	Update(ctx context.Context, p auth.Principal, id model.SiteID, in accounts.SiteChange) (model.Membership, error)
	Delete(ctx context.Context, p auth.Principal, id model.SiteID) error
}

func (s *Server) siteRoutes(g *echo.Group, mw ...echo.MiddlewareFunc) {
	write := append(slices.Clip(mw), bodyLimit(64<<10))
	g.GET("/sites", s.listSites, s.reads(mw...)...)
	g.POST("/sites", s.createSite, write...)
	g.GET("/sites/:id", s.getSite, s.reads(mw...)...)
	g.PUT("/sites/:id", s.updateSite, write...)
	g.DELETE("/sites/:id", s.deleteSite, mw...)
}

func siteView(m model.Membership) api.Site {
	v := api.Site{SiteID: string(m.Site.ID), Domain: m.Site.Domain, Timezone: m.Site.Timezone,
		BaseCurrency: m.Site.BaseCurrency, Role: string(m.Role), CreatedAt: m.Site.CreatedAt.UTC(),
		ClientRevenue: api.ClientRevenue{Included: m.Site.ClientRevenue.Included, Cap: m.Site.ClientRevenue.Cap}}
	// a viewer sees no exclusions: the addresses may be the team's own
	if m.Role != model.RoleViewer {
		pages, addresses, hosts := orEmpty(m.Site.Exclusions.Pages), orEmpty(m.Site.Exclusions.Addresses), orEmpty(m.Site.Exclusions.Hosts)
		v.ExcludedPages, v.ExcludedAddresses, v.ExcludedHosts = &pages, &addresses, &hosts
	}
	return v
}

// orEmpty is l, or an empty list rather than null.
func orEmpty(l []string) []string {
	if l == nil {
		return []string{}
	}
	return l
}

func siteChange(r api.SiteRequest) accounts.SiteChange {
	ch := accounts.SiteChange{Domain: r.Domain, Timezone: r.Timezone, BaseCurrency: r.BaseCurrency,
		ExcludedPages: r.ExcludedPages, ExcludedAddresses: r.ExcludedAddresses, ExcludedHosts: r.ExcludedHosts}
	if cr := r.ClientRevenue; cr != nil {
		ch.ClientRevenueIncluded, ch.ClientRevenueCap = cr.Included, cr.Cap
	}
	return ch
}

func (s *Server) listSites(c echo.Context) error {
	list, err := s.deps.SitesAPI.List(c.Request().Context(), principal(c))
	if err != nil {
		return err
	}
	res := api.SitesResponse{Data: make([]api.Site, len(list))}
	for i, m := range list {
		res.Data[i] = siteView(m)
	}
	return c.JSON(http.StatusOK, res)
}

func (s *Server) createSite(c echo.Context) error {
	var req api.SiteRequest
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	m, err := s.deps.SitesAPI.Create(c.Request().Context(), principal(c), siteChange(req))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, api.SiteResponse{Data: siteView(m)})
}

func (s *Server) getSite(c echo.Context) error {
	m, err := s.deps.SitesAPI.Get(c.Request().Context(), principal(c), model.SiteID(c.Param("id")))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, api.SiteResponse{Data: siteView(m)})
}

func (s *Server) updateSite(c echo.Context) error {
	var req api.SiteRequest
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	m, err := s.deps.SitesAPI.Update(c.Request().Context(), principal(c), model.SiteID(c.Param("id")), siteChange(req))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, api.SiteResponse{Data: siteView(m)})
}

func (s *Server) deleteSite(c echo.Context) error {
	id := c.Param("id")
	if err := s.deps.SitesAPI.Delete(c.Request().Context(), principal(c), model.SiteID(id)); err != nil {
		return err
	}
	var res api.SiteDeletion
	res.Data.SiteID, res.Data.Status = id, "deleting"
	res.Message = "The site is deleted. Its statistics, payments and realtime data are being removed in the background."
	return c.JSON(http.StatusAccepted, res)
}

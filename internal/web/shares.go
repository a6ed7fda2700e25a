package web

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/sharing"
)

// Shares manages a site's shared links and opens them.
type Shares interface {
	List(ctx context.Context, p auth.Principal, site model.SiteID) ([]model.SharedLink, error)
	Create(ctx context.Context, p auth.Principal, site model.SiteID, in sharing.Input) (sharing.Created, error)
	Delete(ctx context.Context, p auth.Principal, site model.SiteID, id model.SharedLinkID) error
	Open(ctx context.Context, token string) (sharing.Opened, error)
}

// createSharedLink makes a link and shows its URL once, on this answer
// (which is not cached: the token is nowhere else).
func (s *Server) createSharedLink(c echo.Context) error {
	u, _ := session(c)
	in := sharing.Input{Label: c.FormValue("label"), ShowRevenue: c.FormValue("show_revenue") == "on"}
	created, err := s.deps.Shares.Create(c.Request().Context(), u.principal(), model.SiteID(c.Param("site")), in)
	if err != nil {
		return s.settingsError(c, "shares", err)
	}
	p, err := s.settingsData(c)
	if err != nil {
		return err
	}
	p.NewShareURL, p.NewShareLabel = sharing.URL(s.baseURL(c), created.Token), created.Link.Label
	return s.render(c, http.StatusCreated, "settings", p)
}

func (s *Server) deleteSharedLink(c echo.Context) error {
	u, _ := session(c)
	err := s.deps.Shares.Delete(c.Request().Context(), u.principal(), model.SiteID(c.Param("site")), model.SharedLinkID(c.Param("link")))
	if err != nil {
		return s.settingsError(c, "shares", err)
	}
	return s.settingsRedirect(c, "share_deleted", "shares")
}

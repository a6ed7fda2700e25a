package web

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/httpapi"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/ratelimit"
	"github.com/tally-analytics/tally/internal/sharing"
	"github.com/tally-analytics/tally/internal/twofactor"
)

// Shares manages a site's shared links and opens them.
type Shares interface {
	List(ctx context.Context, p auth.Principal, site model.SiteID) ([]model.SharedLink, error)
	Create(ctx context.Context, p auth.Principal, site model.SiteID, in sharing.Input) (sharing.Created, error)
	SetPassword(ctx context.Context, p auth.Principal, site model.SiteID, id model.SharedLinkID, password string) (model.SharedLink, error)
	RemovePassword(ctx context.Context, p auth.Principal, site model.SiteID, id model.SharedLinkID) (model.SharedLink, error)
	Delete(ctx context.Context, p auth.Principal, site model.SiteID, id model.SharedLinkID) error
	Open(ctx context.Context, token, access string) (sharing.Opened, error)
	Unlock(ctx context.Context, token, password string) (sharing.Access, error)
}

// createSharedLink makes a link and shows its URL once, on this answer
// (which is not cached: the token is nowhere else).
func (s *Server) createSharedLink(c echo.Context) error {
	u, _ := session(c)
	in := sharing.Input{Label: c.FormValue("label"), ShowRevenue: c.FormValue("show_revenue") == "on", Password: c.FormValue("password")}
	created, err := s.deps.Shares.Create(c.Request().Context(), u.principal(), model.SiteID(c.Param("site")), in)
	if err != nil {
		return s.settingsError(c, "shares", err)
	}
	p, err := s.settingsData(c)
	if err != nil {
		return err
	}
	p.NewShareURL, p.NewShareLabel = sharing.URL(s.baseURL(c), created.Token), created.Link.Label
	p.NewShareEmbed = embedSnippet(p.NewShareURL, created.Link.Label)
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

// Attempts counts failures per key across every server (see
// ratelimit.Attempts): counted before the outcome is known, taken back
// when it was none.
type Attempts interface {
	Begin(ctx context.Context, key string, b ratelimit.Bound, now time.Time) (ratelimit.Attempt, time.Duration, error)
	Succeeded(ctx context.Context, at ratelimit.Attempt) error
}

// sharedView opens the link of the URL's token (an unknown or deleted one
// is the error page's 404; one with a password, without the cookie that
// shows it was given, is sharing.Locked) and reads its view.
func (s *Server) sharedView(c echo.Context) (sharing.Opened, view, error) {
	token := c.Param("token")
	o, err := s.openShare(c, token)
	if err != nil {
		return o, view{}, err
	}
	v, err := parseView(c.QueryParams(), o.Site, sharing.Path(token), s.deps.Now())
	v.Shared, v.NoRevenue = true, !o.Link.ShowRevenue
	return o, v, err
}

// openShare opens the link of token within the client address's bound on
// failed lookups (httpapi.ShareMisses), for the page and its cards alike:
// past it, 429 without a lookup. If Redis cannot answer, the token is
// looked up, as the limits let requests pass then.
func (s *Server) openShare(c echo.Context, token string) (sharing.Opened, error) {
	ctx, access := c.Request().Context(), shareAccess(c)
	if s.deps.ShareMisses == nil {
		return s.deps.Shares.Open(ctx, token, access)
	}
	key, bound := httpapi.ShareMisses(c.RealIP())
	at, wait, err := s.deps.ShareMisses.Begin(ctx, key, bound, s.deps.Now())
	if err != nil {
		return s.deps.Shares.Open(ctx, token, access)
	}
	if wait > 0 {
		return sharing.Opened{}, &errs.Error{Kind: errs.RateLimited, Code: "rate_limit_exceeded", RetryAfter: wait,
			Message: fmt.Sprintf("Too many unknown shared links were asked for from your address: none is opened for the next %s.",
				twofactor.Minutes(wait))}
	}
	o, err := s.deps.Shares.Open(ctx, token, access)
	if errs.KindOf(err) != errs.NotFound {
		// a link found (locked by its password or not), or a lookup that
		// failed, is no miss
		_ = s.deps.ShareMisses.Succeeded(context.WithoutCancel(ctx), at)
	}
	return o, err
}

// sharedDashboard is a site's dashboard for whoever has a link's URL:
// without a login, read-only, as the site's viewers see it, less what the
// view does not show.
func (s *Server) sharedDashboard(c echo.Context) error {
	o, v, err := s.sharedView(c)
	if sharing.IsLocked(err) {
		return s.renderSharePassword(c, http.StatusUnauthorized, "")
	}
	if err != nil {
		return err
	}
	pg := page{Title: o.Site.Domain, Public: true}
	return s.render(c, http.StatusOK, "dashboard", dashboardOf(pg, v, model.RoleViewer))
}

// sharedCard is a card of a shared dashboard, of the link's site only, read
// as the link's visitor and counted against the link's allowance (not its
// site owner's). A link with a password answers its cards only to the
// browser that gave it (else 401).
func (s *Server) sharedCard(c echo.Context) error {
	o, v, err := s.sharedView(c)
	if err != nil {
		return err
	}
	if err := s.limitShare(c, o.Link.ID); err != nil {
		return err
	}
	return s.cardOf(c, o.Principal, v)
}

// limitShare counts a card against its link's hourly allowance. If Redis
// cannot answer, the card is served.
func (s *Server) limitShare(c echo.Context, link model.SharedLinkID) error {
	if s.deps.SharePerHour <= 0 {
		return nil
	}
	res, err := s.deps.Limiter.AllowN(c.Request().Context(), "share:"+string(link), ratelimit.PerHour(s.deps.SharePerHour), 1)
	if err != nil {
		return nil
	}
	return limited(c, res, fmt.Sprintf("This shared dashboard was opened too often in the last hour; this report is back in %d s.",
		int(res.RetryAfter.Seconds())+1))
}

// embedParam asks for a shared dashboard fit for another site's frame
// (embed=1): framing allowed, no header.
const embedParam = "embed"

// embedSnippet is the iframe of a shared dashboard at url in embed mode.
func embedSnippet(url, label string) string {
	return `<iframe src="` + html.EscapeString(url+"?"+embedParam+"=1") + `" title="` + html.EscapeString(label) +
		`" style="width: 100%; height: 1600px; border: 0;" loading="lazy"></iframe>`
}

// embedded reports whether r is of a shared dashboard (or its cards) in
// embed mode. Only shared dashboards may be framed: a member's pages act
// (forms, a session), a shared one only shows what its link already shows.
func embedded(r *http.Request) bool {
	return strings.HasPrefix(r.URL.Path, sharing.PathPrefix) && r.URL.Query().Get(embedParam) == "1"
}

// sharedHeaders are what every answer under /share, and of an email
// report's unsubscribe link, carries besides the dashboard's: a token is in
// the URL, so no Referer may carry it to a linked site, no search engine
// may index it, and no shared cache may keep the page.
func sharedHeaders(h http.Header) {
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Robots-Tag", "noindex, nofollow")
	h.Set("Cache-Control", "private, no-store")
}

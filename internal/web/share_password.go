package web

import (
	"net/http"
	"net/url"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/httpapi"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/sharing"
)

// A shared link with a password shows, instead of its dashboard, a form
// that asks for it; the right password sets a cookie that opens the link's
// page and cards (see sharing.Access). Both cookies of such a link, the
// access and the form's CSRF token, are scoped to the link's path, so that
// no other link, and no other page of the server, receives them.
const (
	// shareAccessCookie holds a sharing.Access's value.
	shareAccessCookie = "tally_share_access"
	// shareCSRFCookie carries the CSRF token of the password form (double
	// submit: the form must repeat it), as the login form's.
	shareCSRFCookie = "tally_share_csrf"
)

// sharePasswordPage is the form of a link's password. It names neither the
// site nor the link: they are for those who know the password.
type sharePasswordPage struct {
	page
	// Action is the link's URL with the view's query (range, filters,
	// embed mode and theme), where the form posts and then returns.
	Action string
	Error  string
	// Own is the link's URL outside embed mode, offered in a frame: a
	// browser that keeps no cookies for another site's frame can open it
	// in a tab of its own.
	Own string
}

// shareAccess is the access cookie the request sent to its link, if any.
func shareAccess(c echo.Context) string {
	if ck, err := c.Cookie(shareAccessCookie); err == nil {
		return ck.Value
	}
	return ""
}

// sharedPage is the link's dashboard with the request's query.
func sharedPage(c echo.Context, token string) string {
	if q := c.QueryParams().Encode(); q != "" {
		return sharing.Path(token) + "?" + q
	}
	return sharing.Path(token)
}

// renderSharePassword shows the password form of the link of the request's
// token, with a new CSRF token, and drops an access cookie that did not
// open the link (its password changed, or it expired).
func (s *Server) renderSharePassword(c echo.Context, status int, message string) error {
	token := c.Param("token")
	csrf := auth.RandomString(32, tokenAlphabet)
	s.shareCookie(c, token, shareCSRFCookie, csrf, time.Hour)
	if shareAccess(c) != "" {
		s.shareCookie(c, token, shareAccessCookie, "", -1)
	}
	p := sharePasswordPage{page: page{Title: "Shared dashboard", Public: true, CSRF: formToken(csrf)},
		Action: sharedPage(c, token), Error: message}
	if embedded(c.Request()) {
		q := c.Request().URL.Query() // a copy: the context's own values stay as they are
		q.Del(embedParam)
		q.Del("theme")
		p.Own = (&url.URL{Path: sharing.Path(token), RawQuery: q.Encode()}).String()
	}
	return s.render(c, status, "share_password", p)
}

// unlockShared checks the password posted to a link: the right one sets
// the link's access cookie and goes back to its dashboard; a wrong one is
// the form again (401). Tries are counted per client address and per link
// (httpapi.SharePasswordLimits; 429 past them), before the password is
// checked. A link without a password, or a browser with access to it
// already, goes to the dashboard; an unknown link is 404, a miss of the
// client address's bound as on the dashboard's routes (openShare).
func (s *Server) unlockShared(c echo.Context) error {
	token, ctx := c.Param("token"), c.Request().Context()
	if _, err := s.openShare(c, token); !sharing.IsLocked(err) {
		if err != nil {
			return err
		}
		return c.Redirect(http.StatusSeeOther, sharedPage(c, token))
	}
	if ck, err := c.Cookie(shareCSRFCookie); err != nil || !formTokenOK(c.FormValue("csrf"), ck.Value) {
		return s.renderSharePassword(c, http.StatusForbidden, "The form has expired; please try again.")
	}
	if err := s.countTries(c, httpapi.SharePasswordLimits(token, c.RealIP(), s.deps.LoginAttempts), tryLater); err != nil {
		return s.renderSharePassword(c, http.StatusTooManyRequests, err.Error())
	}
	access, err := s.deps.Shares.Unlock(ctx, token, c.FormValue("password"))
	switch {
	case errs.KindOf(err) == errs.Unauthenticated:
		return s.renderSharePassword(c, http.StatusUnauthorized, "Wrong password.")
	case err != nil:
		return err
	}
	if access.Value != "" { // empty: the password was removed meanwhile
		s.shareCookie(c, token, shareAccessCookie, access.Value, access.Expires.Sub(s.deps.Now()))
	}
	s.shareCookie(c, token, shareCSRFCookie, "", -1)
	return c.Redirect(http.StatusSeeOther, sharedPage(c, token))
}

// shareCookie sets (or, with a negative ttl, clears) a cookie of the link
// of token, sent back to its path only: HttpOnly, Secure by the server's
// rule, SameSite=Lax. In embed mode the page is in another site's frame,
// where a browser neither keeps nor sends a Lax cookie: there it is
// SameSite=None and Partitioned (kept for that embedding site alone), when
// it can be Secure, which SameSite=None needs. Browsers that refuse every
// cookie of a frame (Safari by default) cannot open such a link in one.
func (s *Server) shareCookie(c echo.Context, token, name, value string, ttl time.Duration) {
	ck := &http.Cookie{Name: name, Value: value, Path: sharing.Path(token), MaxAge: int(ttl / time.Second), HttpOnly: true,
		Secure: s.deps.SecureCookies, SameSite: http.SameSiteLaxMode}
	if ttl < 0 {
		ck.MaxAge = -1
	}
	if embedded(c.Request()) && s.deps.SecureCookies {
		ck.SameSite, ck.Partitioned = http.SameSiteNoneMode, true
	}
	c.SetCookie(ck)
}

// setSharedLinkPassword gives the link of the form a password, or a new
// one (the settings' Shared links).
func (s *Server) setSharedLinkPassword(c echo.Context) error {
	u, _ := session(c)
	_, err := s.deps.Shares.SetPassword(c.Request().Context(), u.principal(), model.SiteID(c.Param("site")),
		model.SharedLinkID(c.FormValue("link")), c.FormValue("password"))
	if err != nil {
		return s.settingsError(c, "shares", err)
	}
	return s.settingsRedirect(c, "share_password", "shares")
}

// removeSharedLinkPassword opens a link to whoever has its URL again.
func (s *Server) removeSharedLinkPassword(c echo.Context) error {
	u, _ := session(c)
	_, err := s.deps.Shares.RemovePassword(c.Request().Context(), u.principal(), model.SiteID(c.Param("site")),
		model.SharedLinkID(c.Param("link")))
	if err != nil {
		return s.settingsError(c, "shares", err)
	}
	return s.settingsRedirect(c, "share_password_removed", "shares")
}

package web

import (
	"net/http"
	"net/url"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/tally-analytics/tally/internal/errs"
)

const (
	// themeCookie keeps the colours chosen in the page header: "light" or
	// "dark"; without it, pages follow the system's (prefers-color-scheme).
	// A cookie and not the browser's storage, so that the server writes the
	// choice into the page and its first paint is already in its colours.
	themeCookie = "tally_theme"
	themeLight  = "light"
	themeDark   = "dark"
	// themeTTL is how long a choice is kept (renewed by each choice).
	themeTTL = 365 * 24 * time.Hour
	// maxBack is the longest address the theme form goes back to.
	maxBack = 2048
)

// themeOf is the colours the request's browser chose: "light", "dark", or
// "" to follow the system (no choice, or a cookie of no known value). An
// embedded shared dashboard has the colours its URL names (theme=), as the
// page around it wants them: in another site's frame the browser's choice
// of this site's colours is seldom sent (a third party's cookie).
func themeOf(c echo.Context) string {
	if embedded(c.Request()) {
		switch t := c.QueryParam("theme"); t {
		case themeLight, themeDark:
			return t
		}
		return ""
	}
	ck, err := c.Cookie(themeCookie)
	if err != nil {
		return ""
	}
	switch ck.Value {
	case themeLight, themeDark:
		return ck.Value
	}
	return ""
}

// themeBack is the page the theme form goes back to: the page itself, or
// for a page that answers a form (a post that failed its checks), the page
// that sent the form, when it is of this site.
func themeBack(r *http.Request) string {
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		if u := r.URL.RequestURI(); len(u) <= maxBack {
			return u
		}
		return "" // home: a page's address is seldom this long, and a Location header of it could be refused
	}
	if u, err := url.Parse(r.Referer()); err == nil && u.Host == r.Host {
		return safeNext(u.RequestURI())
	}
	return ""
}

// setTheme keeps the colours chosen (system clears the choice) and goes
// back to the page of the form. It takes no CSRF token: the form is on
// pages without a session too (the login page, a shared dashboard), and a
// post forged elsewhere could do no more than change the colours.
func (s *Server) setTheme(c echo.Context) error {
	switch theme := c.FormValue("theme"); theme {
	case themeLight, themeDark:
		s.setCookie(c, themeCookie, theme, themeTTL)
	case "system":
		s.clearCookie(c, themeCookie)
	default:
		return errs.InvalidField("theme", "the theme must be system, light or dark")
	}
	back := safeNext(c.FormValue("back"))
	if back == "" || len(back) > maxBack {
		back = "/"
	}
	return c.Redirect(http.StatusSeeOther, back)
}

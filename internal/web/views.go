package web

import (
	"bytes"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/httpapi"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/money"
	"github.com/tally-analytics/tally/internal/present"
)

// page is what every full page's layout needs.
type page struct {
	Title string
	CSRF  string
	User  string // the logged-in user's name; empty on the login page
	// Nav marks the current section: sites, keys, security.
	Nav string
	// Public is a page for whoever has its URL (a shared dashboard): no
	// navigation, no account.
	Public bool
}

// layoutData is what the layout is given: the page, and the colours of the
// request's browser, written into the page so that its first paint is in
// them (see themeCookie).
type layoutData struct {
	// Page is the page's own data (its template's dot), which embeds page.
	Page any
	// Theme is "light", "dark", or "" to follow the system.
	Theme string
	// Back is where the theme form returns to.
	Back string
	// Embed: a shared dashboard in another site's frame, without the
	// header (its theme is the URL's).
	Embed bool
}

// views are the parsed templates: one set per full page (layout + page),
// and the cards.
type views struct {
	pages map[string]*template.Template
	cards *template.Template
}

var funcs = template.FuncMap{
	"num":         present.Number,
	"pct":         present.Percent,
	"duration":    present.Duration,
	"money":       money.Format,
	"major":       money.Major,
	"change":      present.Change,
	"changeClass": changeClass,
	"pointsClass": pointsClass,
	"points":      present.Points,
	"raw":         rawFloat,
	// date writes a report's date as the API does
	"date": func(t time.Time) string { return t.Format(time.DateOnly) },
	// seriesLabel writes a point of the overview's series
	"seriesLabel": seriesLabel,
	"siteFields": func(tz, cur string) any {
		return struct {
			Timezone, Currency    string
			Timezones, Currencies []string
		}{tz, cur, timezones, currencies}
	},
	"goalFields": func(site model.SiteID, csrf, suffix, name, typ, path, event string) any {
		return struct{ SiteID, CSRF, Suffix, Name, Type, PagePath, EventName string }{string(site), csrf, suffix, name, typ, path, event}
	},
}

// rawFloat writes a number exactly as the API's JSON does.
func rawFloat(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// changeClass is the class of a percent change: up, down or flat.
func changeClass(v *float64) string {
	switch {
	case v == nil || *v == 0:
		return "flat"
	case *v > 0:
		return "up"
	default:
		return "down"
	}
}

// pointsClass is the class of a change in points: up when better, so a
// rate of which lower is better is up when it falls.
func pointsClass(v float64, lowerIsBetter bool) string {
	if v == 0 {
		return "flat"
	}
	if (v > 0) != lowerIsBetter {
		return "up"
	}
	return "down"
}

// barWidth is v as a percentage of top, for the bar behind a row.
func barWidth(v, top int64) string {
	if top <= 0 {
		return "0"
	}
	return strconv.FormatFloat(math.Round(float64(v)/float64(top)*1000)/10, 'f', 1, 64)
}

func parseViews() (*views, error) {
	v := &views{pages: map[string]*template.Template{}}
	names, err := fs.Glob(files, "templates/pages/*.html")
	if err != nil {
		return nil, err
	}
	for _, path := range names {
		name := strings.TrimSuffix(path[len("templates/pages/"):], ".html")
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(files, "templates/layout.html", "templates/partials.html", path)
		if err != nil {
			return nil, fmt.Errorf("web: template %s: %w", name, err)
		}
		v.pages[name] = t
	}
	if v.cards, err = template.New("cards").Funcs(funcs).ParseFS(files, "templates/cards/*.html"); err != nil {
		return nil, fmt.Errorf("web: card templates: %w", err)
	}
	return v, nil
}

// render writes a full page; data embeds page.
func (s *Server) render(c echo.Context, status int, name string, data any) error {
	return s.renderBack(c, status, name, data, themeBack(c.Request()))
}

// renderBack writes a full page whose theme form goes back to back ("" for
// the home page).
func (s *Server) renderBack(c echo.Context, status int, name string, data any, back string) error {
	t, ok := s.views.pages[name]
	if !ok {
		return fmt.Errorf("web: no page %q", name)
	}
	var buf bytes.Buffer
	d := layoutData{Page: data, Theme: themeOf(c), Back: back, Embed: embedded(c.Request())}
	if err := t.ExecuteTemplate(&buf, "layout.html", d); err != nil {
		return fmt.Errorf("web: render %s: %w", name, err)
	}
	return c.HTMLBlob(status, buf.Bytes())
}

// renderCard writes a card (an HTML fragment).
func (s *Server) renderCard(c echo.Context, name string, data any) error {
	var buf bytes.Buffer
	if err := s.views.cards.ExecuteTemplate(&buf, name, data); err != nil {
		return fmt.Errorf("web: render card %s: %w", name, err)
	}
	return c.HTMLBlob(http.StatusOK, buf.Bytes())
}

// pageFor fills the layout's fields for a logged-in user.
func pageFor(c echo.Context, title, nav string) page {
	u, _ := session(c)
	return page{Title: title, CSRF: formToken(u.csrf), User: u.user.Name, Nav: nav}
}

type errorPage struct {
	page
	Status  int
	Message string
}

// wantsJSON reports whether the client asks for JSON and not for a page:
// its Accept header names application/json (or a +json type) and no HTML.
func wantsJSON(r *http.Request) bool {
	accept := strings.ToLower(r.Header.Get("Accept"))
	return (strings.Contains(accept, "application/json") || strings.Contains(accept, "+json")) &&
		!strings.Contains(accept, "text/html")
}

// handleError answers every failure with a page saying what went wrong (a
// safe message; the cause of a server error goes to the log only). Cards
// get the message as a fragment.
func (s *Server) handleError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	status, msg := http.StatusInternalServerError, "Something went wrong on our side. Please try again."
	var e *errs.Error
	var he *echo.HTTPError
	switch {
	case errors.As(err, &e) && e.Kind != errs.Internal:
		status, msg = httpapi.StatusOf(e.Kind), e.Message
	case errors.As(err, &he) && he.Code < 500:
		status = he.Code
		msg = http.StatusText(he.Code)
		if m, ok := he.Message.(string); ok && he.Code != http.StatusNotFound {
			msg = m
		}
	}
	switch {
	case status == http.StatusServiceUnavailable:
		s.unavailable.Fail(1, err, "route", c.Path())
		httpapi.SetRetryAfter(c.Response().Header(), err)
	case status == http.StatusTooManyRequests:
		httpapi.SetRetryAfter(c.Response().Header(), err)
	case status >= 500:
		s.deps.Log.Error("dashboard request failed", "method", c.Request().Method, "route", c.Path(), "err", err)
	}
	if c.Request().Header.Get("X-Tally-Card") != "" {
		_ = c.HTML(status, `<p class="card-error" role="alert">`+template.HTMLEscapeString(msg)+`</p>`)
		return
	}
	if wantsJSON(c.Request()) { // a program, not a browser: the API's error envelope
		status, body := httpapi.Describe(err)
		_ = c.JSON(status, body)
		return
	}
	p := errorPage{page: pageFor(c, http.StatusText(status), ""), Status: status, Message: msg}
	// a visitor without a login (of a shared link, say) has no sites to go
	// back to: their error page is a public one, offering none
	p.Public = p.User == ""
	// an error page repeats nothing of its request, not even for its theme
	// form's way back: a deleted shared link's 404 is, byte for byte, that
	// of a link that never was
	if rerr := s.renderBack(c, status, "error", p, ""); rerr != nil && !httpapi.ClientGone(rerr) {
		s.deps.Log.Error("rendering the error page", "err", rerr)
		_ = c.String(status, msg)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

package web

import (
	"context"
	"html/template"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/tally-analytics/tally/internal/httpapi"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/twofactor"
)

// TwoFactor manages the user's two-factor authentication.
type TwoFactor interface {
	Status(ctx context.Context, user model.UserID) (twofactor.Status, error)
	Begin(ctx context.Context, user model.UserID, password string) (twofactor.Setup, error)
	Pending(ctx context.Context, user model.User) (twofactor.Setup, error)
	Confirm(ctx context.Context, user model.UserID, code string) ([]string, error)
	RegenerateRecoveryCodes(ctx context.Context, user model.UserID, code string) ([]string, error)
	Disable(ctx context.Context, user model.UserID, password, code string) error
}

type securityPage struct {
	page
	Status twofactor.Status
	// Setup is the secret being set up: its QR code, text and URI.
	Setup *setupView
	// RecoveryCodes were just made: shown on this one answer only.
	RecoveryCodes []string
	Notice, Error string
	// ErrorIn names the form the error is of: password, setup,
	// regenerate, disable.
	ErrorIn string
}

type setupView struct {
	Secret, URI string
	QR          template.URL // a data: URI of a PNG, made here
}

func viewOf(s twofactor.Setup) *setupView {
	return &setupView{Secret: s.Secret, URI: s.URI, QR: template.URL(s.QR)} //nolint:gosec // our own PNG, base64
}

func (s *Server) securityData(c echo.Context) (securityPage, error) {
	u, _ := session(c)
	st, err := s.deps.TwoFactor.Status(c.Request().Context(), u.user.ID)
	return securityPage{page: pageFor(c, "Security", "security"), Status: st}, err
}

func (s *Server) security(c echo.Context) error {
	p, err := s.securityData(c)
	if err != nil {
		return err
	}
	switch {
	case c.QueryParam("password") != "":
		p.Notice = "Your password is changed. Your other sessions and login tokens are ended; this session and your API keys go on."
	case c.QueryParam("disabled") != "":
		p.Notice = "Two-factor authentication is off. Your sessions and tokens stay valid."
	case c.QueryParam("enabled") != "":
		p.Notice = "Two-factor authentication is on."
	}
	return s.render(c, http.StatusOK, "security", p)
}

// securitySetup makes a new secret and shows it, to be confirmed with a
// code. It asks for the password, counted against the login limits: a
// stolen session must not put its own second factor on the account.
func (s *Server) securitySetup(c echo.Context) error {
	u, _ := session(c)
	if refused := s.countLogin(c, u.user.Email); refused != nil {
		return refused
	}
	setup, refused := s.deps.TwoFactor.Begin(c.Request().Context(), u.user.ID, c.FormValue("password"))
	return s.securityAnswer(c, refused, "begin", func(p *securityPage) { p.Setup = viewOf(setup) })
}

// securityConfirm turns 2FA on with a current code of the new secret, and
// shows the recovery codes once; a wrong code shows the same secret again.
func (s *Server) securityConfirm(c echo.Context) error {
	u, _ := session(c)
	ctx := c.Request().Context()
	codes, refused := s.deps.TwoFactor.Confirm(ctx, u.user.ID, strings.TrimSpace(c.FormValue("code")))
	p, err := s.securityData(c)
	if err != nil {
		return err
	}
	if e := formError(refused); e != nil {
		p.Error, p.ErrorIn = e.Message, "setup"
		if setup, err := s.deps.TwoFactor.Pending(ctx, u.user); err == nil {
			p.Setup = viewOf(setup)
		}
		return s.render(c, httpapi.StatusOf(e.Kind), "security", p)
	}
	if refused != nil {
		return refused
	}
	p.RecoveryCodes, p.Notice = codes, "Two-factor authentication is on."
	return s.render(c, http.StatusCreated, "security", p)
}

// securityRegenerate replaces the recovery codes (a current code needed).
// Each try counts against the login limits, and a wrong code against the
// account's bound on them, as the login's own code step does: a stolen
// session guesses codes no faster here.
func (s *Server) securityRegenerate(c echo.Context) error {
	u, _ := session(c)
	if refused := s.countLogin(c, u.user.Email); refused != nil {
		return refused
	}
	codes, refused := s.deps.TwoFactor.RegenerateRecoveryCodes(c.Request().Context(), u.user.ID, strings.TrimSpace(c.FormValue("code")))
	return s.securityAnswer(c, refused, "regenerate", func(p *securityPage) {
		p.RecoveryCodes, p.Notice = codes, "New recovery codes: the old ones no longer work."
	})
}

// securityDisable turns 2FA off (the password and a code needed). Each
// try counts against the login limits, and a wrong code against the
// account's bound on them: a stolen session guesses the password or the
// code no faster here than at the login.
func (s *Server) securityDisable(c echo.Context) error {
	u, _ := session(c)
	if refused := s.countLogin(c, u.user.Email); refused != nil {
		return refused
	}
	refused := s.deps.TwoFactor.Disable(c.Request().Context(), u.user.ID, c.FormValue("password"), strings.TrimSpace(c.FormValue("code")))
	if refused == nil {
		return c.Redirect(http.StatusSeeOther, "/account/security?disabled=1")
	}
	return s.securityAnswer(c, refused, "disable", nil)
}

// securityAnswer shows the page after a form: its refusal, or done.
func (s *Server) securityAnswer(c echo.Context, refused error, form string, done func(*securityPage)) error {
	p, err := s.securityData(c)
	if err != nil {
		return err
	}
	if e := formError(refused); e != nil {
		p.Error, p.ErrorIn = e.Message, form
		httpapi.SetRetryAfter(c.Response().Header(), refused) // the account's bound on wrong codes or passwords
		return s.render(c, httpapi.StatusOf(e.Kind), "security", p)
	}
	if refused != nil {
		return refused
	}
	done(&p)
	return s.render(c, http.StatusOK, "security", p)
}

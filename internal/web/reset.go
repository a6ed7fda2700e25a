package web

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/httpapi"
	"github.com/tally-analytics/tally/internal/twofactor"
)

type forgotPage struct {
	page
	Email, Error string
	// Sent: the request was taken; the page says what happens next,
	// whether or not the address is an account's.
	Sent bool
}

type resetPage struct {
	page
	Token string
	// NeedsCode: the account has two-factor authentication.
	NeedsCode bool
	// Invalid: the link is unknown, used or expired.
	Invalid bool
	Error   string
}

// loginCSRFOf is the login forms' double-submit token, as a page carries
// it (formToken): the one the browser holds, or a new one.
func (s *Server) loginCSRFOf(c echo.Context) string {
	if ck, err := c.Cookie(loginCSRFCookie); err == nil && ck.Value != "" {
		return formToken(ck.Value)
	}
	return formToken(s.newLoginCSRF(c))
}

func (s *Server) renderForgot(c echo.Context, status int, p forgotPage) error {
	p.page = page{Title: "Forgot your password", CSRF: s.loginCSRFOf(c)}
	return s.render(c, status, "forgot", p)
}

func (s *Server) forgotForm(c echo.Context) error {
	return s.renderForgot(c, http.StatusOK, forgotPage{})
}

// forgot asks for a reset link for an email. The answer is the same, and
// as quick, whether or not the email is an account's: the link is made
// and sent in the background (see passwords.Service.RequestReset). The
// requests are limited per email and per client address (see
// httpapi.ResetLimits), whatever becomes of them.
func (s *Server) forgot(c echo.Context) error {
	p := forgotPage{Email: strings.TrimSpace(c.FormValue("email"))}
	switch {
	case !s.loginCSRF(c):
		p.Error = "The form has expired; please try again."
		return s.renderForgot(c, http.StatusForbidden, p)
	case p.Email == "":
		p.Error = "Enter the email address you log in with."
		return s.renderForgot(c, http.StatusBadRequest, p)
	}
	again := func(wait time.Duration) string {
		return "Too many requests for a new password; try again in " + twofactor.Minutes(wait) + "."
	}
	if err := s.countTries(c, httpapi.ResetLimits(p.Email, c.RealIP(), s.deps.LoginAttempts), again); err != nil {
		p.Error = err.Error()
		return s.renderForgot(c, http.StatusTooManyRequests, p)
	}
	s.deps.Passwords.RequestReset(p.Email)
	p.Sent = true
	return s.renderForgot(c, http.StatusOK, p)
}

func (s *Server) renderReset(c echo.Context, status int, p resetPage) error {
	p.page = page{Title: "Set a new password", CSRF: s.loginCSRFOf(c)}
	// the token is in this page's address: no request from it may carry it
	c.Response().Header().Set("Referrer-Policy", "no-referrer")
	if p.Invalid {
		// nothing of a dead link is repeated, the theme form's way back
		// included
		p.Token = ""
		return s.renderBack(c, status, "reset", p, "")
	}
	return s.render(c, status, "reset", p)
}

// resetForm is the page of a reset link: a new password, and the code of
// an account with two-factor authentication.
func (s *Server) resetForm(c echo.Context) error {
	token := c.Param("token")
	t, err := s.deps.Passwords.Target(c.Request().Context(), token)
	if errs.KindOf(err) == errs.NotFound {
		return s.renderReset(c, http.StatusNotFound, resetPage{Invalid: true})
	}
	if err != nil {
		return err
	}
	return s.renderReset(c, http.StatusOK, resetPage{Token: token, NeedsCode: t.NeedsCode})
}

// reset sets the new password of a reset link. Each try counts against
// the account's login limits, as a login does, and a wrong code against
// its bound on wrong codes: the code is guessed no faster here than at the
// login. Done, it sends the browser to log in, with the new password (and
// the code, again, for two-factor authentication stays on).
func (s *Server) reset(c echo.Context) error {
	ctx, token := c.Request().Context(), c.FormValue("token")
	p := resetPage{Token: token}
	if !s.loginCSRF(c) {
		p.Error = "The form has expired; please try again."
		return s.renderReset(c, http.StatusForbidden, p)
	}
	t, err := s.deps.Passwords.Target(ctx, token)
	if errs.KindOf(err) == errs.NotFound {
		return s.renderReset(c, http.StatusNotFound, resetPage{Invalid: true})
	}
	if err != nil {
		return err
	}
	p.NeedsCode = t.NeedsCode
	if err := s.countLogin(c, t.User.Email); err != nil {
		p.Error = err.Error()
		return s.renderReset(c, http.StatusTooManyRequests, p)
	}
	next := c.FormValue("new_password")
	err = errPasswordsDiffer()
	if next == c.FormValue("confirm_password") {
		err = s.deps.Passwords.Reset(ctx, token, next, strings.TrimSpace(c.FormValue("code")))
	}
	var e *errs.Error
	switch {
	case err == nil:
		s.clearCookie(c, challengeCookie)
		return c.Redirect(http.StatusSeeOther, "/login?reset=done")
	case errs.KindOf(err) == errs.NotFound:
		return s.renderReset(c, http.StatusNotFound, resetPage{Invalid: true})
	case errors.As(err, &e) && e.Code == "too_many_attempts":
		httpapi.SetRetryAfter(c.Response().Header(), err)
		p.Error = "Too many wrong codes for this account: no code is accepted for the next " + twofactor.Minutes(e.RetryAfter) +
			". If they were not yours, someone else may know your password."
		return s.renderReset(c, http.StatusTooManyRequests, p)
	case formError(err) != nil:
		p.Error = formError(err).Message
		return s.renderReset(c, httpapi.StatusOf(formError(err).Kind), p)
	}
	return err
}

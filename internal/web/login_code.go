package web

import (
	"errors"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/httpapi"
	"github.com/tally-analytics/tally/internal/twofactor"
)

type codePage struct {
	page
	Next, Error string
}

// challenge is the token of the login waiting for its second factor, if any.
func challenge(c echo.Context) string {
	ck, err := c.Cookie(challengeCookie)
	if err != nil {
		return ""
	}
	return ck.Value
}

// expiredChallenge sends the browser back to the password, the challenge
// being unknown, used or older than its five minutes.
func (s *Server) expiredChallenge(c echo.Context, next string) error {
	s.clearCookie(c, challengeCookie)
	return s.renderLogin(c, http.StatusUnauthorized, loginPage{Next: next, Error: "Your login has expired; please log in again."})
}

func (s *Server) renderCode(c echo.Context, status int, p codePage) error {
	p.page = page{Title: "Two-factor authentication", CSRF: s.loginCSRFOf(c)}
	return s.render(c, status, "login_code", p)
}

// codeForm asks a login whose password was right for its second factor.
func (s *Server) codeForm(c echo.Context) error {
	next := safeNext(c.QueryParam("next"))
	if _, err := s.deps.Auth.Challenged(c.Request().Context(), challenge(c)); err != nil {
		if errs.KindOf(err) == errs.Unauthenticated {
			s.clearCookie(c, challengeCookie)
			return c.Redirect(http.StatusSeeOther, "/login")
		}
		return err
	}
	return s.renderCode(c, http.StatusOK, codePage{Next: next})
}

// loginCode checks the second factor and starts the session. Each attempt
// counts against the account's login limit, as a password does, and each
// wrong code against the account's bound on them (twofactor.WrongCodes).
func (s *Server) loginCode(c echo.Context) error {
	p := codePage{Next: safeNext(c.FormValue("next"))}
	if !s.loginCSRF(c) {
		p.Error = "The form has expired; please try again."
		return s.renderCode(c, http.StatusForbidden, p)
	}
	ctx, token := c.Request().Context(), challenge(c)
	user, err := s.deps.Auth.Challenged(ctx, token)
	if errs.KindOf(err) == errs.Unauthenticated {
		return s.expiredChallenge(c, p.Next)
	}
	if err != nil {
		return err
	}
	if err := s.countLogin(c, user.Email); err != nil {
		p.Error = err.Error()
		return s.renderCode(c, http.StatusTooManyRequests, p)
	}
	user, err = s.deps.Auth.FinishLogin(ctx, token, strings.TrimSpace(c.FormValue("code")))
	switch {
	case errs.KindOf(err) == errs.Invalid:
		p.Error = "Enter the code from your authenticator app, or a recovery code."
		return s.renderCode(c, http.StatusBadRequest, p)
	case errCode(err) == "login_expired":
		return s.expiredChallenge(c, p.Next)
	case errs.KindOf(err) == errs.RateLimited:
		return s.tooManyCodes(c, p, err)
	case errs.KindOf(err) == errs.Unauthenticated:
		p.Error = "That code is not right, or was used already."
		return s.renderCode(c, http.StatusUnauthorized, p)
	case err != nil:
		return err
	}
	return s.startSession(c, user, p.Next)
}

// tooManyCodes answers a code of an account that had too many wrong ones
// lately: when codes are accepted again, and what the wrong ones may mean.
func (s *Server) tooManyCodes(c echo.Context, p codePage, err error) error {
	var e *errs.Error
	errors.As(err, &e)
	httpapi.SetRetryAfter(c.Response().Header(), err)
	p.Error = "Too many wrong codes for this account: no code is accepted for the next " + twofactor.Minutes(e.RetryAfter) +
		". If they were not yours, someone else may know your password."
	return s.renderCode(c, http.StatusTooManyRequests, p)
}

// errCode is the code of err, an *errs.Error; empty for any other.
func errCode(err error) string {
	var e *errs.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

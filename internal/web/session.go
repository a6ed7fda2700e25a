package web

import (
	"crypto/sha256"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/httpapi"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/ratelimit"
	"github.com/tally-analytics/tally/internal/twofactor"
)

const (
	sessionCookie = "tally_session"
	// loginCSRFCookie carries the CSRF token of the login form, which comes
	// before any session (double submit: the form must repeat it).
	loginCSRFCookie = "tally_login_csrf"
	// challengeCookie holds the token of a login waiting for its second
	// factor (see auth.Service.BeginLogin): no login, for five minutes.
	challengeCookie = "tally_login_challenge"
	tokenAlphabet   = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
)

// userSession is the logged-in user of a request.
type userSession struct {
	tokenHash []byte
	user      model.User
	csrf      string
}

// principal is the user acting through the dashboard: every scope, as with
// a login token of the API.
func (u userSession) principal() auth.Principal {
	return auth.Principal{UserID: u.user.ID, Scopes: model.AllScopes, Plan: u.user.Plan, EventsPerHour: u.user.EventsPerHour}
}

func session(c echo.Context) (userSession, bool) {
	u, ok := c.Get("session").(userSession)
	return u, ok
}

func hashToken(token string) []byte {
	sum := sha256.Sum256([]byte(token))
	return sum[:]
}

// loadSession finds the login of the session cookie, if any.
func (s *Server) loadSession(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		ck, err := c.Cookie(sessionCookie)
		if err != nil || len(ck.Value) != 43 {
			return next(c)
		}
		ctx := c.Request().Context()
		hash := hashToken(ck.Value)
		sess, err := s.deps.Sessions.DashboardSession(ctx, hash, s.deps.Now())
		if errors.Is(err, errs.ErrNotFound) {
			s.clearCookie(c, sessionCookie)
			return next(c)
		}
		if err != nil {
			return err
		}
		user, err := s.deps.Sessions.UserByID(ctx, sess.UserID)
		if err != nil {
			if errors.Is(err, errs.ErrNotFound) {
				return next(c)
			}
			return err
		}
		c.Set("session", userSession{tokenHash: hash, user: user, csrf: sess.CSRFToken})
		return next(c)
	}
}

// requireLogin sends visitors without a login to the login page, and checks
// the CSRF token of every form a logged-in user posts.
func (s *Server) requireLogin(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		u, ok := session(c)
		if !ok {
			if c.Request().Method != http.MethodGet {
				return echo.NewHTTPError(http.StatusUnauthorized, "your session has ended; log in again")
			}
			return c.Redirect(http.StatusSeeOther, "/login?next="+url.QueryEscape(c.Request().URL.RequestURI()))
		}
		if c.Request().Method == http.MethodPost {
			if !formTokenOK(c.FormValue("csrf"), u.csrf) {
				return echo.NewHTTPError(http.StatusForbidden, "the form has expired; reload the page and try again")
			}
			// a form counts against the user's management allowance
			key := httpapi.ManageLimitKey(auth.Principal{UserID: u.user.ID})
			res, err := s.deps.Limiter.AllowN(c.Request().Context(), key, ratelimit.PerHour(s.deps.ManagePerHour), 1)
			if err == nil {
				if err := limited(c, res, "Too many changes in the last hour; try again in a few minutes."); err != nil {
					return err
				}
			}
		}
		return next(c)
	}
}

// limited writes a limit's headers on the answer, and is its refusal (429,
// with the time until a request passes) when res refused one; nil else.
func limited(c echo.Context, res ratelimit.Result, message string) error {
	httpapi.SetLimitHeaders(c.Response().Header(), res)
	if res.Allowed {
		return nil
	}
	return &errs.Error{Kind: errs.RateLimited, Code: "rate_limit_exceeded", RetryAfter: res.RetryAfter, Message: message}
}

func (s *Server) setCookie(c echo.Context, name, value string, ttl time.Duration) {
	c.SetCookie(&http.Cookie{Name: name, Value: value, Path: "/", MaxAge: int(ttl / time.Second), HttpOnly: true,
		Secure: s.deps.SecureCookies, SameSite: http.SameSiteLaxMode})
}

func (s *Server) clearCookie(c echo.Context, name string) {
	c.SetCookie(&http.Cookie{Name: name, Value: "", Path: "/", MaxAge: -1, HttpOnly: true,
		Secure: s.deps.SecureCookies, SameSite: http.SameSiteLaxMode})
}

type loginPage struct {
	page
	Email, Next, Error, Notice string
	// Forgot links to the page that sends a reset link (when the server
	// sends them).
	Forgot bool
}

func (s *Server) loginForm(c echo.Context) error {
	if _, ok := session(c); ok {
		return c.Redirect(http.StatusSeeOther, "/sites")
	}
	p := loginPage{Next: safeNext(c.QueryParam("next"))}
	if c.QueryParam("reset") != "" {
		p.Notice = "Your new password is set, and you are logged out everywhere. Log in with it."
	}
	return s.renderLogin(c, http.StatusOK, p)
}

func (s *Server) renderLogin(c echo.Context, status int, p loginPage) error {
	p.page = page{Title: "Log in", CSRF: formToken(s.newLoginCSRF(c))}
	p.Forgot = s.deps.Passwords.Resets()
	return s.render(c, status, "login", p)
}

// newLoginCSRF sets a new double-submit token for the login forms.
func (s *Server) newLoginCSRF(c echo.Context) string {
	token := auth.RandomString(32, tokenAlphabet)
	s.setCookie(c, loginCSRFCookie, token, time.Hour)
	return token
}

// login checks the credentials (rate limited per email and address, like
// the API's), and starts a session and goes where the user was headed; an
// account with two-factor authentication goes to the code step first.
func (s *Server) login(c echo.Context) error {
	email, password := strings.TrimSpace(c.FormValue("email")), c.FormValue("password")
	p := loginPage{Email: email, Next: safeNext(c.FormValue("next"))}
	if !s.loginCSRF(c) {
		p.Error = "The form has expired; please try again."
		return s.renderLogin(c, http.StatusForbidden, p)
	}
	ctx := c.Request().Context()
	if err := s.countLogin(c, email); err != nil {
		p.Error = err.Error()
		return s.renderLogin(c, http.StatusTooManyRequests, p)
	}
	step, err := s.deps.Auth.BeginLogin(ctx, email, password)
	if err != nil {
		switch errs.KindOf(err) {
		case errs.Unauthenticated, errs.Invalid:
			p.Error = "Wrong email or password."
			return s.renderLogin(c, http.StatusUnauthorized, p)
		case errs.RateLimited:
			return s.tooManyPasswords(c, p, err)
		}
		return err
	}
	if step.Challenge != "" {
		s.setCookie(c, challengeCookie, step.Challenge, auth.ChallengeLifetime)
		return c.Redirect(http.StatusSeeOther, "/login/code?next="+url.QueryEscape(p.Next))
	}
	return s.startSession(c, step.User, p.Next)
}

// tooManyPasswords answers a login of an account that was sent too many
// wrong passwords lately (auth.FailedPasswords): when passwords are
// accepted again, and what the wrong ones may mean.
func (s *Server) tooManyPasswords(c echo.Context, p loginPage, err error) error {
	var e *errs.Error
	errors.As(err, &e)
	httpapi.SetRetryAfter(c.Response().Header(), err)
	p.Error = "Too many failed logins for this account: no password is accepted for the next " +
		twofactor.Minutes(e.RetryAfter) + ". If they were not yours, someone may be guessing your password."
	if s.deps.Passwords.Resets() {
		p.Error += " A new password (Forgot your password?) is not held back by them."
	}
	return s.renderLogin(c, http.StatusTooManyRequests, p)
}

// loginCSRF checks the double-submit token of the login forms.
func (s *Server) loginCSRF(c echo.Context) bool {
	ck, err := c.Cookie(loginCSRFCookie)
	return err == nil && formTokenOK(c.FormValue("csrf"), ck.Value)
}

// countLogin counts an attempt against the login limits of email from the
// client's address (a password, or a code of the second step), and is the
// refusal once they are spent.
func (s *Server) countLogin(c echo.Context, email string) error {
	return s.countTries(c, httpapi.LoginLimits(email, c.RealIP(), s.deps.LoginAttempts), tryLater)
}

// tryLater is the refusal of a try of a secret past its limits.
func tryLater(time.Duration) string { return "Too many attempts; try again in a few minutes." }

// countTries counts a try (of a secret, a request for a mail) against each
// of limits, and is the refusal once one is spent, saying message(the
// wait); its headers are set here, as the page is answered by the caller.
func (s *Server) countTries(c echo.Context, limits []httpapi.KeyedLimit, message func(wait time.Duration) string) error {
	for _, l := range limits {
		if res, err := s.deps.Limiter.AllowN(c.Request().Context(), l.Key, l.Limit, 1); err == nil && !res.Allowed {
			refused := limited(c, res, message(res.RetryAfter))
			httpapi.SetRetryAfter(c.Response().Header(), refused)
			return refused
		}
	}
	return nil
}

// startSession logs user in: a session, its cookie, and on to next.
func (s *Server) startSession(c echo.Context, user model.User, next string) error {
	token := auth.RandomString(43, tokenAlphabet)
	sess := model.DashboardSession{UserID: user.ID, CSRFToken: auth.RandomString(32, tokenAlphabet),
		ExpiresAt: s.deps.Now().Add(s.deps.SessionTTL)}
	if err := s.deps.Sessions.CreateDashboardSession(c.Request().Context(), hashToken(token), sess); err != nil {
		return err
	}
	s.setCookie(c, sessionCookie, token, s.deps.SessionTTL)
	s.clearCookie(c, loginCSRFCookie)
	s.clearCookie(c, challengeCookie)
	if next == "" {
		next = "/sites"
	}
	return c.Redirect(http.StatusSeeOther, next)
}

func (s *Server) logout(c echo.Context) error {
	u, _ := session(c)
	if err := s.deps.Sessions.DeleteDashboardSession(c.Request().Context(), u.tokenHash); err != nil {
		return err
	}
	s.clearCookie(c, sessionCookie)
	return c.Redirect(http.StatusSeeOther, "/login")
}

// safeNext keeps a redirect target only when it is a path of this site:
// no scheme, no host, and no backslash or control character (browsers drop
// tabs and newlines, so "/\t/evil.example" would become "//evil.example").
func safeNext(next string) string {
	if !strings.HasPrefix(next, "/") || strings.IndexFunc(next, func(r rune) bool { return r < 0x20 || r == 0x7f || r == '\\' }) >= 0 {
		return ""
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || strings.HasPrefix(next, "//") {
		return ""
	}
	return next
}

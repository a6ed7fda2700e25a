package web

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/passwords"
)

// Passwords changes the user's password, and resets forgotten ones.
type Passwords interface {
	Change(ctx context.Context, user model.UserID, current, next string, keep []byte) (model.User, error)
	// Resets reports whether this server sends reset links.
	Resets() bool
	RequestReset(email string)
	Target(ctx context.Context, token string) (passwords.ResetTarget, error)
	Reset(ctx context.Context, token, next, code string) error
}

// errPasswordsDiffer refuses a new password whose confirmation differs.
func errPasswordsDiffer() error {
	return errs.InvalidField("confirm_password", "the two new passwords differ")
}

// securityPassword changes the password (the current one needed). Each
// try counts against the login limits, as the page's other forms that
// take the password do: a stolen session guesses it no faster here (and
// a wrong one counts against the account's bound, as at login). This
// session stays; every other one ends, and every login token of the API.
func (s *Server) securityPassword(c echo.Context) error {
	u, _ := session(c)
	if refused := s.countLogin(c, u.user.Email); refused != nil {
		return refused
	}
	next := c.FormValue("new_password")
	var refused error
	if next != c.FormValue("confirm_password") {
		refused = errPasswordsDiffer()
	} else {
		_, refused = s.deps.Passwords.Change(c.Request().Context(), u.user.ID, c.FormValue("current_password"), next, u.tokenHash)
	}
	if refused == nil {
		return c.Redirect(http.StatusSeeOther, "/account/security?password=changed")
	}
	return s.securityAnswer(c, refused, "password", nil)
}

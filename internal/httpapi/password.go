package httpapi

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/pkg/api"
)

// Passwords changes the password of a login token's user (see passwords).
type Passwords interface {
	ChangeForToken(ctx context.Context, user model.UserID, current, next string) (auth.LoginResult, error)
}

// loginTokenOnly refuses API keys: what it guards is the user's own
// account, which the user acts on with a login, and an API key — made for
// a program, perhaps one someone else runs — must not take it over.
func (s *Server) loginTokenOnly(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if principal(c).IsKey() {
			return errs.E(errs.Forbidden, "forbidden", "this takes a login token (POST /api/v1/auth/login), not an API key")
		}
		return next(c)
	}
}

// changePassword changes the caller's password. Each try counts against
// the login limits of the user's email, as a login does: a stolen token
// guesses the password no faster here. Every login token of the user ends,
// the caller's too, which the answer replaces.
func (s *Server) changePassword(c echo.Context) error {
	var req api.ChangePasswordRequest
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	p := principal(c)
	for _, l := range LoginLimits(p.Email, c.RealIP(), s.deps.Limits.LoginAttempts) {
		if err := s.checkLimit(c, limitLoginName, l.Key, l.Limit, 1); err != nil {
			return err
		}
	}
	res, err := s.deps.Passwords.ChangeForToken(c.Request().Context(), p.UserID, req.CurrentPassword, req.NewPassword)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, api.LoginResponse{
		Token:     res.Token,
		User:      api.User{ID: string(res.User.ID), Email: res.User.Email, Name: res.User.Name},
		ExpiresAt: res.ExpiresAt,
	})
}

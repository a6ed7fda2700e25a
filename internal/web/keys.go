package web

import (
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/tally-analytics/tally/internal/accounts"
	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/httpapi"
	"github.com/tally-analytics/tally/internal/model"
)

type keysPage struct {
	page
	Keys   []keyRow
	Scopes []model.Scope
	// NewKey is the secret of the key just created: shown on this one
	// answer and never again.
	NewKey  string
	NewName string
	Notice  string
	Error   string
	// Form values kept after a refused form.
	Name, Expires string
	Checked       map[model.Scope]bool
}

type keyRow struct {
	model.APIKey
	State string
	// Expires is when the key stops working: "after" the last day it works,
	// for a key that expires at a midnight (UTC), as the dashboard sets
	// them; else the moment.
	Expires string
}

// expiry is a key's Expires.
func expiry(at *time.Time) string {
	switch {
	case at == nil:
		return "never"
	case at.UTC().Truncate(24 * time.Hour).Equal(*at):
		return "after " + at.UTC().AddDate(0, 0, -1).Format(time.DateOnly)
	default:
		return at.UTC().Format("2006-01-02 15:04 UTC")
	}
}

func (s *Server) keysData(c echo.Context) (keysPage, error) {
	u, _ := session(c)
	keys, err := s.deps.Keys.KeysOf(c.Request().Context(), u.user.ID)
	if err != nil {
		return keysPage{}, err
	}
	p := keysPage{page: pageFor(c, "API keys", "keys"), Scopes: model.AllScopes, Checked: map[model.Scope]bool{}}
	now := s.deps.Now()
	for _, k := range keys {
		state := "active"
		switch {
		case k.RevokedAt != nil:
			state = "revoked"
		case k.ExpiresAt != nil && !k.ExpiresAt.After(now):
			state = "expired"
		}
		p.Keys = append(p.Keys, keyRow{APIKey: k, State: state, Expires: expiry(k.ExpiresAt)})
	}
	return p, nil
}

func (s *Server) keyList(c echo.Context) error {
	p, err := s.keysData(c)
	if err != nil {
		return err
	}
	if c.QueryParam("revoked") != "" {
		p.Notice = "The key is revoked: requests with it now fail with 401."
	}
	return s.render(c, http.StatusOK, "keys", p)
}

// createKey makes a key and shows its secret once, on this answer (which is
// not cached: the secret is nowhere else).
func (s *Server) createKey(c echo.Context) error {
	u, _ := session(c)
	form, err := c.FormParams()
	if err != nil {
		return errs.InvalidField("scopes", "unreadable form")
	}
	in := accounts.NewKey{OwnerEmail: u.user.Email, Name: strings.TrimSpace(form.Get("name"))}
	for _, sc := range form["scopes"] {
		in.Scopes = append(in.Scopes, model.Scope(sc))
	}
	expires := strings.TrimSpace(form.Get("expires"))
	var refused error
	if expires != "" {
		day, err := time.Parse(time.DateOnly, expires)
		if err != nil {
			refused = errs.InvalidField("expires_at", "the expiry must be a date")
		} else {
			end := day.AddDate(0, 0, 1) // the key works through that whole day (UTC)
			in.ExpiresAt = &end
		}
	}
	if refused == nil && len(in.Scopes) == 0 {
		refused = errs.InvalidField("scopes", "choose at least one scope")
	}
	var created accounts.CreatedKey
	if refused == nil {
		created, refused = s.deps.Keys.CreateKey(c.Request().Context(), in)
	}
	p, err := s.keysData(c)
	if err != nil {
		return err
	}
	if e := formError(refused); e != nil {
		p.Error, p.Name, p.Expires = e.Message, in.Name, expires
		for _, sc := range in.Scopes {
			p.Checked[sc] = true
		}
		return s.render(c, httpapi.StatusOf(e.Kind), "keys", p)
	}
	if refused != nil {
		return refused
	}
	p.NewKey, p.NewName = created.Secret, created.Key.Name
	return s.render(c, http.StatusCreated, "keys", p)
}

func (s *Server) revokeKey(c echo.Context) error {
	u, _ := session(c)
	if _, err := s.deps.Keys.RevokeKeyOf(c.Request().Context(), u.user.ID, model.KeyID(c.Param("key"))); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/account/keys?revoked=1")
}

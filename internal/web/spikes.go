package web

import (
	"context"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/spikes"
)

// SpikeNotifications manages a site's traffic spike notification.
type SpikeNotifications interface {
	// Enabled reports whether this server sends email at all.
	Enabled() bool
	Settings(ctx context.Context, p auth.Principal, site model.SiteID) (model.SpikeNotification, error)
	SetThreshold(ctx context.Context, p auth.Principal, site model.SiteID, typed string) error
	TurnOff(ctx context.Context, p auth.Principal, site model.SiteID) error
	AddRecipient(ctx context.Context, p auth.Principal, site model.SiteID, typed string) (model.SpikeRecipient, error)
	RemoveRecipient(ctx context.Context, p auth.Principal, site model.SiteID, id model.SpikeRecipientID) error
	// Unsubscriber serves a message's unsubscribe link.
	Unsubscriber
}

// spikeForm is what was typed into a refused form of the section.
type spikeForm struct{ Threshold, Email string }

// setSpikeThreshold turns the site's notification on, or changes its
// threshold.
func (s *Server) setSpikeThreshold(c echo.Context) error {
	u, _ := session(c)
	typed := c.FormValue("threshold")
	if err := s.deps.Spikes.SetThreshold(c.Request().Context(), u.principal(), model.SiteID(c.Param("site")), typed); err != nil {
		return s.settingsError(c, "spike-notifications", err, func(p *settingsPage, e *errs.Error) {
			p.ErrorField, p.SpikeForm.Threshold = e.Field, typed
		})
	}
	return s.settingsRedirect(c, "spike", "spike-notifications")
}

// turnOffSpikes removes the site's notification and its addresses.
func (s *Server) turnOffSpikes(c echo.Context) error {
	u, _ := session(c)
	if err := s.deps.Spikes.TurnOff(c.Request().Context(), u.principal(), model.SiteID(c.Param("site"))); err != nil {
		return s.settingsError(c, "spike-notifications", err)
	}
	return s.settingsRedirect(c, "spike_off", "spike-notifications")
}

func (s *Server) addSpikeRecipient(c echo.Context) error {
	u, _ := session(c)
	typed := c.FormValue("email")
	if _, err := s.deps.Spikes.AddRecipient(c.Request().Context(), u.principal(), model.SiteID(c.Param("site")), typed); err != nil {
		return s.settingsError(c, "spike-notifications", err, func(p *settingsPage, e *errs.Error) {
			p.ErrorField, p.SpikeForm.Email = e.Field, typed
		})
	}
	return s.settingsRedirect(c, "spike_recipient", "spike-notifications")
}

func (s *Server) removeSpikeRecipient(c echo.Context) error {
	u, _ := session(c)
	err := s.deps.Spikes.RemoveRecipient(c.Request().Context(), u.principal(), model.SiteID(c.Param("site")),
		model.SpikeRecipientID(c.Param("recipient")))
	if err != nil {
		return s.settingsError(c, "spike-notifications", err)
	}
	return s.settingsRedirect(c, "spike_recipient_removed", "spike-notifications")
}

// spikeSettings fills the Traffic spike notifications section.
func (s *Server) spikeSettings(ctx context.Context, p *settingsPage, pr auth.Principal) (err error) {
	p.SpikesEnabled = s.deps.Spikes.Enabled()
	p.SpikeQuietHours, p.SpikeMaxRecipients = int(spikes.QuietFor/time.Hour), spikes.MaxRecipients
	p.Spike, err = s.deps.Spikes.Settings(ctx, pr, p.Site.ID)
	return err
}

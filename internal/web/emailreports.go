package web

import (
	"context"

	"github.com/labstack/echo/v4"

	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/emailreports"
	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/model"
)

// EmailReports manages the addresses a site's email reports go to.
type EmailReports interface {
	// Enabled reports whether this server sends email at all.
	Enabled() bool
	Recipients(ctx context.Context, p auth.Principal, site model.SiteID) ([]model.ReportRecipient, error)
	SetRecipient(ctx context.Context, p auth.Principal, site model.SiteID, in emailreports.Input) (model.ReportRecipient, error)
	RemoveRecipient(ctx context.Context, p auth.Principal, site model.SiteID, id model.ReportRecipientID) error
}

// setReportRecipient adds an address to the site's email reports (or
// changes which it gets). A refused one is the form again with what was
// typed and the message.
func (s *Server) setReportRecipient(c echo.Context) error {
	u, _ := session(c)
	in := emailreports.Input{Email: c.FormValue("email"), Weekly: c.FormValue("weekly") == "on", Monthly: c.FormValue("monthly") == "on"}
	_, err := s.deps.Reports.SetRecipient(c.Request().Context(), u.principal(), model.SiteID(c.Param("site")), in)
	if err == nil {
		return s.settingsRedirect(c, "report_recipient", "email-reports")
	}
	return s.settingsError(c, "email-reports", err, func(p *settingsPage, e *errs.Error) { p.ErrorField, p.ReportForm = e.Field, in })
}

func (s *Server) removeReportRecipient(c echo.Context) error {
	u, _ := session(c)
	err := s.deps.Reports.RemoveRecipient(c.Request().Context(), u.principal(), model.SiteID(c.Param("site")),
		model.ReportRecipientID(c.Param("recipient")))
	if err != nil {
		return s.settingsError(c, "email-reports", err)
	}
	return s.settingsRedirect(c, "report_recipient_removed", "email-reports")
}

// reportSettings fills the Email reports section.
func (s *Server) reportSettings(ctx context.Context, p *settingsPage, pr auth.Principal) (err error) {
	p.ReportsEnabled = s.deps.Reports.Enabled()
	p.ReportRecipients, err = s.deps.Reports.Recipients(ctx, pr, p.Site.ID)
	if p.ReportForm == (emailreports.Input{}) {
		p.ReportForm.Weekly = true
	}
	return err
}

package web

import (
	"context"
	"net/http"
	"net/url"

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
	// Unsubscriber serves a message's unsubscribe link.
	Unsubscriber
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

// Unsubscriber serves the unsubscribe links of one of a site's mailings:
// the domain a link is about, and the removal of its recipient.
type Unsubscriber interface {
	UnsubscribeSite(ctx context.Context, token string) (string, error)
	Unsubscribe(ctx context.Context, token string) (string, error)
}

// unsubscribePage asks, or says, about an email's unsubscribe link.
type unsubscribePage struct {
	page
	// List is what the address stops getting: "email reports".
	List   string
	Domain string
	// Action is where the button posts: the link itself.
	Action string
	Done   bool
}

// unsubscribeRoutes serves the unsubscribe links of a mailing, list, at
// path. GET is the page the link opens: it only asks, with a button that
// posts to the same link. Mail scanners follow links to check them; a GET
// that removed the address would unsubscribe every recipient whose mail is
// scanned. POST removes the recipient: the page's button, or a mail
// reader's one-click (RFC 8058), which needs no login and no CSRF token —
// the link's token is the recipient's say-so, and the body
// (List-Unsubscribe=One-Click) adds nothing to it.
func (s *Server) unsubscribeRoutes(path, list string, u Unsubscriber) {
	s.echo.GET(path, func(c echo.Context) error {
		token := c.QueryParam("token")
		domain, err := u.UnsubscribeSite(c.Request().Context(), token)
		if err != nil {
			return err
		}
		return s.render(c, http.StatusOK, "unsubscribe", unsubscribePage{page: page{Title: "Unsubscribe", Public: true},
			List: list, Domain: domain, Action: path + "?" + url.Values{"token": {token}}.Encode()})
	})
	s.echo.POST(path, func(c echo.Context) error {
		domain, err := u.Unsubscribe(c.Request().Context(), c.QueryParam("token"))
		if err != nil {
			return err
		}
		return s.render(c, http.StatusOK, "unsubscribe", unsubscribePage{page: page{Title: "Unsubscribed", Public: true},
			List: list, Domain: domain, Done: true})
	})
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

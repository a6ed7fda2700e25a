package config

import (
	"errors"
	"net/mail"

	"github.com/tally-analytics/tally/internal/mailer"
)

// validateMail checks the settings of tally's email (the reports, the
// traffic spike notifications, and the links of forgotten passwords): an
// SMTP URL tally can use, and a From address with it; without a public URL
// the reports and notifications carry no links (no unsubscribe link among
// them) and no password-reset link is sent, which it warns of. Its
// refusals never quote the URL (it may hold a password).
func (c *Config) validateMail(warnings *[]string) []error {
	if c.SMTPURL == "" {
		if c.MailFrom != "" {
			*warnings = append(*warnings, "TALLY_MAIL_FROM is set but TALLY_SMTP_URL is not: no email reports or spike notifications are sent")
		}
		return nil
	}
	if c.PublicURL == "" {
		*warnings = append(*warnings, "TALLY_SMTP_URL is set but TALLY_PUBLIC_URL is not: the email reports and traffic spike notifications carry "+
			"no links, no unsubscribe link among them, and no password-reset links are sent (a link is of the server's own address; "+
			"a forgotten password is set with tally user set-password)")
	}
	var problems []error
	if _, err := mailer.ParseURL(c.SMTPURL); err != nil {
		problems = append(problems, errors.New("TALLY_SMTP_URL "+err.Error()))
	}
	switch _, err := mail.ParseAddress(c.MailFrom); {
	case c.MailFrom == "":
		problems = append(problems, errors.New("TALLY_MAIL_FROM is required with TALLY_SMTP_URL: the reports' From address, "+
			"e.g. tally <reports@example.com>"))
	case err != nil:
		problems = append(problems, errors.New("TALLY_MAIL_FROM must be an email address such as tally <reports@example.com>"))
	}
	return problems
}

// Mail is the mail server and sender of the email reports; ok is false
// when TALLY_SMTP_URL is not set (validated by Load).
func (c *Config) Mail() (srv mailer.Server, envelopeFrom string, ok bool) {
	if c.SMTPURL == "" {
		return mailer.Server{}, "", false
	}
	srv, err := mailer.ParseURL(c.SMTPURL)
	from, ferr := mail.ParseAddress(c.MailFrom)
	if err != nil || ferr != nil {
		return mailer.Server{}, "", false
	}
	return srv, from.Address, true
}

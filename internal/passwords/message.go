package passwords

import (
	"bytes"
	"embed"
	htmltemplate "html/template"
	"net/url"
	texttemplate "text/template"

	"github.com/tally-analytics/tally/internal/mailer"
)

//go:embed templates
var templateFiles embed.FS

var (
	textTemplate = texttemplate.Must(texttemplate.ParseFS(templateFiles, "templates/reset.txt"))
	htmlTemplate = htmltemplate.Must(htmltemplate.ParseFS(templateFiles, "templates/reset.html"))
)

// resetSubject is the subject of a reset link's email.
const resetSubject = "Set a new tally password"

// resetMessage is the email of a reset link to the account of email: the
// same words as plain text and as HTML.
func resetMessage(from, email, link string) (mailer.Message, error) {
	server := link
	if u, err := url.Parse(link); err == nil {
		server = u.Host
	}
	data := struct{ Email, Link, Lifetime, Server string }{email, link, "one hour", server}
	var text, html bytes.Buffer
	if err := textTemplate.Execute(&text, data); err != nil {
		return mailer.Message{}, err
	}
	if err := htmlTemplate.Execute(&html, data); err != nil {
		return mailer.Message{}, err
	}
	return mailer.Message{From: from, To: email, Subject: resetSubject, Text: text.String(), HTML: html.String()}, nil
}

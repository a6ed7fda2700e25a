package spikes

import (
	"bytes"
	"embed"
	htmltemplate "html/template"
	"net/url"
	"strconv"
	texttemplate "text/template"
	"time"

	"github.com/tally-analytics/tally/internal/mailer"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/present"
	"github.com/tally-analytics/tally/internal/stats"
)

// TopRows is how many sources and pages a notification lists.
const TopRows = 5

//go:embed templates
var templateFiles embed.FS

var (
	funcs        = map[string]any{"pad": present.Pad}
	textTemplate = texttemplate.Must(texttemplate.New("spike.txt").Funcs(funcs).ParseFS(templateFiles, "templates/spike.txt"))
	htmlTemplate = htmltemplate.Must(htmltemplate.New("spike.html").Funcs(funcs).ParseFS(templateFiles, "templates/spike.html"))
)

// Spike is what a site's notification says: its current visitors as the
// realtime view counted them at At (their current pages and sources
// included), against its threshold.
type Spike struct {
	Site      model.Site
	Threshold int
	Realtime  model.Realtime
	At        time.Time
}

// rankLine is a row of a top list.
type rankLine struct{ Label, Count string }

// content is what both parts of a message show.
type content struct {
	Domain, Visitors, Threshold, At, Timezone string
	Sources, Pages                            []rankLine
	DashboardURL, SettingsURL                 string
	// UnsubscribeURL removes the recipient, without a login.
	UnsubscribeURL string
	// Quiet is the least time between two notifications, in words.
	Quiet string
}

func ranks(rows []model.VisitorCount) []rankLine {
	var out []rankLine
	for _, r := range rows[:min(TopRows, len(rows))] {
		out = append(out, rankLine{Label: r.Value, Count: present.Number(r.Visitors)})
	}
	return out
}

// contentOf lays a spike out for both parts; base is the public URL
// (empty: no links), unsubscribe the recipient's unsubscribe link.
func contentOf(sp Spike, base, unsubscribe string) content {
	loc, err := stats.LoadLocation(sp.Site.Timezone)
	tz := sp.Site.Timezone
	if err != nil || tz == "" {
		loc, tz = time.UTC, "UTC" // as the reports read a zone this machine does not know
	}
	c := content{Domain: sp.Site.Domain, Visitors: present.Number(sp.Realtime.Visitors),
		Threshold: present.Number(int64(sp.Threshold)), At: sp.At.In(loc).Format("15:04 on Mon 2 January 2006"), Timezone: tz,
		Sources: ranks(sp.Realtime.Sources), Pages: ranks(sp.Realtime.Pages), Quiet: strconv.Itoa(int(QuietFor/time.Hour)) + " hours"}
	if base != "" {
		site := base + "/sites/" + url.PathEscape(string(sp.Site.ID))
		c.DashboardURL = site
		c.SettingsURL = site + "/settings#spike-notifications"
		c.UnsubscribeURL = unsubscribe
	}
	return c
}

// Message is the spike as an email to one address: its subject, its
// plain-text part and its HTML part (inline styles; no images, no remote
// assets). With a public URL (base), unsubscribe is the address's
// unsubscribe link: in both parts and in the List-Unsubscribe headers.
func (sp Spike) Message(from, to, base, unsubscribe string) (mailer.Message, error) {
	c := contentOf(sp, base, unsubscribe)
	var text, html bytes.Buffer
	if err := textTemplate.Execute(&text, c); err != nil {
		return mailer.Message{}, err
	}
	if err := htmlTemplate.Execute(&html, c); err != nil {
		return mailer.Message{}, err
	}
	subject := "Traffic spike on " + c.Domain + ": " + c.Visitors + " current visitors"
	return mailer.Message{From: from, To: to, Subject: subject, Text: text.String(), HTML: html.String(),
		Unsubscribe: c.UnsubscribeURL}, nil
}

package emailreports

import (
	"bytes"
	"context"
	"embed"
	htmltemplate "html/template"
	"net/url"
	texttemplate "text/template"
	"time"

	"github.com/tally-analytics/tally/internal/accounts"
	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/mailer"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/present"
	"github.com/tally-analytics/tally/internal/stats"
)

// TopRows is how many sources and pages a report lists.
const TopRows = 5

//go:embed templates
var templateFiles embed.FS

var (
	funcs        = map[string]any{"pad": present.Pad}
	textTemplate = texttemplate.Must(texttemplate.New("report.txt").Funcs(funcs).ParseFS(templateFiles, "templates/report.txt"))
	htmlTemplate = htmltemplate.Must(htmltemplate.New("report.html").Funcs(funcs).ParseFS(templateFiles, "templates/report.html"))
)

// Report is one site's report of one period: what every recipient of it
// gets.
type Report struct {
	Site     model.Site
	Period   Period
	Overview stats.Overview
	Sources  []stats.SourceRow
	Pages    []stats.PageRow
}

// compose reads a site's report of period p as the dashboard reads it:
// the overview with compare=true, the sources, the pages; as the site's
// email reports, which read its statistics and nothing else.
func (s *Service) compose(ctx context.Context, site model.SiteID, p Period) (Report, error) {
	pr := auth.ForEmailReport(site)
	found, _, err := s.sites.Check(ctx, pr, site, accounts.ReadStats)
	if err != nil {
		return Report{}, err
	}
	rep := Report{Site: found, Period: p}
	req := stats.Request{SiteID: site, DateFrom: p.First, DateTo: p.Last, Compare: true, Limit: TopRows, Page: 1}
	if rep.Overview, err = s.stats.Overview(ctx, pr, req); err != nil {
		return Report{}, err
	}
	sources, err := s.stats.Sources(ctx, pr, req)
	if err != nil {
		return Report{}, err
	}
	rep.Sources = sources.Rows[:min(TopRows, len(sources.Rows))]
	pages, err := s.stats.Pages(ctx, pr, req)
	if err != nil {
		return Report{}, err
	}
	rep.Pages = pages.Rows[:min(TopRows, len(pages.Rows))]
	return rep, nil
}

// metricLine is a headline figure with its change.
type metricLine struct{ Name, Value, Change string }

// rankLine is a row of a top list.
type rankLine struct{ Label, Count string }

// content is what both parts of a message show.
type content struct {
	Domain, Kind, Period, Previous, Timezone string
	Metrics                                  []metricLine
	Sources, Pages                           []rankLine
	DashboardURL, SettingsURL                string
	// UnsubscribeURL removes the recipient, without a login.
	UnsubscribeURL string
}

// dates writes an inclusive range of dates: Mon 1 June 2026 – Sun 7 June 2026.
func dates(first, last time.Time) string {
	return first.Format("Mon 2 January 2006") + " – " + last.Format("Mon 2 January 2006")
}

// contentOf lays a report out for both parts; base is the public URL
// (empty: no links), unsubscribe the recipient's unsubscribe link.
func contentOf(r Report, base, unsubscribe string) content {
	c := content{Domain: r.Site.Domain, Kind: "Weekly", Period: dates(r.Period.First, r.Period.Last),
		Timezone: r.Overview.Meta.Timezone}
	if r.Period.Kind == model.ReportMonthly {
		c.Kind = "Monthly"
	}
	m := r.Overview.Metrics
	var ch stats.Change
	if cmp := r.Overview.Comparison; cmp != nil {
		ch, c.Previous = cmp.Change, dates(cmp.From, cmp.To)
	}
	c.Metrics = []metricLine{
		{"Visitors", present.Number(m.Visitors), present.Change(ch.Visitors)},
		{"Pageviews", present.Number(m.Pageviews), present.Change(ch.Pageviews)},
		{"Bounce rate", present.Percent(m.BounceRate), present.Points(ch.BounceRate)},
		{"Visit duration", present.Duration(m.VisitDuration), present.Change(ch.VisitDuration)},
	}
	for _, s := range r.Sources {
		c.Sources = append(c.Sources, rankLine{Label: s.Source, Count: present.Number(s.Visitors)})
	}
	for _, p := range r.Pages {
		c.Pages = append(c.Pages, rankLine{Label: p.Path, Count: present.Number(p.Pageviews)})
	}
	if base != "" {
		site := base + "/sites/" + url.PathEscape(string(r.Site.ID))
		c.DashboardURL = site + "?" + url.Values{"range": {"custom"}, "from": {r.Period.First.Format(time.DateOnly)},
			"to": {r.Period.Last.Format(time.DateOnly)}, "compare": {"1"}}.Encode()
		c.SettingsURL = site + "/settings#email-reports"
		c.UnsubscribeURL = unsubscribe
	}
	return c
}

// Message is the report as an email to one address: its subject, its
// plain-text part and its HTML part (inline styles; no images, no remote
// assets, nothing that tells anyone the mail was opened). With a public URL
// (base), unsubscribe is the address's unsubscribe link: in both parts and
// in the List-Unsubscribe headers.
func (r Report) Message(from, to, base, unsubscribe string) (mailer.Message, error) {
	c := contentOf(r, base, unsubscribe)
	var text, html bytes.Buffer
	if err := textTemplate.Execute(&text, c); err != nil {
		return mailer.Message{}, err
	}
	if err := htmlTemplate.Execute(&html, c); err != nil {
		return mailer.Message{}, err
	}
	subject := c.Kind + " report for " + c.Domain + ": " + c.Period
	return mailer.Message{From: from, To: to, Subject: subject, Text: text.String(), HTML: html.String(),
		Unsubscribe: c.UnsubscribeURL}, nil
}

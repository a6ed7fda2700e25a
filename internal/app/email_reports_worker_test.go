package app_test

import (
	"context"
	"html"
	"io"
	"log/slog"
	"mime"
	"mime/multipart"
	"net/mail"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tally-analytics/tally/internal/accounts"
	"github.com/tally-analytics/tally/internal/app"
	"github.com/tally-analytics/tally/internal/config"
	"github.com/tally-analytics/tally/internal/emailreports"
	"github.com/tally-analytics/tally/internal/mailer"
	"github.com/tally-analytics/tally/internal/mailer/smtptest"
	"github.com/tally-analytics/tally/internal/testenv"
	"github.com/tally-analytics/tally/pkg/api"
)

const smtpPassword = "smtp-password-7"

// reportMail is a received report: its recipient, subject, and each part
// as words (tags dropped, entities read, spaces collapsed), so that both
// parts are checked for the same lines.
type reportMail struct {
	to, subject, text, html, rawHTML string
}

var (
	tags   = regexp.MustCompile(`<[^>]*>`)
	spaces = regexp.MustCompile(`\s+`)
)

func words(s string) string { return strings.TrimSpace(spaces.ReplaceAllString(s, " ")) }

func readReport(t *testing.T, m smtptest.Received) reportMail {
	t.Helper()
	msg, err := mail.ReadMessage(strings.NewReader(m.Data))
	if err != nil {
		t.Fatal(err)
	}
	subject, _ := new(mime.WordDecoder).DecodeHeader(msg.Header.Get("Subject"))
	out := reportMail{to: strings.Join(m.To, ","), subject: subject}
	_, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil {
		t.Fatal(err)
	}
	r := multipart.NewReader(msg.Body, params["boundary"])
	for {
		p, err := r.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(p)
		switch p.Header.Get("Content-Type") {
		case "text/plain; charset=utf-8":
			out.text = words(string(b))
		case "text/html; charset=utf-8":
			out.rawHTML, out.html = string(b), words(html.UnescapeString(tags.ReplaceAllString(string(b), " ")))
		}
	}
	if out.text == "" || out.html == "" {
		t.Fatalf("a report without both parts: %q", m.Data)
	}
	return out
}

// has checks that both parts of a report say every line of want.
func (m reportMail) has(t *testing.T, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(m.text, w) {
			t.Errorf("to %s, %q: the text part lacks %q:\n%s", m.to, m.subject, w, m.text)
		}
		if !strings.Contains(m.html, w) {
			t.Errorf("to %s, %q: the HTML part lacks %q:\n%s", m.to, m.subject, w, m.html)
		}
	}
}

// seedReportSite sends the pageviews of shop.example (Europe/Berlin, two
// hours ahead of UTC in summer), by the clock:
//
//	a  Tue 2 June 08:00 UTC  /  from Google, /pricing 30 s later
//	b  Wed 3 June 10:00      /blog/launch from Hacker News (a bounce)
//	c  Sun 31 May 22:30      /  from Google (a bounce) — Monday 1 June 00:30 in Berlin
//	x  Sun 7 June 22:30      /late, direct (a bounce) — Monday 8 June 00:30 in Berlin
//	p1 Tue 26 May 08:00      /  from Google (a bounce)
//	p2 Wed 27 May 08:00      /  direct, /pricing 60 s later
func seedReportSite(t *testing.T, h *harness, site string) {
	t.Helper()
	ctx := context.Background()
	c := h.client(h.key)
	sent := 0
	send := func(visitor, at, path, referrer string) {
		t.Helper()
		ts, err := time.Parse(time.DateTime, at)
		if err != nil {
			t.Fatal(err)
		}
		h.clock.Set(ts)
		if _, err := c.Pageview(ctx, api.PageviewRequest{SiteID: site, URL: "https://shop.example" + path, Referrer: referrer,
			UserAgent: chromeUA, VisitorID: visitor}); err != nil {
			t.Fatal(err)
		}
		sent++
	}
	const google, hn = "https://www.google.com/", "https://news.ycombinator.com/"
	send("p1", "2026-05-26 08:00:00", "/", google)
	send("p2", "2026-05-27 08:00:00", "/", "")
	send("p2", "2026-05-27 08:01:00", "/pricing", "")
	send("c", "2026-05-31 22:30:00", "/", google)
	send("a", "2026-06-02 08:00:00", "/", google)
	send("a", "2026-06-02 08:00:30", "/pricing", "")
	send("b", "2026-06-03 10:00:00", "/blog/launch", hn)
	send("x", "2026-06-07 22:30:00", "/late", "")
	h.waitCount(int64(sent), "SELECT count() FROM events WHERE site_id = ?", site)
	h.waitCount(6, "SELECT toUInt64(sum(sign)) FROM sessions WHERE site_id = ?", site)
}

// The email reports' worker: at Monday 06:00 in the site's zone it sends
// each weekly recipient the week before, with the dashboard's numbers in
// both parts; a second pass, and another server's, send nothing more; on
// the 1st the monthly reports go, a refused one is sent on the next pass
// and then once; the addresses and the SMTP password are never logged.
func TestEmailReportWorker(t *testing.T) {
	m := newMailingHarness(t)
	h, smtp, logged, log := m.harness, m.smtp, m.logged, m.log
	ctx := context.Background()
	created, err := h.app.Accounts.CreateSite(ctx, accounts.NewSite{OwnerEmail: h.email, Domain: "shop.example", Timezone: "Europe/Berlin"})
	if err != nil {
		t.Fatal(err)
	}
	site := string(created.ID)
	h.clock.Set(time.Date(2026, 6, 1, 6, 0, 0, 0, time.UTC)) // Monday 1 June, 08:00 in Berlin
	for _, r := range []emailreports.Input{{Email: "w1@reports.example", Weekly: true}, {Email: "w2@reports.example", Weekly: true, Monthly: true},
		{Email: "m1@reports.example", Monthly: true}} {
		if _, err := h.app.Reports.SetRecipient(ctx, ownerPrincipal(h), created.ID, r); err != nil {
			t.Fatal(err)
		}
	}
	pass := func(h *harness, want int) {
		t.Helper()
		n, err := h.app.Reports.Pass(ctx)
		if err != nil || n != want {
			t.Fatalf("a pass at %v sent %d, %v; want %d", h.clock.Now(), n, err, want)
		}
	}
	// the week of 25–31 May and the month of May were due at 04:00, before these addresses were added
	pass(h, 0)
	seedReportSite(t, h, site)

	h.clock.Set(time.Date(2026, 6, 8, 1, 30, 0, 0, time.UTC)) // Monday 03:30 in Berlin: not due yet
	pass(h, 0)
	h.clock.Set(time.Date(2026, 6, 8, 4, 0, 0, 0, time.UTC)) // Monday 06:00 in Berlin
	pass(h, 2)
	got := smtp.Received()
	if len(got) != 2 {
		t.Fatalf("the mail server has %d messages, want 2", len(got))
	}
	// The week of Mon 1 – Sun 7 June in Berlin: a, b and c (c's Sunday
	// 22:30 UTC is Monday in Berlin; x's is the Monday after): 3 visitors,
	// 4 pageviews, 3 sessions of which b's and c's bounced (66.7 %), 30 s
	// of visits over 3 sessions (10 s). The week before: p1 and p2, 3
	// pageviews, one bounce in two (50 %), 60 s / 2 = 30 s. Changes:
	// visitors (3-2)/2 = +50 %, pageviews (4-3)/3 = +33.3 %, bounce rate
	// 66.67 - 50 = +16.7 points, duration (10-30)/30 = -66.7 %. Sources by
	// visitors: Google (a, c) 2, Hacker News 1; pages by pageviews: / 2,
	// then /blog/launch and /pricing 1 each (by path).
	dashboard := "https://analytics.example.com/sites/" + site
	for i, to := range []string{"w1@reports.example", "w2@reports.example"} {
		m := readReport(t, got[i])
		if got[i].From != "reports@tally.example" || m.to != to {
			t.Errorf("message %d from %s to %s, want from reports@tally.example to %s", i, got[i].From, m.to, to)
		}
		if m.subject != "Weekly report for shop.example: Mon 1 June 2026 – Sun 7 June 2026" {
			t.Errorf("subject %q", m.subject)
		}
		m.has(t, "Mon 1 June 2026 – Sun 7 June 2026 (Europe/Berlin)",
			"Visitors 3 +50.0% Pageviews 4 +33.3% Bounce rate 66.7% +16.7 pts Visit duration 10s -66.7%",
			"Changes are against Mon 25 May 2026 – Sun 31 May 2026.",
			"Top sources (visitors) Google 2 Hacker News 1 Top pages (pageviews) / 2 /blog/launch 1 /pricing 1",
			"Settings page")
		if !strings.Contains(m.text, dashboard+"?compare=1&from=2026-06-01&range=custom&to=2026-06-07") ||
			!strings.Contains(m.rawHTML, `href="`+dashboard+`?compare=1&amp;from=2026-06-01&amp;range=custom&amp;to=2026-06-07"`) ||
			!strings.Contains(m.text, dashboard+"/settings#email-reports") {
			t.Errorf("the dashboard or settings link is missing:\n%s", m.text)
		}
		if strings.Contains(m.text, "/late") {
			t.Error("the report counts a pageview of the Monday after")
		}
		if regexp.MustCompile(`(?i)<img|src=|url\(|<link|<script`).MatchString(m.rawHTML) {
			t.Error("the HTML part loads something")
		}
	}

	// once: a second pass, and a second server's, send nothing
	pass(h, 0)
	ocfg := *h.cfg // another server on the same databases, logging to the same log
	ocfg.WALDir = t.TempDir()
	other := startAppLogged(t, &ocfg, h.clock, log)
	pass(other, 0)

	// Wednesday 1 July 06:00 in Berlin: June's monthly reports, and the
	// latest week's (22–28 June), late — never the weeks before it. The
	// mail server refuses the first message; two servers pass at once.
	h.clock.Set(time.Date(2026, 7, 1, 4, 0, 0, 0, time.UTC))
	smtp.Refuse(1)
	var wg sync.WaitGroup
	var mu sync.Mutex
	total := 0
	for _, s := range []*harness{h, other} {
		wg.Go(func() {
			n, err := s.app.Reports.Pass(ctx)
			if err != nil {
				t.Errorf("a pass: %v", err)
			}
			mu.Lock()
			total += n
			mu.Unlock()
		})
	}
	wg.Wait()
	if total != 3 {
		t.Fatalf("two servers' passes sent %d, want 3 of 4 (one refused)", total)
	}
	pass(h, 0)                              // the refused one waits a minute
	h.clock.Advance(emailreports.PassEvery) // the next pass
	pass(other, 1)                          // the refused one, again
	pass(h, 0)
	pass(other, 0)
	got = smtp.Received()
	var sent []string
	for _, r := range got {
		m := readReport(t, r)
		sent = append(sent, m.to+" "+m.subject)
	}
	slices.Sort(sent)
	want := []string{
		"m1@reports.example Monthly report for shop.example: Mon 1 June 2026 – Tue 30 June 2026",
		"w1@reports.example Weekly report for shop.example: Mon 1 June 2026 – Sun 7 June 2026",
		"w1@reports.example Weekly report for shop.example: Mon 22 June 2026 – Sun 28 June 2026",
		"w2@reports.example Monthly report for shop.example: Mon 1 June 2026 – Tue 30 June 2026",
		"w2@reports.example Weekly report for shop.example: Mon 1 June 2026 – Sun 7 June 2026",
		"w2@reports.example Weekly report for shop.example: Mon 22 June 2026 – Sun 28 June 2026",
	}
	if !slices.Equal(sent, want) {
		t.Fatalf("sent:\n%s\nwant each once:\n%s", strings.Join(sent, "\n"), strings.Join(want, "\n"))
	}
	// June in Berlin: a, b, c and x: 4 visitors, 5 pageviews, 3 bounces in
	// 4 sessions (75 %), 30 s / 4 = 7.5 s (shown 8s). The 30 days before
	// (2–31 May): p1 and p2 as above. Visitors +100 %, pageviews (5-3)/3 =
	// +66.7 %, bounce rate 75 - 50 = +25 points, duration (7.5-30)/30 =
	// -75 %. Sources: Google 2, then Direct / None (x) and Hacker News 1.
	for _, r := range got {
		if m := readReport(t, r); m.to == "m1@reports.example" {
			m.has(t, "Visitors 4 +100.0% Pageviews 5 +66.7% Bounce rate 75.0% +25.0 pts Visit duration 8s -75.0%",
				"Changes are against Sat 2 May 2026 – Sun 31 May 2026.",
				"Google 2 Direct / None 1 Hacker News 1", "/ 2 /blog/launch 1 /late 1 /pricing 1")
		}
	}

	// the record: every delivery sent, the refused one after two attempts
	// with the server's answer kept, no password in it
	db, err := pgx.Connect(ctx, h.cfg.PostgresURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(ctx)
	var rows, unsent, retried int
	var reason string
	if err := db.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE sent_at IS NULL), count(*) FILTER (WHERE attempts = 2),
		coalesce(max(last_error), '') FROM report_deliveries`).Scan(&rows, &unsent, &retried, &reason); err != nil {
		t.Fatal(err)
	}
	if rows != 6 || unsent != 0 || retried != 1 || !strings.Contains(reason, "451") || strings.Contains(reason, smtpPassword) {
		t.Errorf("deliveries: %d, %d unsent, %d tried twice, error %q", rows, unsent, retried, reason)
	}

	// a mail server that refuses everything: each delivery is tried
	// MaxAttempts times, a pass apart, then no more (Monday 6 July: the
	// week of 29 June – 5 July to w1 and w2)
	h.clock.Set(time.Date(2026, 7, 6, 4, 0, 0, 0, time.UTC))
	smtp.Refuse(1000)
	for range emailreports.MaxAttempts + 2 {
		pass(h, 0)
		h.clock.Advance(emailreports.PassEvery)
	}
	var attempts int
	if err := db.QueryRow(ctx, "SELECT sum(attempts) FROM report_deliveries WHERE period_start = '2026-06-29'").Scan(&attempts); err != nil ||
		attempts != 2*emailreports.MaxAttempts {
		t.Errorf("attempts at the refused week: %d, %v; want %d", attempts, err, 2*emailreports.MaxAttempts)
	}
	if n := len(smtp.Received()); n != 6 {
		t.Errorf("the mail server has %d messages, want the 6 before", n)
	}
	for _, secret := range []string{smtpPassword, "@reports.example"} {
		if strings.Contains(logged.String(), secret) {
			t.Errorf("the log shows %q:\n%s", secret, logged.String())
		}
	}
	if !strings.Contains(logged.String(), `msg="email reports: a send failed"`) {
		t.Errorf("the refused send was not logged:\n%s", logged.String())
	}
}

// A report handed over to the mail server whose reply never comes (the
// server here queued it and stays silent until the mailer gives up) may
// have arrived: its delivery is settled, with the attempt's error, and no
// later pass sends it again; the log says so without the address.
func TestEmailReportWithoutReply(t *testing.T) {
	m := newMailingHarness(t, app.WithMailer(mailer.WithTimeout(2*time.Second)))
	h, smtp, logged := m.harness, m.smtp, m.logged
	ctx := context.Background()
	created, err := h.app.Accounts.CreateSite(ctx, accounts.NewSite{OwnerEmail: h.email, Domain: "shop.example", Timezone: "UTC"})
	if err != nil {
		t.Fatal(err)
	}
	h.clock.Set(time.Date(2026, 6, 1, 6, 0, 0, 0, time.UTC)) // Monday 1 June
	if _, err := h.app.Reports.SetRecipient(ctx, ownerPrincipal(h), created.ID, emailreports.Input{Email: "w1@reports.example", Weekly: true}); err != nil {
		t.Fatal(err)
	}
	// Monday 8 June 04:00 UTC: the week of 1–7 June is due, the one report
	// to send
	due := time.Date(2026, 6, 8, 4, 0, 0, 0, time.UTC)
	h.clock.Set(due)
	smtp.Silence(1)
	for i := range 3 { // the pass that meets the silence, then two passes later
		if n, err := h.app.Reports.Pass(ctx); n != 0 || err != nil {
			t.Fatalf("pass %d: %d sent, %v; want 0 and no error", i, n, err)
		}
		h.clock.Advance(emailreports.PassEvery)
	}
	if n := len(smtp.Received()); n != 1 {
		t.Errorf("the mail server has %d messages, want the one it queued", n)
	}
	db, err := pgx.Connect(ctx, h.cfg.PostgresURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(ctx)
	var attempts int
	var sent bool
	var unknown time.Time
	var reason string
	if err := db.QueryRow(ctx, `SELECT attempts, sent_at IS NOT NULL, unknown_at, last_error FROM report_deliveries`).
		Scan(&attempts, &sent, &unknown, &reason); err != nil {
		t.Fatal(err)
	}
	if attempts != 1 || sent || !unknown.Equal(due) || !strings.Contains(reason, "no reply came") || strings.Contains(reason, smtpPassword) {
		t.Errorf("the delivery: %d attempts, sent %v, unknown since %v, error %q; want 1, false, %v and why", attempts, sent, unknown, reason, due)
	}
	if !strings.Contains(logged.String(), `msg="email reports: a message was handed over and no reply came; it may have arrived and is not sent again"`) ||
		!strings.Contains(logged.String(), `step="DATA no reply"`) {
		t.Errorf("the unanswered send was not logged:\n%s", logged.String())
	}
	for _, secret := range []string{smtpPassword, "@reports.example"} {
		if strings.Contains(logged.String(), secret) {
			t.Errorf("the log shows %q", secret)
		}
	}
}

// mailing is a harness whose server sends mail to an in-process SMTP
// server, logging everything (debug included) to logged as well as the
// run's log.
type mailing struct {
	*harness
	smtp   *smtptest.Server
	logged *lockedBuffer
	log    *slog.Logger
}

// newMailingHarness starts a server that sends mail to a new SMTP server as
// tally@ with smtpPassword, from the public URL
// https://analytics.example.com, built with opts.
func newMailingHarness(t *testing.T, opts ...app.Option) mailing {
	t.Helper()
	m := mailing{smtp: smtptest.Start(t, "tally", smtpPassword), logged: &lockedBuffer{}}
	out := []io.Writer{m.logged}
	if run := testenv.RunLog(); run != nil {
		out = append(out, run)
	}
	m.log = slog.New(slog.NewTextHandler(io.MultiWriter(out...), &slog.HandlerOptions{Level: slog.LevelDebug}))
	cfg := testenvConfigWith(t, func(c *config.Config) {
		c.SMTPURL, c.MailFrom = "smtp://tally:"+smtpPassword+"@"+m.smtp.Addr, "tally <reports@tally.example>"
		c.PublicURL = "https://analytics.example.com"
	})
	m.harness = newHarnessLogged(t, cfg, m.log, opts...)
	return m
}

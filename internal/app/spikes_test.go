package app_test

import (
	"context"
	"io"
	"net/http"
	"net/mail"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tally-analytics/tally/internal/accounts"
	"github.com/tally-analytics/tally/internal/app"
	"github.com/tally-analytics/tally/internal/mailer"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/spikes"
	"github.com/tally-analytics/tally/pkg/api"
)

// spikeUnsubscribeLink is a notification's unsubscribe URL as the text
// part writes it.
var spikeUnsubscribeLink = regexp.MustCompile(`Unsubscribe: (https://analytics\.example\.com/spike-notifications/unsubscribe\?token=[A-Za-z0-9_-]{43})\b`)

// sendPageviews sends each pageview to site at its time (the clock's).
func sendPageviews(t *testing.T, h *harness, site model.SiteID, views ...[4]string) {
	t.Helper()
	ctx := context.Background()
	c := h.client(h.key)
	for _, v := range views { // visitor, time, path, referrer
		ts, err := time.Parse(time.DateTime, v[1])
		if err != nil {
			t.Fatal(err)
		}
		h.clock.Set(ts)
		if _, err := c.Pageview(ctx, api.PageviewRequest{SiteID: string(site), URL: "https://shop.example" + v[2], Referrer: v[3],
			UserAgent: chromeUA, VisitorID: v[0]}); err != nil {
			t.Fatal(err)
		}
	}
}

// The checker: below the threshold nothing goes; at it each address gets
// one message with the realtime numbers; within 12 hours nothing more, on
// this server or another; an unsubscribe link removes its address only;
// after 12 hours two servers checking at once send once; a check whose
// every message the mail server refused is tried again on the next. No
// address, password or token reaches the log.
func TestSpikeNotification(t *testing.T) {
	m := newMailingHarness(t)
	h, smtp, logged, log := m.harness, m.smtp, m.logged, m.log
	ctx := context.Background()
	created, err := h.app.Accounts.CreateSite(ctx, accounts.NewSite{OwnerEmail: h.email, Domain: "shop.example", Timezone: "Europe/Berlin"})
	if err != nil {
		t.Fatal(err)
	}
	site := created.ID
	h.clock.Set(time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC))
	if err := h.app.Spikes.SetThreshold(ctx, ownerPrincipal(h), site, "4"); err != nil {
		t.Fatal(err)
	}
	for _, email := range []string{"a@spikes.example", "b@spikes.example"} {
		if _, err := h.app.Spikes.AddRecipient(ctx, ownerPrincipal(h), site, email); err != nil {
			t.Fatal(err)
		}
	}
	check := func(s *harness, at time.Time, want int) {
		t.Helper()
		s.clock.Set(at)
		n, err := s.app.Spikes.Check(ctx)
		if err != nil || n != want {
			t.Fatalf("a check at %v sent %d, %v; want %d", at, n, err, want)
		}
	}
	at := func(clock string) time.Time {
		t.Helper()
		ts, err := time.Parse(time.DateTime, clock)
		if err != nil {
			t.Fatal(err)
		}
		return ts
	}
	check(h, at("2026-06-01 12:00:00"), 0) // nobody there

	const google, hn = "https://www.google.com/", "https://news.ycombinator.com/"
	// waitFor waits until n events are stored, and so shown in the
	// realtime view (a batch's visitors are marked before it commits)
	waitFor := func(n int64) {
		t.Helper()
		h.waitCount(n, "SELECT count() FROM events WHERE site_id = ?", string(site))
	}
	sendPageviews(t, h, site,
		[4]string{"v1", "2026-06-01 12:00:00", "/", google},
		[4]string{"v1", "2026-06-01 12:00:30", "/pricing", ""},
		[4]string{"v2", "2026-06-01 12:01:00", "/blog/launch", hn},
		[4]string{"v3", "2026-06-01 12:02:00", "/", ""})
	waitFor(4)
	check(h, at("2026-06-01 12:03:00"), 0) // 3 current visitors: below 4
	if n := len(smtp.Received()); n != 0 {
		t.Fatalf("%d messages below the threshold", n)
	}
	sendPageviews(t, h, site, [4]string{"v4", "2026-06-01 12:03:00", "/pricing", google})
	waitFor(5)
	// At 12:04 UTC (14:04 in Berlin) the last 5 minutes hold v1 (on
	// /pricing, from Google), v2 (/blog/launch, Hacker News), v3 (/,
	// direct) and v4 (/pricing, Google): 4 visitors, the threshold.
	// Sources: Google 2, then Direct / None and Hacker News 1 each (by
	// name); pages: /pricing 2, then / and /blog/launch 1 each.
	check(h, at("2026-06-01 12:04:00"), 2)
	got := smtp.Received()
	if len(got) != 2 {
		t.Fatalf("the mail server has %d messages, want 2", len(got))
	}
	links := map[string]string{}
	for i, to := range []string{"a@spikes.example", "b@spikes.example"} {
		msg := readReport(t, got[i])
		if got[i].From != "reports@tally.example" || msg.to != to {
			t.Errorf("message %d from %s to %s, want from reports@tally.example to %s", i, got[i].From, msg.to, to)
		}
		if msg.subject != "Traffic spike on shop.example: 4 current visitors" {
			t.Errorf("subject %q", msg.subject)
		}
		msg.has(t, "4 current visitors (in the last 5 minutes) at 14:04 on Mon 1 June 2026 (Europe/Berlin); the threshold is 4.",
			"Top sources (current visitors) Google 2 Direct / None 1 Hacker News 1 Top pages (current visitors) /pricing 2 / 1 /blog/launch 1",
			"sent at most once in 12 hours", "Settings page")
		if !strings.Contains(msg.text, "See them live on the dashboard: https://analytics.example.com/sites/"+string(site)+" ") ||
			!strings.Contains(msg.rawHTML, `href="https://analytics.example.com/sites/`+string(site)+`"`) ||
			!strings.Contains(msg.text, "https://analytics.example.com/sites/"+string(site)+"/settings#spike-notifications") {
			t.Errorf("the dashboard or settings link is missing:\n%s", msg.text)
		}
		found := spikeUnsubscribeLink.FindStringSubmatch(msg.text)
		if found == nil {
			t.Fatalf("to %s: no unsubscribe link:\n%s", to, msg.text)
		}
		header, err := mail.ReadMessage(strings.NewReader(got[i].Data))
		if err != nil {
			t.Fatal(err)
		}
		if header.Header.Get("List-Unsubscribe") != "<"+found[1]+">" ||
			header.Header.Get("List-Unsubscribe-Post") != "List-Unsubscribe=One-Click" {
			t.Errorf("to %s: the List-Unsubscribe headers: %v", to, header.Header)
		}
		links[to] = found[1]
	}

	// within 12 hours: nothing more, here or on another server
	check(h, at("2026-06-01 12:05:00"), 0)
	ocfg := *h.cfg // another server on the same databases, logging to the same log
	ocfg.WALDir = t.TempDir()
	other := startAppLogged(t, &ocfg, h.clock, log)
	check(other, at("2026-06-01 12:05:00"), 0)

	// a's link: GET asks, POST removes a (no login, no CSRF token), then 404
	u, err := url.Parse(links["a@spikes.example"])
	if err != nil {
		t.Fatal(err)
	}
	local := h.srv.URL + u.RequestURI()
	do := func(method string, wantStatus int) string {
		t.Helper()
		var body io.Reader
		if method == http.MethodPost {
			body = strings.NewReader("List-Unsubscribe=One-Click")
		}
		req, _ := http.NewRequest(method, local, body)
		if body != nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != wantStatus {
			t.Fatalf("%s %s: %d, want %d\n%.2000s", method, local, resp.StatusCode, wantStatus, b)
		}
		if resp.Header.Get("Referrer-Policy") != "no-referrer" {
			t.Errorf("%s of an unsubscribe link: Referrer-Policy %q", method, resp.Header.Get("Referrer-Policy"))
		}
		return string(b)
	}
	if page := do(http.MethodGet, http.StatusOK); !strings.Contains(page, "Stop sending the traffic spike notifications of shop.example to this address?") ||
		!strings.Contains(page, `action="`+spikes.UnsubscribePath+"?token="+u.Query().Get("token")+`"`) {
		t.Errorf("the unsubscribe page:\n%s", page)
	}
	if done := do(http.MethodPost, http.StatusOK); !strings.Contains(done, "This address gets no more traffic spike notifications of shop.example.") {
		t.Errorf("the answer to the POST:\n%s", done)
	}
	do(http.MethodPost, http.StatusNotFound)
	settings, err := h.app.Spikes.Settings(ctx, ownerPrincipal(h), site)
	if err != nil || len(settings.Recipients) != 1 || settings.Recipients[0].Email != "b@spikes.example" {
		t.Fatalf("after unsubscribing: %+v, %v; want b@spikes.example only", settings.Recipients, err)
	}

	// the next day, just past midnight: 4 visitors again, still within 12
	// hours of 12:04 until 00:04
	sendPageviews(t, h, site,
		[4]string{"w1", "2026-06-02 00:00:00", "/", ""}, [4]string{"w2", "2026-06-02 00:00:00", "/", ""},
		[4]string{"w3", "2026-06-02 00:00:00", "/", ""}, [4]string{"w4", "2026-06-02 00:00:00", "/", ""})
	waitFor(9)
	check(h, at("2026-06-02 00:03:59"), 0)
	check(other, at("2026-06-02 00:03:59"), 0)
	// 12 hours after: two servers check at once, and one sends, to b only
	h.clock.Set(at("2026-06-02 00:04:00"))
	var wg sync.WaitGroup
	var mu sync.Mutex
	total := 0
	for _, s := range []*harness{h, other} {
		wg.Go(func() {
			n, err := s.app.Spikes.Check(ctx)
			if err != nil {
				t.Errorf("a check: %v", err)
			}
			mu.Lock()
			total += n
			mu.Unlock()
		})
	}
	wg.Wait()
	got = smtp.Received()
	if total != 1 || len(got) != 3 {
		t.Fatalf("two servers' checks sent %d, the mail server has %d; want 1 more, 3", total, len(got))
	}
	if msg := readReport(t, got[2]); msg.to != "b@spikes.example" || msg.subject != "Traffic spike on shop.example: 4 current visitors" {
		t.Errorf("the second notification went to %s: %q", msg.to, msg.subject)
	}

	// 12 hours later again, the mail server refuses: the check fails, and
	// the next one sends
	sendPageviews(t, h, site,
		[4]string{"x1", "2026-06-02 12:03:00", "/", ""}, [4]string{"x2", "2026-06-02 12:03:00", "/", ""},
		[4]string{"x3", "2026-06-02 12:03:00", "/", ""}, [4]string{"x4", "2026-06-02 12:03:00", "/", ""})
	waitFor(13)
	smtp.Refuse(1)
	h.clock.Set(at("2026-06-02 12:04:00"))
	if n, err := h.app.Spikes.Check(ctx); n != 0 || err == nil {
		t.Fatalf("a check whose message was refused: %d, %v; want 0 and an error", n, err)
	}
	check(other, at("2026-06-02 12:05:00"), 1)
	check(h, at("2026-06-02 12:06:00"), 0)
	if n := len(smtp.Received()); n != 4 {
		t.Errorf("the mail server has %d messages, want 4", n)
	}

	db, err := pgx.Connect(ctx, h.cfg.PostgresURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(ctx)
	var last time.Time
	var tokens, plain int
	if err := db.QueryRow(ctx, `SELECT (SELECT last_sent_at FROM spike_notifications WHERE site_id = $1),
		(SELECT count(*) FROM spike_unsubscribes), (SELECT count(*) FROM spike_unsubscribes WHERE length(token_hash) <> 32)`, string(site)).
		Scan(&last, &tokens, &plain); err != nil {
		t.Fatal(err)
	}
	// b's three messages (a's tokens went with a); the refused one's token
	// was forgotten when it was refused
	if !last.Equal(at("2026-06-02 12:05:00")) || tokens != 3 || plain != 0 {
		t.Errorf("last sent %v, %d tokens, %d not a SHA-256; want 12:05, 3, 0", last, tokens, plain)
	}
	for _, secret := range []string{smtpPassword, "@spikes.example", u.Query().Get("token")} {
		if strings.Contains(logged.String(), secret) {
			t.Errorf("the log shows %q:\n%s", secret, logged.String())
		}
	}
	if !strings.Contains(logged.String(), `msg="spike notifications: a send failed"`) {
		t.Errorf("the refused send was not logged:\n%s", logged.String())
	}

	// turned off and on again (threshold 1) with its address, within the
	// quiet period of the 12:05 notification: the 4 visitors of 12:03 are
	// over the threshold, and nothing is sent
	if err := h.app.Spikes.TurnOff(ctx, ownerPrincipal(h), site); err != nil {
		t.Fatal(err)
	}
	if err := h.app.Spikes.SetThreshold(ctx, ownerPrincipal(h), site, "1"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.app.Spikes.AddRecipient(ctx, ownerPrincipal(h), site, "b@spikes.example"); err != nil {
		t.Fatal(err)
	}
	check(h, at("2026-06-02 12:07:00"), 0)
	if n := len(smtp.Received()); n != 4 {
		t.Errorf("after turning it off and on, the mail server has %d messages, want 4", n)
	}
}

// A notification handed over to the mail server whose reply never comes
// (the server here queued it and stays silent until the mailer gives up)
// may have arrived: the claim stays, so the next check sends nothing, its
// unsubscribe token is kept for the link it may carry, and the log says so
// without the address.
func TestSpikeNotificationWithoutReply(t *testing.T) {
	m := newMailingHarness(t, app.WithMailer(mailer.WithTimeout(2*time.Second)))
	h, smtp, logged := m.harness, m.smtp, m.logged
	ctx := context.Background()
	created, err := h.app.Accounts.CreateSite(ctx, accounts.NewSite{OwnerEmail: h.email, Domain: "shop.example", Timezone: "UTC"})
	if err != nil {
		t.Fatal(err)
	}
	site := created.ID
	h.clock.Set(time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC))
	if err := h.app.Spikes.SetThreshold(ctx, ownerPrincipal(h), site, "1"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.app.Spikes.AddRecipient(ctx, ownerPrincipal(h), site, "a@spikes.example"); err != nil {
		t.Fatal(err)
	}
	sendPageviews(t, h, site, [4]string{"v1", "2026-06-01 12:00:00", "/", ""})
	h.waitCount(1, "SELECT count() FROM events WHERE site_id = ?", string(site))
	// at 12:01 v1 is the one current visitor: the threshold of 1
	smtp.Silence(1)
	h.clock.Set(time.Date(2026, 6, 1, 12, 1, 0, 0, time.UTC))
	if n, err := h.app.Spikes.Check(ctx); n != 0 || err != nil {
		t.Fatalf("a check whose message got no reply: %d, %v; want 0 sent and no error", n, err)
	}
	// a minute later v1 is still current, and nothing is sent again (a
	// refused message would be: TestSpikeNotification)
	h.clock.Set(time.Date(2026, 6, 1, 12, 2, 0, 0, time.UTC))
	if n, err := h.app.Spikes.Check(ctx); n != 0 || err != nil {
		t.Fatalf("the next check: %d, %v; want 0", n, err)
	}
	if n := len(smtp.Received()); n != 1 {
		t.Errorf("the mail server has %d messages, want the one it queued", n)
	}
	db, err := pgx.Connect(ctx, h.cfg.PostgresURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(ctx)
	var last time.Time
	var tokens int
	if err := db.QueryRow(ctx, `SELECT (SELECT last_sent_at FROM spike_notifications WHERE site_id = $1),
		(SELECT count(*) FROM spike_unsubscribes)`, string(site)).Scan(&last, &tokens); err != nil {
		t.Fatal(err)
	}
	if !last.Equal(time.Date(2026, 6, 1, 12, 1, 0, 0, time.UTC)) || tokens != 1 {
		t.Errorf("last sent %v, %d tokens; want the claim of 12:01 kept, and its message's token", last, tokens)
	}
	if !strings.Contains(logged.String(), `msg="spike notifications: a message was handed over and no reply came; it may have arrived and is not sent again"`) ||
		!strings.Contains(logged.String(), `step="DATA no reply"`) {
		t.Errorf("the unanswered send was not logged:\n%s", logged.String())
	}
	for _, secret := range []string{smtpPassword, "@spikes.example"} {
		if strings.Contains(logged.String(), secret) {
			t.Errorf("the log shows %q", secret)
		}
	}
}

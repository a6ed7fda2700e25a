package app_test

import (
	"context"
	"io"
	"net/http"
	"net/mail"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tally-analytics/tally/internal/accounts"
	"github.com/tally-analytics/tally/internal/emailreports"
	"github.com/tally-analytics/tally/internal/model"
)

// unsubscribeLink is the unsubscribe URL of a report as the text part
// writes it.
var unsubscribeLink = regexp.MustCompile(`Unsubscribe: (https://analytics\.example\.com/email-reports/unsubscribe\?token=[A-Za-z0-9_-]{43})\b`)

// Each report carries an unsubscribe link of its own: in the
// List-Unsubscribe header with RFC 8058's one-click, and as a visible
// "Unsubscribe" in both parts. A GET of it only asks; a POST (no login, no
// CSRF token) removes that recipient of that site and no other; a forged
// or spent token is a 404; the token never reaches the log.
func TestEmailReportUnsubscribe(t *testing.T) {
	m := newMailingHarness(t)
	h, smtp, logged := m.harness, m.smtp, m.logged
	ctx := context.Background()
	h.clock.Set(time.Date(2026, 6, 1, 6, 0, 0, 0, time.UTC))
	shop, err := h.app.Accounts.CreateSite(ctx, accounts.NewSite{OwnerEmail: h.email, Domain: "shop.example", Timezone: "Europe/Berlin"})
	if err != nil {
		t.Fatal(err)
	}
	blog, err := h.app.Accounts.CreateSite(ctx, accounts.NewSite{OwnerEmail: h.email, Domain: "blog.example", Timezone: "Europe/Berlin"})
	if err != nil {
		t.Fatal(err)
	}
	// a@ gets both sites' reports, b@ the shop's
	for _, r := range []struct {
		site  model.Site
		email string
	}{{shop, "a@reports.example"}, {shop, "b@reports.example"}, {blog, "a@reports.example"}} {
		if _, err := h.app.Reports.SetRecipient(ctx, ownerPrincipal(h), r.site.ID, emailreports.Input{Email: r.email, Weekly: true}); err != nil {
			t.Fatal(err)
		}
	}
	h.clock.Set(time.Date(2026, 6, 8, 4, 0, 0, 0, time.UTC)) // Monday 06:00 in Berlin: the week of 1–7 June
	if n, err := h.app.Reports.Pass(ctx); err != nil || n != 3 {
		t.Fatalf("the pass sent %d, %v; want 3", n, err)
	}

	links := map[string]string{} // "to subject" → the message's unsubscribe URL
	seen := map[string]bool{}
	for _, r := range smtp.Received() {
		msg, err := mail.ReadMessage(strings.NewReader(r.Data))
		if err != nil {
			t.Fatal(err)
		}
		m := readReport(t, r)
		found := unsubscribeLink.FindStringSubmatch(m.text)
		if found == nil {
			t.Fatalf("to %s: no unsubscribe link in the text part:\n%s", m.to, m.text)
		}
		link := found[1]
		if got := msg.Header.Get("List-Unsubscribe"); got != "<"+link+">" {
			t.Errorf("to %s: List-Unsubscribe %q, want <%s>", m.to, got, link)
		}
		if got := msg.Header.Get("List-Unsubscribe-Post"); got != "List-Unsubscribe=One-Click" {
			t.Errorf("to %s: List-Unsubscribe-Post %q, want List-Unsubscribe=One-Click", m.to, got)
		}
		if !strings.Contains(m.rawHTML, `<a href="`+link+`" style="color:#57534e">Unsubscribe</a>`) {
			t.Errorf("to %s: the HTML part lacks the Unsubscribe link:\n%s", m.to, m.rawHTML)
		}
		if seen[link] {
			t.Errorf("to %s: the same link as another message", m.to)
		}
		seen[link] = true
		links[m.to+" "+strings.SplitN(m.subject, ":", 2)[0]] = link
	}
	aShop := links["a@reports.example Weekly report for shop.example"]
	if len(links) != 3 || aShop == "" || links["a@reports.example Weekly report for blog.example"] == "" ||
		links["b@reports.example Weekly report for shop.example"] == "" {
		t.Fatalf("links of %v, want one per message, three", links)
	}
	u, err := url.Parse(aShop)
	if err != nil {
		t.Fatal(err)
	}
	token := u.Query().Get("token")
	local := h.srv.URL + u.RequestURI() // the link, on this test's server

	db, err := pgx.Connect(ctx, h.cfg.PostgresURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(ctx)
	recipients := func() []string {
		t.Helper()
		rows, err := db.Query(ctx, `SELECT s.domain || ' ' || r.email FROM report_recipients r JOIN sites s ON s.id = r.site_id ORDER BY 1`)
		if err != nil {
			t.Fatal(err)
		}
		list, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		return list
	}
	all := []string{"blog.example a@reports.example", "shop.example a@reports.example", "shop.example b@reports.example"}
	do := func(method, target string, wantStatus int) (string, http.Header) {
		t.Helper()
		var body io.Reader
		if method == http.MethodPost {
			body = strings.NewReader("List-Unsubscribe=One-Click") // as a mail reader's one-click sends it
		}
		req, _ := http.NewRequest(method, target, body)
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
			t.Fatalf("%s %s: %d, want %d\n%.2000s", method, target, resp.StatusCode, wantStatus, b)
		}
		return string(b), resp.Header
	}

	// GET only asks: its button posts to the link itself
	page, header := do(http.MethodGet, local, http.StatusOK)
	if !strings.Contains(page, "Stop sending the email reports of shop.example to this address?") ||
		!strings.Contains(page, `<form method="post" action="/email-reports/unsubscribe?token=`+token+`">`) {
		t.Errorf("the unsubscribe page:\n%s", page)
	}
	if strings.Contains(page, "a@reports.example") {
		t.Error("the unsubscribe page shows the address")
	}
	if header.Get("Referrer-Policy") != "no-referrer" || header.Get("X-Robots-Tag") != "noindex, nofollow" ||
		header.Get("Cache-Control") != "private, no-store" {
		t.Errorf("the unsubscribe page's headers: %v", header)
	}
	do(http.MethodGet, local, http.StatusOK)
	if got := recipients(); !slices.Equal(got, all) {
		t.Fatalf("after GETs: %v, want %v", got, all)
	}

	// forged tokens: the right shape but unknown, one character off, malformed, none
	off := []byte(token)
	off[10] ^= 'A' ^ 'B'
	if off[10] == token[10] {
		t.Fatal("the forged token is the token")
	}
	for _, forged := range []string{"?token=" + strings.Repeat("A", 43), "?token=" + string(off), "?token=" + token[:42],
		"?token=" + token + "x", "?token=%00", ""} {
		for _, method := range []string{http.MethodGet, http.MethodPost} {
			body, _ := do(method, h.srv.URL+emailreports.UnsubscribePath+forged, http.StatusNotFound)
			if !strings.Contains(body, "This link removes no address: it is not valid, or its address was already removed.") {
				t.Errorf("%s %s: the 404 page:\n%s", method, forged, body)
			}
		}
	}
	if got := recipients(); !slices.Equal(got, all) {
		t.Fatalf("after forged tokens: %v, want %v", got, all)
	}

	// the one-click POST: no cookie, no CSRF token
	done, _ := do(http.MethodPost, local, http.StatusOK)
	if !strings.Contains(done, "This address gets no more email reports of shop.example.") {
		t.Errorf("the answer to the POST:\n%s", done)
	}
	if got, want := recipients(), []string{"blog.example a@reports.example", "shop.example b@reports.example"}; !slices.Equal(got, want) {
		t.Fatalf("after unsubscribing: %v, want %v", got, want)
	}
	var deliveries, tokens int
	if err := db.QueryRow(ctx, "SELECT (SELECT count(*) FROM report_deliveries), (SELECT count(*) FROM report_unsubscribes)").
		Scan(&deliveries, &tokens); err != nil || deliveries != 2 || tokens != 2 {
		t.Errorf("%d deliveries and %d tokens kept (%v), want the other two recipients' 2 and 2", deliveries, tokens, err)
	}
	var hashed int
	if err := db.QueryRow(ctx, "SELECT count(*) FROM report_unsubscribes WHERE token_hash = convert_to($1, 'UTF8') OR length(token_hash) <> 32",
		links["b@reports.example Weekly report for shop.example"][len("https://analytics.example.com/email-reports/unsubscribe?token="):]).
		Scan(&hashed); err != nil || hashed != 0 {
		t.Errorf("%d tokens kept as they are or not as a SHA-256 (%v)", hashed, err)
	}
	// spent: the same link again is a 404, either way
	do(http.MethodPost, local, http.StatusNotFound)
	do(http.MethodGet, local, http.StatusNotFound)

	// the next week goes to the others only
	h.clock.Set(time.Date(2026, 6, 15, 4, 0, 0, 0, time.UTC))
	if n, err := h.app.Reports.Pass(ctx); err != nil || n != 2 {
		t.Fatalf("the next pass sent %d, %v; want 2", n, err)
	}
	var next []string
	for _, r := range smtp.Received()[3:] {
		m := readReport(t, r)
		next = append(next, m.to+" "+strings.SplitN(m.subject, ":", 2)[0])
	}
	slices.Sort(next)
	if want := []string{"a@reports.example Weekly report for blog.example", "b@reports.example Weekly report for shop.example"}; !slices.Equal(next, want) {
		t.Errorf("the next week went to %v, want %v", next, want)
	}

	for _, secret := range []string{token, "@reports.example"} {
		if strings.Contains(logged.String(), secret) {
			t.Errorf("the log shows %q:\n%s", secret, logged.String())
		}
	}
}

package app_test

import (
	"context"
	"crypto/sha256"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tally-analytics/tally/internal/accounts"
	"github.com/tally-analytics/tally/internal/config"
	"github.com/tally-analytics/tally/internal/mailer/smtptest"
	"github.com/tally-analytics/tally/internal/passwords"
	"github.com/tally-analytics/tally/internal/testenv"
)

// resetLink is a reset link as the emails write it.
var resetLink = regexp.MustCompile(`https://analytics\.example\.com/login/reset/([A-Za-z0-9_-]{43})\b`)

// resetUser is the account of the reset tests (the log scan looks for its
// domain in the run's log).
const resetUser = "ada@passwords.example"

// resetHarness is a harness whose server sends email through a test SMTP
// server, links of https://analytics.example.com, with resetUser's account
// (password: the harness's); log is what the server logged.
func resetHarness(t *testing.T, adjust func(*config.Config)) (*harness, *smtptest.Server, *lockedBuffer) {
	t.Helper()
	smtp := smtptest.Start(t, "tally", smtpPassword)
	var logged lockedBuffer
	out := []io.Writer{&logged}
	if run := testenv.RunLog(); run != nil {
		out = append(out, run)
	}
	log := slog.New(slog.NewTextHandler(io.MultiWriter(out...), &slog.HandlerOptions{Level: slog.LevelDebug}))
	cfg := testenvConfigWith(t, func(c *config.Config) {
		c.SMTPURL, c.MailFrom = "smtp://tally:"+smtpPassword+"@"+smtp.Addr, "tally <accounts@tally.example>"
		c.PublicURL = "https://analytics.example.com"
		if adjust != nil {
			adjust(c)
		}
	})
	h := newHarnessLogged(t, cfg, log)
	if _, err := h.app.Accounts.CreateUser(context.Background(), accounts.NewUser{Email: resetUser, Password: password, Name: "Ada"}); err != nil {
		t.Fatal(err)
	}
	return h, smtp, &logged
}

// mails waits for the SMTP server to have received n messages.
func mails(t *testing.T, smtp *smtptest.Server, n int) []smtptest.Received {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := smtp.Received()
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d emails received, want %d", len(got), n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// askReset asks for a reset link for email on the login's form, and
// returns the answer's page.
func askReset(w *webUser, email string, want int) string {
	w.t.Helper()
	w.expect(http.MethodGet, "/login/forgot", nil, http.StatusOK)
	return w.expect(http.MethodPost, "/login/forgot", url.Values{"csrf": {w.csrf}, "email": {email}}, want)
}

// linkIn is the token of the reset link a received email holds, which it
// holds in both parts; it checks what the email says.
func linkIn(t *testing.T, m smtptest.Received) string {
	t.Helper()
	mail := readReport(t, m)
	if mail.to != resetUser || mail.subject != "Set a new tally password" {
		t.Fatalf("the email: to %q, subject %q", mail.to, mail.subject)
	}
	mail.has(t, "for the tally account of "+resetUser, "The link works once, for one hour; asking again replaces it.",
		"logs you out everywhere; API keys keep working", "If it was not you, ignore this email")
	text, html := resetLink.FindStringSubmatch(mail.text), resetLink.FindStringSubmatch(mail.rawHTML)
	if text == nil || html == nil || text[1] != html[1] {
		t.Fatalf("the email's parts hold no link, or different ones:\n%s\n%s", mail.text, mail.rawHTML)
	}
	return text[1]
}

// setPassword posts the reset form of token.
func setPassword(w *webUser, token, next, confirm, code string) (int, string, string) {
	w.t.Helper()
	form := url.Values{"csrf": {w.csrf}, "token": {token}, "new_password": {next}, "confirm_password": {confirm}}
	if code != "" {
		form.Set("code", code)
	}
	return w.do(http.MethodPost, "/login/reset", form)
}

// A forgotten password, from the login page to the new password: the link
// is offered; the answer to an address is the same whether or not it is an
// account's, and only an account's gets an email, with a link of 256
// random bits kept only as their SHA-256; asking again voids the link
// before; the page refuses a short password and two that differ, and
// keeps the link; setting it ends every session and login token, keeps the
// API key, and spends the link. Neither the link nor the address is
// logged.
func TestPasswordReset(t *testing.T) {
	h, smtp, logged := resetHarness(t, nil)
	ctx := context.Background()
	session := newWebUser(t, h)
	session.login(resetUser)
	token, err := h.loginToken(resetUser, password)
	if err != nil {
		t.Fatal(err)
	}
	key, err := h.app.Accounts.CreateKey(ctx, accounts.NewKey{OwnerEmail: resetUser, Name: "k"})
	if err != nil {
		t.Fatal(err)
	}

	w := newWebUser(t, h)
	if body := w.expect(http.MethodGet, "/login", nil, http.StatusOK); !strings.Contains(body, `href="/login/forgot"`) {
		t.Fatal("the login page has no link for a forgotten password")
	}
	unknown := askReset(w, "nobody@passwords.example", http.StatusOK)
	known := askReset(w, resetUser, http.StatusOK)
	same := func(page, email string) string {
		return csrfField.ReplaceAllString(strings.ReplaceAll(page, email, "EMAIL"), "")
	}
	if same(unknown, "nobody@passwords.example") != same(known, resetUser) || !strings.Contains(known, `data-state="sent"`) {
		t.Fatalf("the answers for an unknown address and an account's differ:\n%s\n---\n%s", unknown, known)
	}
	got := mails(t, smtp, 1) // the unknown address was looked up first, and sent nothing
	if len(got) != 1 {
		t.Fatalf("%d emails, want 1 (the account's)", len(got))
	}
	first := linkIn(t, got[0])
	var stored []byte
	var expires time.Time
	if err := h.app.PG.QueryRow(ctx, `SELECT r.token_hash, r.expires_at FROM password_resets r JOIN users u ON u.id = r.user_id
		WHERE u.email = $1`, resetUser).Scan(&stored, &expires); err != nil {
		t.Fatal(err)
	}
	if sum := sha256.Sum256([]byte(first)); string(stored) != string(sum[:]) || !expires.Equal(h.clock.Now().Add(time.Hour)) {
		t.Errorf("stored: %x until %v; want the link's SHA-256, until an hour from %v", stored, expires, h.clock.Now())
	}

	askReset(w, resetUser, http.StatusOK)
	second := linkIn(t, mails(t, smtp, 2)[1])
	if second == first {
		t.Fatal("the second link is the first")
	}
	if body := w.expect(http.MethodGet, passwords.ResetPath+first, nil, http.StatusNotFound); !strings.Contains(body, `data-state="invalid"`) {
		t.Error("the link a second request replaced still shows its form")
	}
	body := w.expect(http.MethodGet, passwords.ResetPath+second, nil, http.StatusOK)
	if !strings.Contains(body, `name="new_password"`) || strings.Contains(body, `name="code"`) || w.header.Get("Referrer-Policy") != "no-referrer" {
		t.Fatalf("the reset page: no form, a code asked of an account without 2FA, or a Referer sent (%q):\n%s",
			w.header.Get("Referrer-Policy"), body)
	}
	if status, _, body := setPassword(w, second, "short", "short", ""); status != http.StatusBadRequest ||
		!strings.Contains(body, "a password must be 8 to 256 characters") {
		t.Errorf("a short password: %d, want 400 with the rule's refusal:\n%s", status, body)
	}
	if status, _, body := setPassword(w, second, newPassword, newPassword+"!", ""); status != http.StatusBadRequest ||
		!strings.Contains(body, "the two new passwords differ") {
		t.Errorf("two different passwords: %d, want 400 saying so:\n%s", status, body)
	}
	if status, loc, _ := setPassword(w, second, newPassword, newPassword, ""); status != http.StatusSeeOther || loc != "/login?reset=done" {
		t.Fatalf("setting the password: %d to %q, want 303 to /login?reset=done", status, loc)
	}
	if body := w.expect(http.MethodGet, "/login?reset=done", nil, http.StatusOK); !strings.Contains(body, "Your new password is set") {
		t.Error("the login page does not say the password is set")
	}

	// the link is spent
	w.expect(http.MethodGet, passwords.ResetPath+second, nil, http.StatusNotFound)
	if status, _, _ := setPassword(w, second, password, password, ""); status != http.StatusNotFound {
		t.Errorf("the link used again: %d, want 404", status)
	}
	// every login ended; the API key did not
	if status, loc, _ := session.do(http.MethodGet, "/sites", nil); status != http.StatusSeeOther || !strings.HasPrefix(loc, "/login") {
		t.Errorf("a session of before the reset: %d to %q, want 303 to the login", status, loc)
	}
	if h.dashboardSessions(resetUser) != 0 {
		t.Error("sessions of the user are left in Postgres")
	}
	if got := h.apiStatus(token); got != http.StatusUnauthorized {
		t.Errorf("a login token of before the reset: %d, want 401", got)
	}
	if got := h.apiStatus(key.Secret); got != http.StatusOK {
		t.Errorf("the user's API key after the reset: %d, want 200", got)
	}
	if _, err := h.loginToken(resetUser, password); err == nil {
		t.Error("the old password still logs in")
	}
	w.login2(resetUser, newPassword)

	log := logged.String()
	for _, secret := range []string{first, second, resetUser, "nobody@passwords.example"} {
		if strings.Contains(log, secret) {
			t.Errorf("the log holds %q", secret)
		}
	}
	if strings.Count(log, "password resets: a link was sent") != 2 {
		t.Errorf("the log does not tell of the two links sent:\n%s", log)
	}
}

// login2 logs in through the form with a password of its own.
func (w *webUser) login2(email, pw string) {
	w.t.Helper()
	w.do(http.MethodGet, "/login", nil)
	status, loc, _ := w.do(http.MethodPost, "/login", url.Values{"email": {email}, "password": {pw}, "csrf": {w.csrf}})
	if status != http.StatusSeeOther || loc != "/sites" {
		w.t.Fatalf("logging in as %s: %d to %q, want 303 to /sites", email, status, loc)
	}
}

// A link works for an hour by the server's clock, and not a second more.
func TestPasswordResetLinkExpires(t *testing.T) {
	h, smtp, _ := resetHarness(t, nil)
	w := newWebUser(t, h)
	askReset(w, resetUser, http.StatusOK)
	link := linkIn(t, mails(t, smtp, 1)[0])
	h.clock.Advance(time.Hour - time.Second)
	w.expect(http.MethodGet, passwords.ResetPath+link, nil, http.StatusOK)
	h.clock.Advance(time.Second)
	w.expect(http.MethodGet, passwords.ResetPath+link, nil, http.StatusNotFound)
	if status, _, body := setPassword(w, link, newPassword, newPassword, ""); status != http.StatusNotFound ||
		!strings.Contains(body, "This link has expired or was used already") {
		t.Errorf("setting a password with an expired link: %d, want 404 saying so", status)
	}
	if _, err := h.loginToken(resetUser, password); err != nil {
		t.Errorf("an expired link changed the password: %v", err)
	}
	// a link never sent, or of another shape, is the same
	w.expect(http.MethodGet, passwords.ResetPath+"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", nil, http.StatusNotFound)
	w.expect(http.MethodGet, passwords.ResetPath+"short", nil, http.StatusNotFound)
}

// An account with two-factor authentication: the reset page asks for its
// code too (the link proves only that the email is read), refuses the
// password without it or with a wrong one, and takes a right one. Two-factor
// authentication stays on: the next login asks for a code again. A login
// that was waiting for its code when the password was reset ends.
func TestPasswordResetAsksTheSecondFactor(t *testing.T) {
	h, smtp, _ := resetHarness(t, nil)
	owner := newWebUser(t, h)
	owner.login(resetUser)
	secret, _ := enableTwoFactor(t, h, owner)
	ada, err := h.app.Accounts.UserByEmail(context.Background(), resetUser)
	if err != nil {
		t.Fatal(err)
	}
	waiting := newWebUser(t, h) // a login waiting for its code
	waiting.do(http.MethodGet, "/login", nil)
	if status, loc, _ := waiting.do(http.MethodPost, "/login", url.Values{"email": {resetUser}, "password": {password},
		"csrf": {waiting.csrf}}); status != http.StatusSeeOther || !strings.HasPrefix(loc, "/login/code") {
		t.Fatalf("the password of an account with 2FA: %d to %q, want the code step", status, loc)
	}

	w := newWebUser(t, h)
	askReset(w, resetUser, http.StatusOK)
	link := linkIn(t, mails(t, smtp, 1)[0])
	if body := w.expect(http.MethodGet, passwords.ResetPath+link, nil, http.StatusOK); !strings.Contains(body, `name="code"`) {
		t.Fatal("the reset page of an account with 2FA asks no code")
	}
	if status, _, body := setPassword(w, link, newPassword, newPassword, ""); status != http.StatusBadRequest ||
		!strings.Contains(body, "enter the code") {
		t.Errorf("no code: %d, want 400 asking for it", status)
	}
	if status, _, body := setPassword(w, link, newPassword, newPassword, h.wrongCode(secret)); status != http.StatusBadRequest ||
		!strings.Contains(body, "that code is not right") {
		t.Errorf("a wrong code: %d, want 400 saying so", status)
	}
	if _, err := h.loginToken(resetUser, password); err == nil || !strings.Contains(err.Error(), "otp_required") {
		t.Fatalf("the refused resets changed the password: %v", err)
	}
	if status, loc, _ := setPassword(w, link, newPassword, newPassword, h.code(secret)); status != http.StatusSeeOther || loc != "/login?reset=done" {
		t.Fatalf("with the right code: %d to %q, want 303 to /login?reset=done", status, loc)
	}
	h.nextStep()
	if !h.twoFactorOn(ada.ID) {
		t.Fatal("the reset turned two-factor authentication off")
	}
	if status, loc, _ := waiting.do(http.MethodGet, "/login/code", nil); status != http.StatusSeeOther || loc != "/login" {
		t.Errorf("the login that waited for its code: %d to %q, want 303 to /login", status, loc)
	}
	again := newWebUser(t, h)
	again.do(http.MethodGet, "/login", nil)
	if status, loc, _ := again.do(http.MethodPost, "/login", url.Values{"email": {resetUser}, "password": {newPassword},
		"csrf": {again.csrf}}); status != http.StatusSeeOther || !strings.HasPrefix(loc, "/login/code") {
		t.Errorf("the new password: %d to %q, want the code step", status, loc)
	}
}

// A server that sends no email offers no link: the login page has none,
// and the pages of a forgotten password are 404, as any unknown page. The
// operator's command line is the way.
func TestPasswordResetWithoutMail(t *testing.T) {
	for name, adjust := range map[string]func(*config.Config){
		"no SMTP":       func(c *config.Config) { c.PublicURL = "https://analytics.example.com" },
		"no public URL": nil, // a link of the request's Host would go wherever the request says
	} {
		t.Run(name, func(t *testing.T) {
			cfg := testenv.Config(t)
			if adjust != nil {
				adjust(cfg)
			} else {
				smtp := smtptest.Start(t, "tally", smtpPassword)
				cfg.SMTPURL, cfg.MailFrom = "smtp://tally:"+smtpPassword+"@"+smtp.Addr, "accounts@tally.example"
			}
			h := newHarnessWith(t, cfg)
			w := newWebUser(t, h)
			if body := w.expect(http.MethodGet, "/login", nil, http.StatusOK); strings.Contains(body, "/login/forgot") {
				t.Error("the login page links to a forgotten password")
			}
			w.expect(http.MethodGet, "/login/forgot", nil, http.StatusNotFound)
			w.expect(http.MethodPost, "/login/forgot", url.Values{"csrf": {w.csrf}, "email": {h.email}}, http.StatusNotFound)
			w.expect(http.MethodGet, passwords.ResetPath+"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", nil, http.StatusNotFound)
			w.expect(http.MethodPost, "/login/reset", url.Values{"csrf": {w.csrf}}, http.StatusNotFound)
		})
	}
}

// The answer does not wait for the email: a mail server that does not
// answer holds up no request, the account's no more than an unknown one's.
func TestPasswordResetAnswersBeforeTheMail(t *testing.T) {
	silent := silentServer(t)
	h, _, _ := resetHarness(t, func(c *config.Config) { c.SMTPURL = "smtp://" + silent })
	w := newWebUser(t, h)
	for _, email := range []string{resetUser, "nobody@passwords.example", resetUser} {
		start := time.Now()
		askReset(w, email, http.StatusOK)
		if took := time.Since(start); took > 2*time.Second {
			t.Errorf("asking for %s's link took %v with a mail server that never answers", email, took)
		}
	}
}

// Requests are limited per email, whatever the client address (each one
// mails the address and voids the link before), and per address across
// emails; an unknown email's requests are limited as an account's are.
func TestPasswordResetLimits(t *testing.T) {
	h, smtp, _ := resetHarness(t, func(c *config.Config) {
		c.LoginAttempts = 2
		c.TrustedProxies = []string{"127.0.0.1/32"}
	})
	from := func(addr, email string, want int) string {
		t.Helper()
		w := newWebUser(t, h)
		fwd := http.Header{"X-Forwarded-For": {addr}}
		w.doWith(http.MethodGet, "/login/forgot", nil, fwd)
		status, _, body := w.doWith(http.MethodPost, "/login/forgot", url.Values{"csrf": {w.csrf}, "email": {email}}, fwd)
		if status != want {
			t.Fatalf("%s for %s: %d, want %d", addr, email, status, want)
		}
		return body
	}
	for _, email := range []string{resetUser, "nobody@passwords.example"} {
		from("203.0.113.1", email, http.StatusOK)
		from("203.0.113.2", email, http.StatusOK)
		if body := from("203.0.113.3", email, http.StatusTooManyRequests); !strings.Contains(body, "Too many requests for a new password") {
			t.Errorf("a third request for %s: no refusal shown", email)
		}
	}
	// 20 an hour per address: 2 spent above by 203.0.113.1
	for i := range 18 {
		from("203.0.113.1", "someone-"+string(rune('a'+i))+"@passwords.example", http.StatusOK)
	}
	from("203.0.113.1", "someone-z@passwords.example", http.StatusTooManyRequests)
	if n := len(mails(t, smtp, 2)); n != 2 {
		t.Errorf("%d emails sent, want 2 (to the account, twice)", n)
	}
}

// silentServer accepts connections and never answers on them (a mail
// server that hangs), until the test ends; it returns its address.
func silentServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		for _, c := range conns {
			c.Close()
		}
	})
	return ln.Addr().String()
}

package app_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/tally-analytics/tally/internal/accounts"
	"github.com/tally-analytics/tally/pkg/api"
)

// An account's wrong passwords are bounded whatever the client addresses:
// with TALLY_LOGIN_ATTEMPTS 2 (per email and address), 6 wrong passwords in
// 5 minutes from three addresses end the account's passwords, the right
// one from a fourth address too, on the API (429 too_many_attempts with
// Retry-After, in the envelope) and on the dashboard (429, the login page
// saying why), until the first wrong one is 5 minutes old. Another
// account is not held back, and a new password is not either: the wrong
// ones were guesses at the old one.
func TestLoginWrongPasswordsBoundPerAccount(t *testing.T) {
	h := newHarnessWith(t, testenvConfigWith(t, func(c *configT) {
		c.TrustedProxies, c.LoginAttempts = []string{"127.0.0.1/32"}, 2
	}))
	ctx := context.Background()
	wrong := api.LoginRequest{Email: h.email, Password: "Winter2026!"}
	right := api.LoginRequest{Email: h.email, Password: password}
	t0 := h.clock.Now()
	addr := 0
	next := func() string { addr++; return fmt.Sprintf("198.51.100.%d", addr) }
	guess := func(n int) {
		t.Helper()
		for i := range n {
			a := next()
			for range 2 { // the login limit of each email and address
				if status, _, code := apiLoginWith(t, h, a, wrong); status != http.StatusUnauthorized || code != "invalid_credentials" {
					t.Fatalf("wrong password %d from %s: %d %s, want 401 invalid_credentials", i+1, a, status, code)
				}
			}
		}
	}
	guess(3)
	status, retry, code := apiLoginWith(t, h, next(), right)
	if status != http.StatusTooManyRequests || code != "too_many_attempts" || retry != "300" {
		t.Fatalf("the right password after 6 wrong ones: %d %s, Retry-After %q; want 429 too_many_attempts, 300", status, code, retry)
	}

	w := newWebUser(t, h)
	forwarded := http.Header{"X-Forwarded-For": {next()}}
	w.doWith(http.MethodGet, "/login", nil, forwarded)
	h.clock.Set(t0.Add(2 * time.Minute))
	status, _, body := w.doWith(http.MethodPost, "/login", url.Values{"email": {h.email}, "password": {password}, "csrf": {w.csrf}}, forwarded)
	if status != http.StatusTooManyRequests || w.header.Get("Retry-After") != "180" || !strings.Contains(body, "Too many failed logins for this account") ||
		!strings.Contains(body, "3 minutes") {
		t.Fatalf("the dashboard's login: %d, Retry-After %q; want 429 for 3 minutes:\n%.2000s", status, w.header.Get("Retry-After"), body)
	}
	if _, ok := w.cookies["tally_session"]; ok {
		t.Fatal("a session was started")
	}

	other := api.LoginRequest{Email: "other@example.com", Password: password}
	if _, err := h.app.Accounts.CreateUser(ctx, accounts.NewUser{Email: other.Email, Password: password, Name: "Other"}); err != nil {
		t.Fatal(err)
	}
	if status, _, code := apiLoginWith(t, h, next(), other); status != http.StatusOK {
		t.Errorf("another account: %d %s, want 200", status, code)
	}

	h.clock.Set(t0.Add(5 * time.Minute))
	if status, _, code := apiLoginWith(t, h, next(), right); status != http.StatusOK {
		t.Fatalf("the right password once the first wrong one is 5 minutes old: %d %s, want 200", status, code)
	}
	guess(3)
	if status, _, _ := apiLoginWith(t, h, next(), right); status != http.StatusTooManyRequests {
		t.Fatalf("the right password after 6 more wrong ones: %d, want 429", status)
	}
	if _, err := h.app.Passwords.Set(ctx, h.email, "a brand new password"); err != nil {
		t.Fatal(err)
	}
	if status, _, code := apiLoginWith(t, h, next(), api.LoginRequest{Email: h.email, Password: "a brand new password"}); status != http.StatusOK {
		t.Errorf("the new password: %d %s, want 200", status, code)
	}
}

package app_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/tally-analytics/tally/pkg/api"
)

// apiChangeWith sends POST /api/v1/auth/password with a login token, as
// the client at addr (the server trusts the loopback's X-Forwarded-For),
// and returns the status, the Retry-After header and the error's code and
// field.
func apiChangeWith(t *testing.T, h *harness, addr, token, current, next string) (status int, retryAfter, code, field string) {
	t.Helper()
	status, retryAfter, e := postFrom(t, h, "/api/v1/auth/password", addr, token,
		api.ChangePasswordRequest{CurrentPassword: current, NewPassword: next})
	return status, retryAfter, e.Code, e.Field
}

// A user's current password, given again to change it (API and dashboard)
// or to turn 2FA on, counts against the account's bound on wrong
// passwords, as a login's does: with TALLY_LOGIN_ATTEMPTS 2, two wrong
// ones through each of the three forms, from three addresses, reach the
// bound (6 in 5 minutes); the right one is then refused unchecked on each
// (429 too_many_attempts with Retry-After), and at login, until the first
// wrong one is 5 minutes old. The password is not changed meanwhile.
func TestCurrentPasswordsBoundPerAccount(t *testing.T) {
	h := newHarnessWith(t, testenvConfigWith(t, func(c *configT) {
		c.TrustedProxies, c.LoginAttempts = []string{"127.0.0.1/32"}, 2
	}))
	token, err := h.loginToken(h.email, password)
	if err != nil {
		t.Fatal(err)
	}
	w := newWebUser(t, h)
	w.login(h.email)
	w.expect(http.MethodGet, "/account/security", nil, http.StatusOK) // its forms' CSRF token
	t0 := h.clock.Now()
	addr := 0
	next := func() string { addr++; return fmt.Sprintf("198.51.100.%d", addr) }
	form := func(path, field, pw, addr string) (int, string) {
		t.Helper()
		values := url.Values{"csrf": {w.csrf}, field: {pw}}
		if field == "current_password" {
			values.Set("new_password", newPassword)
			values.Set("confirm_password", newPassword)
		}
		status, _, body := w.doWith(http.MethodPost, path, values, http.Header{"X-Forwarded-For": {addr}})
		return status, body
	}
	forms := []struct{ path, field string }{
		{"/account/security/password", "current_password"},
		{"/account/security/setup", "password"},
	}

	a := next()
	for i := range 2 {
		if status, _, code, field := apiChangeWith(t, h, a, token, "Winter2026!", newPassword); status != http.StatusBadRequest ||
			code != "invalid_request" || field != "current_password" {
			t.Fatalf("wrong current password %d through the API: %d %s %s, want 400 current_password", i+1, status, code, field)
		}
	}
	for _, f := range forms {
		a := next()
		for i := range 2 {
			if status, body := form(f.path, f.field, "Winter2026!", a); status != http.StatusBadRequest || !strings.Contains(body, "wrong password") {
				t.Fatalf("wrong password %d on %s: %d, want 400 saying so:\n%.2000s", i+1, f.path, status, body)
			}
		}
	}

	h.clock.Set(t0.Add(time.Minute))
	status, retry, code, _ := apiChangeWith(t, h, next(), token, password, newPassword)
	if status != http.StatusTooManyRequests || code != "too_many_attempts" || retry != "240" {
		t.Errorf("the right current password through the API after 6 wrong ones: %d %s, Retry-After %q; want 429 too_many_attempts, 240",
			status, code, retry)
	}
	for _, f := range forms {
		status, body := form(f.path, f.field, password, next())
		if status != http.StatusTooManyRequests || w.header.Get("Retry-After") != "240" || !strings.Contains(body, "too many wrong passwords") {
			t.Errorf("the right password on %s after 6 wrong ones: %d, Retry-After %q; want 429 saying so, 240:\n%.2000s",
				f.path, status, w.header.Get("Retry-After"), body)
		}
	}
	if status, _, code := apiLoginWith(t, h, next(), api.LoginRequest{Email: h.email, Password: password}); status != http.StatusTooManyRequests ||
		code != "too_many_attempts" {
		t.Errorf("a login with the right password: %d %s, want 429 too_many_attempts", status, code)
	}

	h.clock.Set(t0.Add(5 * time.Minute))
	if status, _, code, _ := apiChangeWith(t, h, next(), token, password, newPassword); status != http.StatusOK {
		t.Errorf("the right current password once the first wrong one is 5 minutes old: %d %s, want 200", status, code)
	}
}

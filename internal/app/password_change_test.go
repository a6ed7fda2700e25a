package app_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/pkg/client"
)

// newPassword is the password the tests change to (the log scan looks for
// "correct horse battery" in the run's log).
const newPassword = "correct horse battery, again"

// dashboardSessions counts the user's dashboard sessions in Postgres.
func (h *harness) dashboardSessions(email string) int {
	h.t.Helper()
	var n int
	if err := h.app.PG.QueryRow(context.Background(), `SELECT count(*) FROM dashboard_sessions s JOIN users u ON u.id = s.user_id
		WHERE lower(u.email) = lower($1)`, email).Scan(&n); err != nil {
		h.t.Fatal(err)
	}
	return n
}

// loginToken logs email in through the API with pw.
func (h *harness) loginToken(email, pw string) (string, error) {
	res, err := h.client("").Login(context.Background(), email, pw)
	return res.Token, err
}

// apiStatus is the status of GET /api/v1/auth/verify with a credential.
func (h *harness) apiStatus(credential string) int {
	h.t.Helper()
	_, err := h.client(credential).Verify(context.Background())
	var e *client.Error
	switch {
	case err == nil:
		return http.StatusOK
	case errors.As(err, &e):
		return e.Status
	}
	h.t.Fatal(err)
	return 0
}

// The Security page changes the password: the current one needed (a wrong
// one refused, and counted against the login limits, as a login's), the
// new one under the rule of account creation, the two new ones alike.
// Done, the session that changed it goes on; the user's other sessions
// and every login token end; the API key still works; the old password
// no longer logs in, the new one does.
func TestPasswordChangeOnTheSecurityPage(t *testing.T) {
	h := newHarness(t) // 10 login attempts per email and address in 15 minutes
	ctx := context.Background()
	w, other := newWebUser(t, h), newWebUser(t, h)
	w.login(h.email)                              // attempt 1
	other.login(h.email)                          // 2
	token, err := h.loginToken(h.email, password) // 3
	if err != nil {
		t.Fatal(err)
	}
	body := w.expect(http.MethodGet, "/account/security", nil, http.StatusOK)
	if !strings.Contains(body, `action="/account/security/password"`) || !strings.Contains(body, `autocomplete="new-password"`) {
		t.Fatalf("the Security page has no password form:\n%s", body)
	}
	change := func(current, next, confirm string, want int) string {
		t.Helper()
		return w.expect(http.MethodPost, "/account/security/password", url.Values{"csrf": {w.csrf}, "current_password": {current},
			"new_password": {next}, "confirm_password": {confirm}}, want)
	}
	if body := change("not the password", newPassword, newPassword, http.StatusBadRequest); !strings.Contains(body, "wrong password") {
		t.Errorf("a wrong current password: no refusal shown:\n%s", body)
	}
	if body := change(password, "short", "short", http.StatusBadRequest); !strings.Contains(body, "a password must be 8 to 256 characters") {
		t.Errorf("a new password of 5 characters: the rule's refusal not shown:\n%s", body)
	}
	if body := change(password, newPassword, newPassword+"!", http.StatusBadRequest); !strings.Contains(body, "the two new passwords differ") {
		t.Errorf("two different new passwords: no refusal shown:\n%s", body)
	}
	// none of them changed anything
	if _, err := h.loginToken(h.email, password); err != nil { // 7
		t.Fatalf("the refused changes changed the password: %v", err)
	}
	if n := h.dashboardSessions(h.email); n != 2 {
		t.Fatalf("the refused changes ended sessions: %d left, want 2", n)
	}

	status, loc, _ := w.do(http.MethodPost, "/account/security/password", url.Values{"csrf": {w.csrf}, "current_password": {password},
		"new_password": {newPassword}, "confirm_password": {newPassword}}) // 8
	if status != http.StatusSeeOther || loc != "/account/security?password=changed" {
		t.Fatalf("the change: %d to %q, want 303 to /account/security?password=changed", status, loc)
	}
	if body := w.expect(http.MethodGet, loc, nil, http.StatusOK); !strings.Contains(body, "Your password is changed") {
		t.Error("after the change, the Security page does not say it is changed")
	}
	w.expect(http.MethodGet, "/sites", nil, http.StatusOK) // this session goes on
	if status, loc, _ := other.do(http.MethodGet, "/sites", nil); status != http.StatusSeeOther || !strings.HasPrefix(loc, "/login") {
		t.Errorf("another session after the change: %d to %q, want 303 to the login", status, loc)
	}
	if n := h.dashboardSessions(h.email); n != 1 {
		t.Errorf("%d sessions of the user in Postgres after the change, want 1 (the one that changed it)", n)
	}
	if got := h.apiStatus(token); got != http.StatusUnauthorized {
		t.Errorf("a login token of before the change: %d, want 401", got)
	}
	if got := h.apiStatus(h.key); got != http.StatusOK {
		t.Errorf("the API key after the change: %d, want 200", got)
	}
	if _, err := h.loginToken(h.email, password); err == nil { // 9
		t.Error("the old password still logs in")
	}
	fresh, err := h.loginToken(h.email, newPassword) // 10
	if err != nil || h.apiStatus(fresh) != http.StatusOK {
		t.Fatalf("the new password: %v", err)
	}

	// the ten attempts are spent — the wrong, short and differing ones among
	// them: the next try is refused unchecked, with the right password too
	status, _, body = w.do(http.MethodPost, "/account/security/password", url.Values{"csrf": {w.csrf}, "current_password": {newPassword},
		"new_password": {password}, "confirm_password": {password}})
	if status != http.StatusTooManyRequests || w.header.Get("Retry-After") == "" || !strings.Contains(body, "Too many attempts") {
		t.Fatalf("an 11th attempt: %d (Retry-After %q), want 429 saying so", status, w.header.Get("Retry-After"))
	}
	if _, err := h.app.Auth.Login(ctx, auth.Credentials{Email: h.email, Password: newPassword}); err != nil {
		t.Errorf("the refused attempt changed the password: %v", err)
	}
}

// POST /api/v1/auth/password takes a login token only, the current
// password and a new one under the rule; done, every login token of the
// user ends — the caller's too, and on every server at once — and the
// answer is a new one; the user's dashboard sessions end; the API key
// goes on.
func TestPasswordChangeThroughTheAPI(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	w := newWebUser(t, h)
	w.login(h.email)
	first, err := h.loginToken(h.email, password)
	if err != nil {
		t.Fatal(err)
	}
	second, err := h.loginToken(h.email, password)
	if err != nil {
		t.Fatal(err)
	}
	refused := func(credential, current, next string, status int, code, field string) {
		t.Helper()
		_, err := h.client(credential).ChangePassword(ctx, current, next)
		var e *client.Error
		if !errors.As(err, &e) || e.Status != status || e.Code != code || e.Field != field {
			t.Fatalf("change with %q → %q: %v; want %d %s (field %q)", current, next, err, status, code, field)
		}
	}
	refused(h.key, password, newPassword, http.StatusForbidden, "forbidden", "")
	refused(first, "not the password", newPassword, http.StatusBadRequest, "invalid_request", "current_password")
	refused(first, "", newPassword, http.StatusBadRequest, "invalid_request", "current_password")
	refused(first, password, "short", http.StatusBadRequest, "invalid_request", "new_password")
	if got := h.apiStatus(first); got != http.StatusOK {
		t.Fatalf("the refused changes ended the token: %d", got)
	}
	other := h.secondInstance() // which caches what the second token is
	if got := other.apiStatus(second); got != http.StatusOK {
		t.Fatalf("a token on another server: %d", got)
	}

	res, err := h.client(first).ChangePassword(ctx, password, newPassword)
	if err != nil || res.Token == "" || res.User.Email != h.email || !res.ExpiresAt.After(h.clock.Now()) {
		t.Fatalf("the change: %+v, %v; want a new login token of the user", res, err)
	}
	for name, tok := range map[string]string{"the caller's": first, "another": second} {
		if got := h.apiStatus(tok); got != http.StatusUnauthorized {
			t.Errorf("%s login token of before the change: %d, want 401", name, got)
		}
	}
	if got := other.apiStatus(second); got != http.StatusUnauthorized {
		t.Errorf("another server, which had the token cached: %d, want 401", got)
	}
	if got := h.apiStatus(res.Token); got != http.StatusOK {
		t.Errorf("the token the change answered with: %d, want 200", got)
	}
	if got := h.apiStatus(h.key); got != http.StatusOK {
		t.Errorf("the API key after the change: %d, want 200", got)
	}
	if status, loc, _ := w.do(http.MethodGet, "/sites", nil); status != http.StatusSeeOther || !strings.HasPrefix(loc, "/login") {
		t.Errorf("a dashboard session after the change: %d to %q, want 303 to the login", status, loc)
	}
	if _, err := h.loginToken(h.email, password); err == nil {
		t.Error("the old password still logs in")
	}
	if _, err := h.loginToken(h.email, newPassword); err != nil {
		t.Errorf("the new password: %v", err)
	}
	// with the new token, the password changes again (its generation is the current one)
	if _, err := h.client(res.Token).ChangePassword(ctx, newPassword, password); err != nil {
		t.Errorf("a second change with the new token: %v", err)
	}
}

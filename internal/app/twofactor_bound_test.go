package app_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/tally-analytics/tally/internal/twofactor"
	"github.com/tally-analytics/tally/pkg/api"
)

// apiLogin is an API login with otp from addr (the harness trusts the
// loopback proxy's X-Forwarded-For): its status, Retry-After and error code.
func apiLogin(t *testing.T, h *harness, addr, otp string) (status int, retryAfter, code string) {
	t.Helper()
	return apiLoginWith(t, h, addr, api.LoginRequest{Email: h.email, Password: password, OTP: otp})
}

// apiLoginWith is apiLogin with a request of its own.
func apiLoginWith(t *testing.T, h *harness, addr string, login api.LoginRequest) (status int, retryAfter, code string) {
	t.Helper()
	status, retryAfter, e := postFrom(t, h, "/api/v1/auth/login", addr, "", login)
	return status, retryAfter, e.Code
}

// postFrom posts body as JSON to path as the client at addr (the harness
// trusts the loopback proxy's X-Forwarded-For), with a bearer token unless
// it is empty, and returns the status, the Retry-After header and the
// error of an answer other than 200.
func postFrom(t *testing.T, h *harness, path, addr, token string, body any) (status int, retryAfter string, e api.ErrorDetail) {
	t.Helper()
	b, _ := json.Marshal(body)
	req, err := http.NewRequest(http.MethodPost, h.srv.URL+path, bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Forwarded-For", addr)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var env api.Error
	if res.StatusCode != http.StatusOK {
		if err := json.NewDecoder(res.Body).Decode(&env); err != nil {
			t.Fatalf("a %d answer without the error envelope: %v", res.StatusCode, err)
		}
	}
	return res.StatusCode, res.Header.Get("Retry-After"), env.Error
}

// behindProxy is a configuration whose server trusts X-Forwarded-For from
// the loopback address, so that a test can log in from many addresses,
// with login limits well above the tries of these tests: what refuses them
// is the bound on wrong codes.
func behindProxy(t *testing.T) *configT {
	return testenvConfigWith(t, func(c *configT) { c.TrustedProxies, c.LoginAttempts = []string{"127.0.0.1/32"}, 30 })
}

// Five wrong codes from five addresses (so that no per-address limit is
// near) end the account's codes: a right one from a sixth address is
// refused, until the first wrong one is 15 minutes old. The right code
// then works, is not counted, and wipes nothing: one more wrong code ends
// them again, until the second wrong one is 15 minutes old.
func TestTwoFactorWrongCodesBoundPerAccount(t *testing.T) {
	h := newHarnessWith(t, behindProxy(t))
	owner := newWebUser(t, h)
	owner.login(h.email)
	secret, codes := enableTwoFactor(t, h, owner)

	t0 := h.clock.Now()
	for i, addr := range []string{"203.0.113.1", "203.0.113.2", "198.51.100.3", "2001:db8:1::4", "2001:db8:2::5"} {
		h.clock.Set(t0.Add(time.Duration(i) * time.Minute)) // +0 … +4 min
		otp := h.wrongCode(secret)
		if i == 4 {
			otp = "2222-3333-4444-5555" // a wrong recovery code counts as well
		}
		if status, _, code := apiLogin(t, h, addr, otp); status != http.StatusUnauthorized || code != "invalid_credentials" {
			t.Fatalf("wrong code %d from %s: %d %q, want 401 invalid_credentials", i+1, addr, status, code)
		}
	}
	refused := func(at time.Duration, otp, wantRetry string) {
		t.Helper()
		h.clock.Set(t0.Add(at))
		if otp == "" {
			otp = h.code(secret)
		}
		status, retry, code := apiLogin(t, h, "192.0.2.6", otp)
		if status != http.StatusTooManyRequests || code != "too_many_attempts" || retry != wantRetry {
			t.Fatalf("a right code at +%v: %d %q, Retry-After %q; want 429 too_many_attempts, Retry-After %s",
				at, status, code, retry, wantRetry)
		}
	}
	// the first wrong code (+0) leaves the window at +15 min
	refused(5*time.Minute, "", "600")
	refused(10*time.Minute, codes[0], "300") // a right recovery code too, and it is not spent
	refused(15*time.Minute-time.Second, "", "1")

	h.clock.Set(t0.Add(15 * time.Minute))
	if status, _, code := apiLogin(t, h, "192.0.2.6", h.code(secret)); status != http.StatusOK {
		t.Fatalf("a right code once the first wrong one is 15 minutes old: %d %q, want 200", status, code)
	}
	// +1 … +4 min are in the window still, the right code is not: a fifth
	h.nextStep()
	if status, _, _ := apiLogin(t, h, "192.0.2.7", h.wrongCode(secret)); status != http.StatusUnauthorized {
		t.Fatalf("a wrong code with four in the window: %d, want 401", status)
	}
	// the wrong code of +1 min leaves the window at +16 min, 30 s after +15.5 min
	refused(15*time.Minute+twofactor.Period, "", "30")
	h.clock.Set(t0.Add(16 * time.Minute))
	if status, _, _ := apiLogin(t, h, "192.0.2.6", codes[0]); status != http.StatusOK {
		t.Fatalf("the recovery code refused while codes were bounded: %d at +16 min, want 200 (it was not spent)", status)
	}
}

// Every server counts an account's wrong codes in the same place: three on
// one (API), two on another (the dashboard's code step), and both refuse
// the right code; the dashboard says so on the code step, and logs nobody in.
func TestTwoFactorWrongCodesSharedByServers(t *testing.T) {
	h := newHarnessWith(t, behindProxy(t))
	owner := newWebUser(t, h)
	owner.login(h.email)
	secret, _ := enableTwoFactor(t, h, owner)
	other := h.secondInstance()

	t0 := h.clock.Now()
	for i := range 3 {
		h.clock.Set(t0.Add(time.Duration(i) * time.Minute)) // +0, +1, +2 min
		if status, _, _ := apiLogin(t, h, "203.0.113.9", h.wrongCode(secret)); status != http.StatusUnauthorized {
			t.Fatalf("wrong code %d on the first server: %d, want 401", i+1, status)
		}
	}
	h.clock.Set(t0.Add(3 * time.Minute))
	w := newWebUser(t, other)
	w.do(http.MethodGet, "/login", nil)
	w.expect(http.MethodPost, "/login", url.Values{"email": {h.email}, "password": {password}, "csrf": {w.csrf}}, http.StatusSeeOther)
	for i := range 2 {
		h.clock.Set(t0.Add(time.Duration(3+i) * time.Minute)) // +3, +4 min
		body := w.expect(http.MethodPost, "/login/code", url.Values{"code": {h.wrongCode(secret)}, "csrf": {w.csrf}}, http.StatusUnauthorized)
		if !strings.Contains(body, "not right") {
			t.Fatalf("wrong code %d on the second server does not say so", i+4)
		}
	}

	h.clock.Set(t0.Add(5 * time.Minute))
	body := w.expect(http.MethodPost, "/login/code", url.Values{"code": {h.code(secret)}, "csrf": {w.csrf}}, http.StatusTooManyRequests)
	const message = "Too many wrong codes for this account: no code is accepted for the next 10 minutes. " +
		"If they were not yours, someone else may know your password."
	if !strings.Contains(body, message) || w.header.Get("Retry-After") != "600" || w.cookies["tally_session"] != nil {
		t.Fatalf("the right code past the bound: Retry-After %q, session %v, want 600 and none, and the message %q in:\n%s",
			w.header.Get("Retry-After"), w.cookies["tally_session"] != nil, message, body)
	}
	if status, retry, code := apiLogin(t, h, "198.51.100.10", h.code(secret)); status != http.StatusTooManyRequests ||
		code != "too_many_attempts" || retry != "600" {
		t.Fatalf("the right code on the first server: %d %q, Retry-After %q; want 429 too_many_attempts, 600", status, code, retry)
	}
}

// The Security page's forms that take a code count their wrong codes
// against the same bound as the logins: two wrong ones for new recovery
// codes, two turning 2FA off and one at the login; then neither form
// accepts the right code (2FA stays on), and says why.
func TestTwoFactorSecurityFormsCountWrongCodes(t *testing.T) {
	h := newHarnessWith(t, behindProxy(t))
	w := newWebUser(t, h)
	w.login(h.email)
	secret, _ := enableTwoFactor(t, h, w)

	t0 := h.clock.Now()
	regenerate := func(code string, want int) string {
		t.Helper()
		return w.expect(http.MethodPost, "/account/security/recovery-codes", url.Values{"csrf": {w.csrf}, "code": {code}}, want)
	}
	disable := func(code string, want int) string {
		t.Helper()
		return w.expect(http.MethodPost, "/account/security/disable", url.Values{"csrf": {w.csrf}, "password": {password}, "code": {code}}, want)
	}
	regenerate(h.wrongCode(secret), http.StatusBadRequest)
	regenerate("2222-3333-4444-5555", http.StatusBadRequest) // the form takes a one-time code only: wrong
	h.clock.Set(t0.Add(time.Minute))
	disable(h.wrongCode(secret), http.StatusBadRequest)
	disable("2222-3333-4444-5555", http.StatusBadRequest)
	h.clock.Set(t0.Add(2 * time.Minute))
	if status, _, _ := apiLogin(t, h, "203.0.113.11", h.wrongCode(secret)); status != http.StatusUnauthorized {
		t.Fatalf("a wrong code at the login: %d, want 401", status)
	}

	// the first two (+0) leave the window at +15 min
	h.clock.Set(t0.Add(3 * time.Minute))
	const message = "too many wrong codes for this account (5 in 15 minutes): no code is accepted for the next 12 minutes"
	for form, body := range map[string]string{
		"disable":    disable(h.code(secret), http.StatusTooManyRequests),
		"regenerate": regenerate(h.code(secret), http.StatusTooManyRequests),
	} {
		if !strings.Contains(body, message) || w.header.Get("Retry-After") != "720" {
			t.Errorf("%s past the bound: Retry-After %q, want 720 and %q in:\n%s", form, w.header.Get("Retry-After"), message, body)
		}
	}
	if !h.twoFactorOn(h.userID) {
		t.Fatal("past the bound, 2FA was turned off")
	}
	h.clock.Set(t0.Add(15 * time.Minute))
	disable(h.code(secret), http.StatusSeeOther)
	if h.twoFactorOn(h.userID) {
		t.Fatal("the right code once the bound had passed did not turn 2FA off")
	}
}

// While Redis cannot keep the bound, no code is checked: a login that
// needs one is 503 with a Retry-After (the login limits meanwhile let it
// through), and works again once Redis is back.
func TestTwoFactorCodesWaitForRedis(t *testing.T) {
	cfg := behindProxy(t)
	stores := proxyStores(t, cfg)
	h := newHarnessWith(t, cfg)
	owner := newWebUser(t, h)
	owner.login(h.email)
	secret, _ := enableTwoFactor(t, h, owner)

	stores.redis.Down()
	status, retry, code := apiLogin(t, h, "203.0.113.12", h.code(secret))
	stores.redis.Up()
	if status != http.StatusServiceUnavailable || code != "service_unavailable" || retry != "5" {
		t.Fatalf("a right code with Redis down: %d %q, Retry-After %q; want 503 service_unavailable, 5", status, code, retry)
	}
	if status, _, code := apiLogin(t, h, "203.0.113.12", h.code(secret)); status != http.StatusOK {
		t.Fatalf("the same code once Redis is back: %d %q, want 200 (it was not spent)", status, code)
	}
}

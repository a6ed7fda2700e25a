package app_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/twofactor"
)

var (
	secretShown        = regexp.MustCompile(`<code id="totp-secret" data-secret>([A-Z2-7]+)</code>`)
	recoveryCodesShown = regexp.MustCompile(`\b[2-9A-HJ-NP-Z]{4}-[2-9A-HJ-NP-Z]{4}-[2-9A-HJ-NP-Z]{4}-[2-9A-HJ-NP-Z]{4}\b`)
)

// code is secret's code at the harness's clock.
func (h *harness) code(secret string) string {
	h.t.Helper()
	c, err := twofactor.Code(secret, h.clock.Now())
	if err != nil {
		h.t.Fatal(err)
	}
	return c
}

// nextStep moves the clock to the next time step, whose code no login
// used yet.
func (h *harness) nextStep() { h.clock.Advance(twofactor.Period) }

// wrongCode is a six-digit code that is none of secret's around now.
func (h *harness) wrongCode(secret string) string {
	h.t.Helper()
	near := map[string]bool{}
	for _, d := range []time.Duration{-twofactor.Period, 0, twofactor.Period} {
		c, _ := twofactor.Code(secret, h.clock.Now().Add(d))
		near[c] = true
	}
	for _, c := range []string{"000000", "111111", "222222", "333333"} {
		if !near[c] {
			return c
		}
	}
	h.t.Fatal("no wrong code")
	return ""
}

// twoFactorOn reports whether the user's 2FA is on, from the store.
func (h *harness) twoFactorOn(user model.UserID) bool {
	h.t.Helper()
	st, err := h.app.TwoFactor.Status(context.Background(), user)
	if err != nil {
		h.t.Fatal(err)
	}
	return st.Enabled
}

// enableTwoFactor turns the logged-in web user's 2FA on through the
// Security page and returns its secret and recovery codes.
func enableTwoFactor(t *testing.T, h *harness, w *webUser) (secret string, codes []string) {
	t.Helper()
	return enableTwoFactorWith(t, h, w, password)
}

// enableTwoFactorWith is enableTwoFactor for a user whose password is pw.
func enableTwoFactorWith(t *testing.T, h *harness, w *webUser, pw string) (secret string, codes []string) {
	t.Helper()
	w.expect(http.MethodGet, "/account/security", nil, http.StatusOK)
	body := w.expect(http.MethodPost, "/account/security/setup", url.Values{"csrf": {w.csrf}, "password": {pw}}, http.StatusOK)
	m := secretShown.FindStringSubmatch(body)
	if m == nil || !strings.Contains(body, `src="data:image/png;base64,`) || !strings.Contains(body, "otpauth://totp/") {
		t.Fatalf("the setup page shows no secret, QR code or otpauth URI:\n%s", body)
	}
	secret = m[1]
	body = w.expect(http.MethodPost, "/account/security/confirm", url.Values{"csrf": {w.csrf}, "code": {h.code(secret)}}, http.StatusCreated)
	codes = recoveryCodesShown.FindAllString(body, -1)
	if len(codes) != twofactor.RecoveryCodes {
		t.Fatalf("after confirming, %d recovery codes shown, want %d", len(codes), twofactor.RecoveryCodes)
	}
	h.nextStep() // the confirming code is used
	return secret, codes
}

// Turning 2FA on needs a current code of the new secret: a wrong one
// leaves it off, with the same secret shown again. The secret is stored
// sealed; the recovery codes are shown once.
func TestTwoFactorEnableNeedsACode(t *testing.T) {
	h := newHarness(t)
	w := newWebUser(t, h)
	w.login(h.email)
	if body := w.expect(http.MethodGet, "/sites", nil, http.StatusOK); !strings.Contains(body, `href="/account/security"`) {
		t.Fatal("the account menu has no Security link")
	}
	// a stolen session cannot put its own second factor on the account
	if body := w.expect(http.MethodPost, "/account/security/setup", url.Values{"csrf": {w.csrf}, "password": {"not it"}},
		http.StatusBadRequest); secretShown.MatchString(body) || !strings.Contains(body, "wrong password") {
		t.Fatalf("setup with a wrong password showed a secret or no error:\n%s", body)
	}
	body := w.expect(http.MethodPost, "/account/security/setup", url.Values{"csrf": {w.csrf}, "password": {password}}, http.StatusOK)
	secret := secretShown.FindStringSubmatch(body)[1]
	w.expect(http.MethodPost, "/account/security/setup", url.Values{"csrf": {"forged"}}, http.StatusForbidden)
	w.expect(http.MethodPost, "/account/security/confirm", url.Values{"code": {h.code(secret)}}, http.StatusForbidden)

	body = w.expect(http.MethodPost, "/account/security/confirm", url.Values{"csrf": {w.csrf}, "code": {h.wrongCode(secret)}},
		http.StatusBadRequest)
	if h.twoFactorOn(h.userID) {
		t.Fatal("a wrong code turned 2FA on")
	}
	if m := secretShown.FindStringSubmatch(body); m == nil || m[1] != secret {
		t.Fatal("after a wrong code, the setup does not show the same secret again")
	}
	// the secret is sealed in Postgres, bound to its user
	var stored string
	if err := h.app.PG.QueryRow(context.Background(), "SELECT secret FROM user_totp WHERE user_id = $1", string(h.userID)).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(stored, secret) || !strings.HasPrefix(stored, "v1:") {
		t.Fatalf("the stored secret %q is not sealed", stored)
	}

	body = w.expect(http.MethodPost, "/account/security/confirm", url.Values{"csrf": {w.csrf}, "code": {h.code(secret)}}, http.StatusCreated)
	if !h.twoFactorOn(h.userID) || len(recoveryCodesShown.FindAllString(body, -1)) != 10 {
		t.Fatal("a right code did not turn 2FA on with 10 recovery codes")
	}
	body = w.expect(http.MethodGet, "/account/security", nil, http.StatusOK)
	if recoveryCodesShown.MatchString(body) || strings.Contains(body, secret) || !strings.Contains(body, `data-state="on"`) {
		t.Fatal("the Security page shows the secret or the recovery codes again, or not that 2FA is on")
	}
	var hashes int
	if err := h.app.PG.QueryRow(context.Background(), "SELECT count(*) FROM user_recovery_codes WHERE user_id = $1 AND length(code_hash) = 32",
		string(h.userID)).Scan(&hashes); err != nil || hashes != 10 {
		t.Fatalf("%d recovery code hashes stored (%v), want 10", hashes, err)
	}
	// the session that turned it on goes on
	w.expect(http.MethodGet, "/sites", nil, http.StatusOK)
}

// A dashboard login with 2FA: password, then code, then the dashboard. The
// step between is no login; a wrong code is refused; a code works once; a
// recovery code works once.
func TestTwoFactorWebLogin(t *testing.T) {
	// more attempts than the default 10, which this test's logins pass
	h := newHarnessWith(t, testenvConfigWith(t, func(c *configT) { c.LoginAttempts = 30 }))
	owner := newWebUser(t, h)
	owner.login(h.email)
	secret, codes := enableTwoFactor(t, h, owner)

	passwordStep := func(w *webUser, next string) {
		t.Helper()
		w.do(http.MethodGet, "/login", nil)
		status, loc, _ := w.do(http.MethodPost, "/login", url.Values{"email": {h.email}, "password": {password}, "csrf": {w.csrf},
			"next": {next}})
		if status != http.StatusSeeOther || !strings.HasPrefix(loc, "/login/code") || w.cookies["tally_session"] != nil {
			t.Fatalf("the password of a 2FA account: %d to %q (session %v), want 303 to the code step and no session", status, loc,
				w.cookies["tally_session"] != nil)
		}
		w.expect(http.MethodGet, loc, nil, http.StatusOK)
	}
	codeStep := func(w *webUser, code string, want int) string {
		t.Helper()
		status, loc, body := w.do(http.MethodPost, "/login/code", url.Values{"code": {code}, "csrf": {w.csrf}, "next": {"/account/keys"}})
		if status != want {
			t.Fatalf("code step: %d (to %q), want %d", status, loc, want)
		}
		return loc + body
	}

	w := newWebUser(t, h)
	passwordStep(w, "/account/keys")
	// waiting for the code is not being logged in
	if _, loc, _ := w.do(http.MethodGet, "/sites", nil); !strings.HasPrefix(loc, "/login") {
		t.Fatalf("a login waiting for its code opened /sites (to %q)", loc)
	}
	if got := codeStep(w, h.wrongCode(secret), http.StatusUnauthorized); !strings.Contains(got, "not right") {
		t.Fatal("a wrong code does not say so")
	}
	if got := codeStep(w, h.code(secret), http.StatusSeeOther); got != "/account/keys" {
		t.Fatalf("the right code went to %q, want /account/keys", got)
	}
	w.expect(http.MethodGet, "/sites", nil, http.StatusOK)
	if w.cookies["tally_login_challenge"] != nil {
		t.Error("the challenge cookie outlives the login")
	}

	// the same code again, in its window, is refused
	replay := h.code(secret)
	again := newWebUser(t, h)
	passwordStep(again, "")
	codeStep(again, replay, http.StatusUnauthorized)
	h.nextStep()
	codeStep(again, h.code(secret), http.StatusSeeOther)

	// a recovery code works once (dashes, spaces and case do not matter)
	rc := newWebUser(t, h)
	passwordStep(rc, "")
	codeStep(rc, " "+strings.ToLower(strings.ReplaceAll(codes[0], "-", " "))+" ", http.StatusSeeOther)
	rc2 := newWebUser(t, h)
	passwordStep(rc2, "")
	codeStep(rc2, codes[0], http.StatusUnauthorized)
	codeStep(rc2, codes[1], http.StatusSeeOther)
}

// The code step ends five minutes after the password (by the service's
// clock); a used challenge does not start a second session.
func TestTwoFactorLoginStepExpires(t *testing.T) {
	h := newHarness(t)
	owner := newWebUser(t, h)
	owner.login(h.email)
	secret, _ := enableTwoFactor(t, h, owner)

	w := newWebUser(t, h)
	w.do(http.MethodGet, "/login", nil)
	w.expect(http.MethodPost, "/login", url.Values{"email": {h.email}, "password": {password}, "csrf": {w.csrf}}, http.StatusSeeOther)
	challenge := *w.cookies["tally_login_challenge"]
	if challenge.MaxAge != 300 || !challenge.HttpOnly {
		t.Errorf("challenge cookie %+v: want HttpOnly, 5 minutes", challenge)
	}
	h.clock.Advance(4*time.Minute + 50*time.Second)
	w.expect(http.MethodGet, "/login/code", nil, http.StatusOK)
	h.clock.Advance(10 * time.Second)
	if _, loc, _ := w.do(http.MethodGet, "/login/code", nil); loc != "/login" {
		t.Fatalf("the code step after 5 minutes went to %q, want /login", loc)
	}
	w.cookies["tally_login_challenge"] = &challenge
	body := w.expect(http.MethodPost, "/login/code", url.Values{"code": {h.code(secret)}, "csrf": {w.csrf}}, http.StatusUnauthorized)
	if !strings.Contains(body, "expired") || w.cookies["tally_session"] != nil {
		t.Fatal("a right code after 5 minutes logged in, or did not say the login expired")
	}

	// a challenge used once is gone
	h.nextStep()
	w.do(http.MethodGet, "/login", nil)
	w.expect(http.MethodPost, "/login", url.Values{"email": {h.email}, "password": {password}, "csrf": {w.csrf}}, http.StatusSeeOther)
	used := *w.cookies["tally_login_challenge"]
	w.expect(http.MethodPost, "/login/code", url.Values{"code": {h.code(secret)}, "csrf": {w.csrf}}, http.StatusSeeOther)
	h.nextStep()
	other := newWebUser(t, h)
	other.do(http.MethodGet, "/login", nil)
	other.cookies["tally_login_challenge"] = &used
	other.expect(http.MethodPost, "/login/code", url.Values{"code": {h.code(secret)}, "csrf": {other.csrf}}, http.StatusUnauthorized)
}

// Wrong codes count against the login limit as wrong passwords do.
func TestTwoFactorWrongCodesCountAgainstTheLoginLimit(t *testing.T) {
	h := newHarnessWith(t, testenvConfigWith(t, func(c *configT) { c.LoginAttempts = 4 }))
	owner := newWebUser(t, h)
	owner.login(h.email)                      // attempt 1
	secret, _ := enableTwoFactor(t, h, owner) // 2: its password

	w := newWebUser(t, h)
	w.do(http.MethodGet, "/login", nil)
	w.expect(http.MethodPost, "/login", url.Values{"email": {h.email}, "password": {password}, "csrf": {w.csrf}}, http.StatusSeeOther) // 3
	w.expect(http.MethodPost, "/login/code", url.Values{"code": {h.wrongCode(secret)}, "csrf": {w.csrf}}, http.StatusUnauthorized)     // 4
	body := w.expect(http.MethodPost, "/login/code", url.Values{"code": {h.code(secret)}, "csrf": {w.csrf}}, http.StatusTooManyRequests)
	if !strings.Contains(body, "Too many attempts") || w.header.Get("Retry-After") == "" || w.cookies["tally_session"] != nil {
		t.Fatal("past the login limit, the code step logged in or did not say why")
	}
}

// The Security page's forms that take a password or a code count against
// the login limits too: a stolen session guesses no faster there.
func TestTwoFactorSecurityFormsCountAgainstTheLoginLimit(t *testing.T) {
	h := newHarnessWith(t, testenvConfigWith(t, func(c *configT) { c.LoginAttempts = 3 }))
	w := newWebUser(t, h)
	w.login(h.email)                      // attempt 1
	secret, _ := enableTwoFactor(t, h, w) // 2: its password
	disable := url.Values{"csrf": {w.csrf}, "password": {"wrong password"}, "code": {h.code(secret)}}
	w.expect(http.MethodPost, "/account/security/disable", disable, http.StatusBadRequest) // 3
	w.expect(http.MethodPost, "/account/security/recovery-codes", url.Values{"csrf": {w.csrf}, "code": {h.code(secret)}},
		http.StatusTooManyRequests)
	disable.Set("password", password)
	if body := w.expect(http.MethodPost, "/account/security/disable", disable, http.StatusTooManyRequests); !strings.Contains(body, "Too many attempts") {
		t.Errorf("past the login limit, the disable form did not say why:\n%s", body)
	}
	if !h.twoFactorOn(h.userID) {
		t.Error("past the login limit, 2FA was turned off")
	}
}

// The API's login with 2FA: no otp is otp_required, a wrong one
// invalid_credentials, the right one a token; a recovery code works once.
// Tokens from before 2FA was turned on stay valid.
func TestTwoFactorAPILogin(t *testing.T) {
	// every password and code tried counts against the login limit
	h := newHarnessWith(t, testenvConfigWith(t, func(c *configT) { c.LoginAttempts = 30 }))
	ctx := context.Background()
	anon := h.client("")
	before, err := anon.Login(ctx, h.email, password)
	if err != nil {
		t.Fatal(err)
	}
	owner := newWebUser(t, h)
	owner.login(h.email)
	secret, codes := enableTwoFactor(t, h, owner)

	_, err = anon.Login(ctx, h.email, password)
	wantError(t, err, http.StatusUnauthorized, "otp_required", "")
	_, err = anon.LoginWithOTP(ctx, h.email, password, h.wrongCode(secret))
	wantError(t, err, http.StatusUnauthorized, "invalid_credentials", "")
	_, err = anon.LoginWithOTP(ctx, h.email, "wrong password", h.code(secret))
	wantError(t, err, http.StatusUnauthorized, "invalid_credentials", "")
	_, err = anon.LoginWithOTP(ctx, h.email, password, codes[2]+"X")
	wantError(t, err, http.StatusUnauthorized, "invalid_credentials", "")

	res, err := anon.LoginWithOTP(ctx, h.email, password, h.code(secret))
	if err != nil {
		t.Fatal(err)
	}
	if v, err := h.client(res.Token).Verify(ctx); err != nil || v.UserID != string(h.userID) {
		t.Fatalf("the token of a 2FA login: %+v, %v", v, err)
	}
	_, err = anon.LoginWithOTP(ctx, h.email, password, h.code(secret)) // the same code, same window
	wantError(t, err, http.StatusUnauthorized, "invalid_credentials", "")

	if _, err := anon.LoginWithOTP(ctx, h.email, password, codes[2]); err != nil {
		t.Fatalf("a recovery code: %v", err)
	}
	_, err = anon.LoginWithOTP(ctx, h.email, password, codes[2])
	wantError(t, err, http.StatusUnauthorized, "invalid_credentials", "")

	// a token from before 2FA, and the API key, go on working
	if _, err := h.client(before.Token).Verify(ctx); err != nil {
		t.Errorf("a token issued before 2FA was turned on: %v", err)
	}
	if _, err := h.client(h.key).Verify(ctx); err != nil {
		t.Errorf("an API key after 2FA was turned on: %v", err)
	}
}

// Turning 2FA off needs the password and a code (or a recovery code); new
// recovery codes need a current code and end the old ones. Turning it off
// logs nobody out.
func TestTwoFactorDisableAndRegenerate(t *testing.T) {
	// every password and code tried counts against the login limit
	h := newHarnessWith(t, testenvConfigWith(t, func(c *configT) { c.LoginAttempts = 30 }))
	ctx := context.Background()
	w := newWebUser(t, h)
	w.login(h.email)
	secret, old := enableTwoFactor(t, h, w)

	w.expect(http.MethodPost, "/account/security/recovery-codes", url.Values{"csrf": {w.csrf}, "code": {h.wrongCode(secret)}},
		http.StatusBadRequest)
	w.expect(http.MethodPost, "/account/security/recovery-codes", url.Values{"code": {h.code(secret)}}, http.StatusForbidden)
	body := w.expect(http.MethodPost, "/account/security/recovery-codes", url.Values{"csrf": {w.csrf}, "code": {h.code(secret)}},
		http.StatusOK)
	fresh := recoveryCodesShown.FindAllString(body, -1)
	if len(fresh) != 10 {
		t.Fatalf("%d new recovery codes shown, want 10", len(fresh))
	}
	h.nextStep()
	_, err := h.client("").LoginWithOTP(ctx, h.email, password, old[0])
	wantError(t, err, http.StatusUnauthorized, "invalid_credentials", "")
	if _, err := h.client("").LoginWithOTP(ctx, h.email, password, fresh[0]); err != nil {
		t.Fatalf("a new recovery code: %v", err)
	}

	disable := func(pw, code string, want int) {
		t.Helper()
		w.expect(http.MethodPost, "/account/security/disable", url.Values{"csrf": {w.csrf}, "password": {pw}, "code": {code}}, want)
	}
	disable("wrong password", h.code(secret), http.StatusBadRequest)
	disable(password, h.wrongCode(secret), http.StatusBadRequest)
	disable(password, "", http.StatusBadRequest)
	w.expect(http.MethodPost, "/account/security/disable", url.Values{"password": {password}, "code": {fresh[1]}}, http.StatusForbidden)
	if !h.twoFactorOn(h.userID) {
		t.Fatal("a refused form turned 2FA off")
	}
	disable(password, fresh[1], http.StatusSeeOther)
	if h.twoFactorOn(h.userID) {
		t.Fatal("2FA is still on")
	}
	if body := w.expect(http.MethodGet, "/account/security?disabled=1", nil, http.StatusOK); !strings.Contains(body, `data-state="off"`) {
		t.Fatal("the Security page does not say 2FA is off")
	}
	if _, err := h.client("").Login(ctx, h.email, password); err != nil {
		t.Fatalf("a password login after 2FA was turned off: %v", err)
	}
	var left int
	if err := h.app.PG.QueryRow(ctx, "SELECT count(*) FROM user_recovery_codes WHERE user_id = $1", string(h.userID)).Scan(&left); err != nil || left != 0 {
		t.Fatalf("%d recovery codes left after turning 2FA off (%v)", left, err)
	}
}

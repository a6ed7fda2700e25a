package app_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// Two-factor authentication in a real browser: the Security page in each
// of its states and the login's code step pass the accessibility check,
// and the whole round works — set up, confirm, log out, log in with a code.
func TestTwoFactorInABrowser(t *testing.T) {
	h := newHarness(t)
	b := browser(t)
	run, text := steps(t, b), textOf(t, b)
	location := func() string { return evalJS[string](t, b, "location.pathname + location.search") }

	run("log in", chromedp.Navigate(h.srv.URL+"/login"), chromedp.WaitVisible(css(`#email`)),
		chromedp.SendKeys(css(`#email`), h.email), chromedp.SendKeys(css(`#password`), password),
		chromedp.Submit(css(`#password`)), chromedp.WaitVisible(css(`.site-list`)))
	run("security", chromedp.Click(css(`nav a[href="/account/security"]`)), chromedp.WaitVisible(css(`[data-state=off]`)))
	audit(t, b, "security (off)")
	run("set up", chromedp.SendKeys(css(`#begin-password`), password),
		chromedp.Click(css(`form[action="/account/security/setup"] button`)), chromedp.WaitVisible(css(`img.qr`)))
	audit(t, b, "security (setup)")
	secret := text(`#totp-secret`)
	run("wrong code", chromedp.SendKeys(css(`#confirm-code`), h.wrongCode(secret)), chromedp.Submit(css(`#confirm-code`)),
		chromedp.WaitVisible(css(`.error`)))
	audit(t, b, "security (wrong code)")
	run("confirm", chromedp.SendKeys(css(`#confirm-code`), h.code(secret)), chromedp.Submit(css(`#confirm-code`)),
		chromedp.WaitVisible(css(`#recovery-codes`)))
	if codes := recoveryCodesShown.FindAllString(text(`#recovery-codes`), -1); len(codes) != 10 {
		t.Fatalf("%d recovery codes shown, want 10", len(codes))
	}
	audit(t, b, "security (on, recovery codes)")
	h.nextStep()

	run("log out", chromedp.Click(css(`form.logout button`)), chromedp.WaitVisible(css(`#email`)))
	run("password", chromedp.SendKeys(css(`#email`), h.email), chromedp.SendKeys(css(`#password`), password),
		chromedp.Submit(css(`#password`)), chromedp.WaitVisible(css(`#code`)))
	if u := location(); !strings.HasPrefix(u, "/login/code") {
		t.Fatalf("after the password: %s, want the code step", u)
	}
	audit(t, b, "login code")
	run("code", chromedp.SendKeys(css(`#code`), h.code(secret)), chromedp.Submit(css(`#code`)), chromedp.WaitVisible(css(`.site-list`)))
	run("security, on", chromedp.Navigate(h.srv.URL+"/account/security"), chromedp.WaitVisible(css(`[data-state=on]`)))
	audit(t, b, "security (on)")
}

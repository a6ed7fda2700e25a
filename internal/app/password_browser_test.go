package app_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/tally-analytics/tally/internal/passwords"
)

// Passwords in a real browser: the Security page's change form, refused
// and done, and a forgotten password from the login page's link to the
// new password, every page passing the accessibility checks.
func TestPasswordsInABrowser(t *testing.T) {
	h, smtp, _ := resetHarness(t, nil)
	b := browser(t)
	run, text := steps(t, b), textOf(t, b)
	location := func() string { return evalJS[string](t, b, "location.pathname + location.search") }
	const third = "correct horse battery, third"

	run("log in", chromedp.Navigate(h.srv.URL+"/login"), chromedp.WaitVisible(css(`#email`)),
		chromedp.SendKeys(css(`#email`), resetUser), chromedp.SendKeys(css(`#password`), password),
		chromedp.Submit(css(`#password`)), chromedp.WaitVisible(css(`a[href="/sites/new"]`)))
	run("security", chromedp.Click(css(`nav a[href="/account/security"]`)), chromedp.WaitVisible(css(`#current-password`)))
	audit(t, b, "security (password)")
	change := func(what, current, next string, wait string) {
		t.Helper()
		run(what, chromedp.SendKeys(css(`#current-password`), current), chromedp.SendKeys(css(`#new-password`), next),
			chromedp.SendKeys(css(`#confirm-password`), next), chromedp.Submit(css(`#confirm-password`)), chromedp.WaitVisible(css(wait)))
	}
	change("wrong current password", "not the password", newPassword, `section[aria-labelledby=password-title] .error`)
	if got := text(`section[aria-labelledby=password-title] .error`); !strings.Contains(got, "wrong password") {
		t.Errorf("the refusal says %q", got)
	}
	audit(t, b, "security (password refused)")
	change("change", password, newPassword, `.notice`)
	if got := text(`.notice`); !strings.Contains(got, "Your password is changed") {
		t.Errorf("after the change the page says %q", got)
	}
	audit(t, b, "security (password changed)")

	run("log out", chromedp.Click(css(`form.logout button`)), chromedp.WaitVisible(css(`#email`)))
	run("forgot", chromedp.Click(css(`a[href="/login/forgot"]`)), chromedp.WaitVisible(css(`#email`)))
	audit(t, b, "forgot password")
	run("ask", chromedp.SendKeys(css(`#email`), resetUser), chromedp.Submit(css(`#email`)), chromedp.WaitVisible(css(`[data-state=sent]`)))
	audit(t, b, "forgot password (asked)")

	link := linkIn(t, mails(t, smtp, 1)[0])
	run("the link", chromedp.Navigate(h.srv.URL+passwords.ResetPath+link), chromedp.WaitVisible(css(`#new-password`)))
	audit(t, b, "reset")
	run("two different passwords", chromedp.SendKeys(css(`#new-password`), third), chromedp.SendKeys(css(`#confirm-password`), third+"!"),
		chromedp.Submit(css(`#confirm-password`)), chromedp.WaitVisible(css(`.error`)))
	audit(t, b, "reset (refused)")
	run("set", chromedp.SendKeys(css(`#new-password`), third), chromedp.SendKeys(css(`#confirm-password`), third),
		chromedp.Submit(css(`#confirm-password`)), chromedp.WaitVisible(css(`.notice`)))
	if u := location(); u != "/login?reset=done" {
		t.Errorf("after setting the password: %s, want the login", u)
	}
	audit(t, b, "login (password set)")
	run("log in with it", chromedp.SendKeys(css(`#email`), resetUser), chromedp.SendKeys(css(`#password`), third),
		chromedp.Submit(css(`#password`)), chromedp.WaitVisible(css(`a[href="/sites/new"]`)))
	run("the link again", chromedp.Navigate(h.srv.URL+passwords.ResetPath+link), chromedp.WaitVisible(css(`[data-state=invalid]`)))
	audit(t, b, "reset (link used)")

	// an account with two-factor authentication: its code is asked too
	w := newWebUser(t, h)
	w.login2(resetUser, third)
	enableTwoFactorWith(t, h, w, third)
	askReset(newWebUser(t, h), resetUser, http.StatusOK)
	link = linkIn(t, mails(t, smtp, 2)[1])
	run("a link of an account with 2FA", chromedp.Navigate(h.srv.URL+passwords.ResetPath+link), chromedp.WaitVisible(css(`#code`)))
	audit(t, b, "reset (two-factor)")
}

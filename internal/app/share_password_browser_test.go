package app_test

import (
	"context"
	"html"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/tally-analytics/tally/pkg/client"
)

// A shared link with a password in a real browser: made in the settings,
// whose page marks it; its form passes the accessibility checks the login
// page does, in both colour schemes, refused and not; the right password
// opens the dashboard, every card loaded with the API's numbers. In another
// site's frame the same form opens the embedded dashboard (the cookies a
// frame keeps).
func TestSharePasswordInABrowser(t *testing.T) {
	h := newHarness(t)
	seedShareSite(t, h)
	ctx := context.Background()
	c := h.client(h.key)
	b := browser(t)
	run, text := steps(t, b), textOf(t, b)

	settings := h.srv.URL + "/sites/" + string(h.siteID) + "/settings"
	run("log in", chromedp.Navigate(h.srv.URL+"/login"), chromedp.WaitVisible(css(`#email`)), chromedp.SendKeys(css(`#email`), h.email),
		chromedp.SendKeys(css(`#password`), password), chromedp.Submit(css(`#password`)), chromedp.WaitVisible(css(`a[href="/sites/new"]`)))
	run("a link with a password", chromedp.Navigate(settings), chromedp.WaitVisible(css(`#share-label`)),
		chromedp.SendKeys(css(`#share-label`), "Board"), chromedp.SendKeys(css(`#share-password`), sharePassword),
		chromedp.Submit(css(`#share-label`)), chromedp.WaitVisible(css(`#new-share`)))
	shareURL := text(`#new-share`)
	if !strings.HasPrefix(shareURL, h.srv.URL+"/share/") {
		t.Fatalf("the new link's URL reads %q", shareURL)
	}
	run("the settings", chromedp.Navigate(settings), chromedp.WaitVisible(css(`#shares td[data-password="true"]`)))
	if got := text(`#shares td[data-password]`); got != "password" {
		t.Errorf("the link's password column reads %q", got)
	}
	audit(t, b, "settings with a shared link with a password")
	run("log out", chromedp.Click(css(`form.logout button`)), chromedp.WaitVisible(css(`#email`)))

	run("the form", chromedp.Navigate(shareURL+"?"+shareWeek), chromedp.WaitVisible(css(`#share-password`)))
	if n := evalJS[int](t, b, `document.querySelectorAll('[data-card]').length`); n != 0 {
		t.Fatalf("the locked page has %d cards", n)
	}
	audit(t, b, "shared dashboard's password form")
	run("a wrong password", chromedp.SendKeys(css(`#share-password`), "not the password"), chromedp.Submit(css(`#share-password`)),
		chromedp.WaitVisible(css(`.error`)))
	if got := text(`.error`); got != "Wrong password." {
		t.Errorf("the refusal says %q", got)
	}
	audit(t, b, "shared dashboard's password form (refused)")
	run("the right password", chromedp.SendKeys(css(`#share-password`), sharePassword), chromedp.Submit(css(`#share-password`)),
		chromedp.WaitVisible(css(`.cards`)))
	waitAllCards(t, b)
	week := client.StatsParams{SiteID: string(h.siteID), DateFrom: "2026-05-01", DateTo: "2026-05-07"}
	overview, err := c.Overview(ctx, week)
	if err != nil {
		t.Fatal(err)
	}
	checkMetrics(t, b, overview)

	// in a page of another site (localhost is not 127.0.0.1's site), in a new browser
	frame := shareURL + "?embed=1&" + shareWeek
	host := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(`<!doctype html><html lang="en"><title>host</title><iframe src="` + html.EscapeString(frame) +
			`" title="Our traffic" style="width: 100%; height: 1600px; border: 0;"></iframe></html>`))
	}))
	t.Cleanup(host.Close)
	b = browser(t)
	if err := chromedp.Do(b, chromedp.Navigate(strings.Replace(host.URL, "127.0.0.1", "localhost", 1))); err != nil {
		t.Fatal(err)
	}
	inFrame := frameOf(t, b, h.srv.URL+"/share/")
	// the value is set, not typed: on a loaded machine, the keys typed into
	// a frame of another site's process sometimes arrived wrong, and the
	// server rightly answered "Wrong password."
	if err := chromedp.Do(inFrame, chromedp.WaitVisible(css(`#share-password`)), chromedp.SetValue(css(`#share-password`), sharePassword),
		chromedp.Submit(css(`#share-password`)), chromedp.WaitVisible(css(`.cards`))); err != nil {
		t.Fatalf("the password in another site's frame: %v", err)
	}
	waitAllCards(t, inFrame)
	checkMetrics(t, inFrame, overview)
}

// waitAllCards waits until every card of the page loaded, and none failed.
func waitAllCards(t *testing.T, b context.Context) {
	t.Helper()
	if _, err := chromedp.Run(b, chromedp.Poll[bool](`document.querySelectorAll('[data-card]').length > 0 &&
		document.querySelectorAll('[data-card]:not([data-loaded])').length === 0`, chromedp.WithPollingTimeout(30*time.Second))); err != nil {
		t.Fatalf("waiting for the cards: %v", err)
	}
	if n := evalJS[int](t, b, `document.querySelectorAll('.card-error').length`); n != 0 {
		t.Fatalf("%d cards failed to load", n)
	}
}

// frameOf attaches to the iframe of the browser's page whose URL starts
// with prefix (a frame of another site is a target of its own).
func frameOf(t *testing.T, b context.Context, prefix string) context.Context {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		infos, err := chromedp.Targets(b)
		if err != nil {
			t.Fatal(err)
		}
		for _, info := range infos {
			if info.Type == "iframe" && strings.HasPrefix(info.URL, prefix) {
				ctx, cancel := chromedp.NewContext(b, chromedp.WithTargetID(info.TargetID))
				t.Cleanup(cancel)
				return ctx
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("no frame of %s in the page", prefix)
	return nil
}

package app_test

import (
	"context"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/tally-analytics/tally/pkg/api"
)

// The theme chosen in the page header, in a real browser whose system
// prefers dark colours: Light holds over the system on the login page,
// Dark on the sites, the settings, the dashboard (its chart too) and a
// shared dashboard, each page passing the accessibility checks in it; and
// System, chosen on the shared dashboard, goes back to the shared
// dashboard, which follows the system again.
func TestThemeInABrowser(t *testing.T) {
	h := newHarness(t)
	seedShareSite(t, h)
	link, err := h.client(h.key).CreateSharedLink(context.Background(), string(h.siteID),
		api.SharedLinkRequest{Label: "theme", ShowRevenue: true})
	if err != nil {
		t.Fatal(err)
	}
	b := browser(t)
	run := steps(t, b)
	location := func() string { return evalJS[string](t, b, "location.pathname + location.search") }
	background := func() string { return evalJS[string](t, b, `getComputedStyle(document.body).backgroundColor`) }
	waitCards := func() {
		t.Helper()
		if _, err := chromedp.Run(b, chromedp.Poll[bool](`document.querySelectorAll('[data-card]').length > 0 &&
			document.querySelectorAll('[data-card]:not([data-loaded])').length === 0`, chromedp.WithPollingTimeout(30*time.Second))); err != nil {
			t.Fatalf("waiting for the cards: %v", err)
		}
	}
	// choose presses a theme's button and waits for the page it goes back
	// to, in that theme.
	choose := func(theme string) {
		t.Helper()
		root := `html[data-theme="` + theme + `"]`
		if theme == "system" {
			root = `html:not([data-theme])`
		}
		run("choose "+theme, chromedp.Click(css(`.theme button[value="`+theme+`"]`)),
			chromedp.WaitVisible(css(root+` .theme button[value="`+theme+`"][aria-pressed="true"]`)))
	}
	// chartStroke is the colour of the chart's visitors line.
	chartStroke := func() string {
		return evalJS[string](t, b, `getComputedStyle(document.querySelector('#card-overview polyline.series-visitors')).stroke`)
	}

	prefersScheme(t, b, "dark")
	run("login page", chromedp.Navigate(h.srv.URL+"/login"), chromedp.WaitVisible(css(`#email`)))
	if bg := background(); bg != themeBackgrounds["dark"] {
		t.Errorf("the login page of a dark system, no theme chosen: background %s, want %s", bg, themeBackgrounds["dark"])
	}
	choose("light")
	if u, bg := location(), background(); u != "/login" || bg != themeBackgrounds["light"] {
		t.Errorf("Light chosen on the login page: %s with background %s; want /login, %s", u, bg, themeBackgrounds["light"])
	}
	audit(t, b, "login, light chosen")

	prefersScheme(t, b, "light")
	run("log in", chromedp.SendKeys(css(`#email`), h.email), chromedp.SendKeys(css(`#password`), password),
		chromedp.Submit(css(`#password`)), chromedp.WaitVisible(css(`html[data-theme="light"] .site-list`)))
	choose("dark")
	if u, bg := location(), background(); u != "/sites" || bg != themeBackgrounds["dark"] {
		t.Errorf("Dark chosen on the sites of a light system: %s with background %s; want /sites, %s", u, bg, themeBackgrounds["dark"])
	}
	audit(t, b, "sites, dark chosen")
	run("settings", chromedp.Navigate(h.srv.URL+"/sites/"+string(h.siteID)+"/settings"),
		chromedp.WaitVisible(css(`html[data-theme="dark"] #goal-name`)))
	audit(t, b, "settings, dark chosen")

	run("dashboard", chromedp.Navigate(h.srv.URL+"/sites/"+string(h.siteID)+"?"+shareWeek),
		chromedp.WaitVisible(css(`html[data-theme="dark"] .cards`)))
	waitCards()
	// the chart's line is the dark theme's accent, #8ab4ff
	if stroke := chartStroke(); stroke != "rgb(138, 180, 255)" {
		t.Errorf("the chart's visitors line in dark colours: %s, want rgb(138, 180, 255)", stroke)
	}
	audit(t, b, "dashboard, dark chosen")

	shared := "/share/" + link.Token + "?" + shareWeek
	run("shared dashboard", chromedp.Navigate(h.srv.URL+shared), chromedp.WaitVisible(css(`html[data-theme="dark"] .cards`)))
	waitCards()
	audit(t, b, "shared dashboard, dark chosen")

	// back to the system's colours, on the shared dashboard itself
	prefersScheme(t, b, "dark")
	choose("system")
	if u := location(); u != shared {
		t.Errorf("System chosen on the shared dashboard went to %s, want %s", u, shared)
	}
	waitCards()
	if bg := background(); bg != themeBackgrounds["dark"] {
		t.Errorf("the shared dashboard of a dark system, System chosen: background %s, want %s", bg, themeBackgrounds["dark"])
	}
	prefersScheme(t, b, "light")
	// the chart's line is the light theme's accent, #1d4ed8
	if bg, stroke := background(), chartStroke(); bg != themeBackgrounds["light"] || stroke != "rgb(29, 78, 216)" {
		t.Errorf("the shared dashboard of a light system: background %s, chart line %s; want %s, rgb(29, 78, 216)",
			bg, stroke, themeBackgrounds["light"])
	}
	audit(t, b, "shared dashboard, following the system")
}

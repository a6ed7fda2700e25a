package app_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/tally-analytics/tally/internal/testenv"
	"github.com/tally-analytics/tally/pkg/api"
	"github.com/tally-analytics/tally/pkg/client"
)

// The dashboard in a real browser, over the scenario site of the stats
// tests: log in, add a site, create an API key and read it once, use it,
// revoke it (401), add a goal and an email report's address, check that the dashboard shows the API's
// numbers, filter by a source, log out.
//
// With TALLY_SCREENSHOTS set to a directory, it also saves the screenshots
// of the README (desktop and phone width).
func TestDashboardInABrowser(t *testing.T) {
	h, c, site := scenarioSite(t)
	// the evening of May 7 in New York, the site's time zone: "last 7 days" is May 1..7
	h.clock.Set(time.Date(2026, 5, 8, 3, 0, 0, 0, time.UTC))
	b := browser(t)
	run, text := steps(t, b), textOf(t, b)
	location := func() string { return evalJS[string](t, b, "location.pathname + location.search") }
	// waitCards waits until every card of the page has loaded.
	waitCards := func() {
		t.Helper()
		if _, err := chromedp.Run(b, chromedp.Poll[bool](`document.querySelectorAll('[data-card]').length > 0 &&
			document.querySelectorAll('[data-card]:not([data-loaded])').length === 0`, chromedp.WithPollingTimeout(30*time.Second))); err != nil {
			t.Fatalf("waiting for the cards: %v", err)
		}
	}

	// log in (a wrong password first)
	run("login page", chromedp.Navigate(h.srv.URL+"/sites"), chromedp.WaitVisible(css(`#email`)))
	if u := location(); !strings.HasPrefix(u, "/login?next=") {
		t.Fatalf("a logged-out visit to /sites went to %s, want the login page", u)
	}
	audit(t, b, "login")
	run("wrong password", chromedp.SendKeys(css(`#email`), h.email), chromedp.SendKeys(css(`#password`), "wrong password"),
		chromedp.Submit(css(`#password`)), chromedp.WaitVisible(css(`.error`)))
	run("log in", chromedp.SendKeys(css(`#password`), password), chromedp.Submit(css(`#password`)),
		chromedp.WaitVisible(css(`.site-list`)))
	if u := location(); u != "/sites" {
		t.Fatalf("after logging in: %s, want /sites", u)
	}
	audit(t, b, "sites")

	// add a site: it lands on its settings, with the install snippet
	run("add a site", chromedp.Navigate(h.srv.URL+"/sites/new"), chromedp.WaitVisible(css(`#domain`)),
		chromedp.SendKeys(css(`#domain`), "new.example.org"), chromedp.SetValue(css(`#timezone`), "Europe/Berlin"),
		chromedp.SetValue(css(`#currency`), "EUR"), chromedp.Submit(css(`#domain`)), chromedp.WaitVisible(css(`#snippet`)))
	snippet := text(`#snippet`)
	audit(t, b, "new site's settings")
	sites, err := h.client(h.key).Sites(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var created api.Site
	for _, s := range sites {
		if s.Domain == "new.example.org" {
			created = s
		}
	}
	if created.SiteID == "" || created.Timezone != "Europe/Berlin" || created.BaseCurrency != "EUR" ||
		!strings.Contains(snippet, `data-site="`+created.SiteID+`"`) || !strings.Contains(snippet, "/js/tally.js") {
		t.Fatalf("the new site %+v, snippet %q", created, snippet)
	}

	// an API key, shown once
	run("create a key", chromedp.Navigate(h.srv.URL+"/account/keys"), chromedp.WaitVisible(css(`#key-name`)),
		chromedp.SendKeys(css(`#key-name`), "browser key"),
		chromedp.Click(css(`input[name=scopes][value="stats:read"]`)), chromedp.Click(css(`input[name=scopes][value="events:write"]`)),
		chromedp.Submit(css(`#key-name`)), chromedp.WaitVisible(css(`#new-key`)))
	secret := text(`#new-key`)
	if !strings.HasPrefix(secret, "sk_test_") {
		t.Fatalf("the new key reads %q", secret)
	}
	run("keys again", chromedp.Navigate(h.srv.URL+"/account/keys"), chromedp.WaitVisible(css(`table.report`)))
	audit(t, b, "keys")
	html := evalJS[string](t, b, "document.documentElement.outerHTML")
	if strings.Contains(html, secret) || strings.Contains(html, secret[8:20]) {
		t.Fatal("the key's secret is shown again")
	}
	verify, err := h.client(secret).Verify(context.Background())
	if err != nil || !verify.Authenticated || strings.Join(verify.Scopes, ",") != "stats:read,events:write" {
		t.Fatalf("the new key against the API: %+v, %v", verify, err)
	}
	run("revoke the key", chromedp.Click(css(`tr[data-key="`+verify.KeyID+`"] button`)), chromedp.WaitVisible(css(`.notice`)))
	if _, err := h.client(secret).Verify(context.Background()); !isAPIError(err, http.StatusUnauthorized, "unauthorized") {
		t.Fatalf("the revoked key: %v, want 401", err)
	}
	state := text(`tr[data-key="` + verify.KeyID + `"] [data-state]`)
	if state != "revoked" {
		t.Errorf("the key's state shows %q", state)
	}

	// a goal on the scenario site
	run("add a goal", chromedp.Navigate(h.srv.URL+"/sites/"+site+"/settings"), chromedp.WaitVisible(css(`#goal-name`)),
		chromedp.SendKeys(css(`#goal-name`), "Signed up"), chromedp.Click(css(`input[name=type][value=custom_event]`)),
		chromedp.SendKeys(css(`#goal-event`), "signup"), chromedp.Submit(css(`#goal-name`)), chromedp.WaitVisible(css(`tr[data-goal="Signed up"]`)))
	audit(t, b, "settings")
	// a bad exclusion is the form again, with its error (nothing is saved)
	run("a bad exclusion", chromedp.SendKeys(css(`#excluded-pages`), "admin/**"), chromedp.Submit(css(`#excluded-pages`)),
		chromedp.WaitVisible(css(`#exclusions .error`)))
	if msg := text(`#exclusions .error`); !strings.Contains(msg, "Excluded pages, line 1") {
		t.Errorf("the exclusions' error reads %q", msg)
	}
	audit(t, b, "settings with an exclusions error")
	// an email report's address: a bad one is the form again with the field marked, then a good one is listed
	run("a bad report address", chromedp.SendKeys(css(`#report-email`), "not-an-address"), chromedp.Click(css(`#report-monthly`)),
		chromedp.Submit(css(`#report-email`)), chromedp.WaitVisible(css(`#email-reports .error`)))
	audit(t, b, "settings with an email reports error")
	run("a report address", chromedp.SetValue(css(`#report-email`), "team@reports.example"), chromedp.Submit(css(`#report-email`)),
		chromedp.WaitVisible(css(`#email-reports tr[data-recipient]`)))
	if got := text(`#email-reports tr[data-recipient] td`); got != "weekly and monthly" {
		t.Errorf("the new address gets %q", got)
	}
	audit(t, b, "settings with an email report")
	// a spike notification: a bad threshold is the form again with the field marked, then one is set
	// and an address added
	run("a bad spike threshold", chromedp.SetValue(css(`#spike-threshold`), "0"), chromedp.Submit(css(`#spike-threshold`)),
		chromedp.WaitVisible(css(`#spike-notifications .error`)))
	audit(t, b, "settings with a spike notification error")
	run("a spike threshold", chromedp.SetValue(css(`#spike-threshold`), "50"), chromedp.Submit(css(`#spike-threshold`)),
		chromedp.WaitVisible(css(`#spike-email`)))
	run("a spike address", chromedp.SendKeys(css(`#spike-email`), "team@spikes.example"), chromedp.Submit(css(`#spike-email`)),
		chromedp.WaitVisible(css(`#spike-notifications tr[data-spike-recipient]`)))
	audit(t, b, "settings with a spike notification")

	// the dashboard shows the API's numbers
	week := client.StatsParams{SiteID: site, DateFrom: "2026-05-01", DateTo: "2026-05-07"}
	run("dashboard", chromedp.Navigate(h.srv.URL+"/sites/"+site+"?range=7d"), chromedp.WaitVisible(css(`.cards`)))
	waitCards()
	overview, err := c.Overview(context.Background(), week)
	if err != nil {
		t.Fatal(err)
	}
	// the scenario's hand-worked week (stats_scenario_test.go): 7 visitors,
	// 13 pageviews, 3 bounces of 8 sessions, 1650 s over 8 sessions
	if m := overview.Data.Metrics; m.Visitors != 7 || m.Pageviews != 13 || m.BounceRate != 37.5 || m.VisitDuration != 206.3 {
		t.Fatalf("the API's overview of the scenario week is %+v, want 7, 13, 37.5, 206.3", m)
	}
	checkMetrics(t, b, overview)
	// a headline charts that metric alone, in place, and keeps the focus;
	// chosen again, it brings back visitors and pageviews
	chartTitle := func() string {
		return evalJS[string](t, b, `document.querySelector('#card-overview #chart-title').textContent`)
	}
	run("chart visits", chromedp.Click(css(`#card-overview a[href*="metric=visits"]`)),
		chromedp.WaitVisible(css(`#card-overview a[aria-current="true"]`)))
	if got, focus := chartTitle(), evalJS[string](t, b, `document.activeElement.textContent`); got != "Total visits per day" || focus != "Total visits" {
		t.Errorf("after choosing visits the chart is %q and the focus on %q", got, focus)
	}
	audit(t, b, "the overview charting visits")
	run("chart visitors and pageviews again", chromedp.Click(css(`#card-overview a[aria-current="true"]`)),
		chromedp.WaitNotPresent(css(`#card-overview a[aria-current="true"]`)))
	if got, focus := chartTitle(), evalJS[string](t, b, `document.activeElement.textContent`); got != "Visitors and pageviews per day" ||
		focus != "Total visits" {
		t.Errorf("back from visits the chart is %q and the focus on %q", got, focus)
	}
	sources, err := c.Sources(context.Background(), week)
	if err != nil {
		t.Fatal(err)
	}
	shown := evalJS[map[string]string](t, b, `Object.fromEntries([...document.querySelectorAll('#card-sources tbody tr')].map(r =>
		[r.dataset.row, r.querySelector('[data-col=visitors]').dataset.value]))`)
	if len(shown) != len(sources.Data.Sources) {
		t.Errorf("sources card has %d rows, the API %d", len(shown), len(sources.Data.Sources))
	}
	for _, row := range sources.Data.Sources {
		if shown[row.Source] != strconv.FormatInt(row.Visitors, 10) {
			t.Errorf("source %s: the dashboard shows %q visitors, the API %d", row.Source, shown[row.Source], row.Visitors)
		}
	}
	conv, err := c.Conversions(context.Background(), week)
	if err != nil || len(conv.Data) != 1 {
		t.Fatalf("conversions: %+v, %v", conv, err)
	}
	conversions := evalJS[string](t, b, `document.querySelector('#card-goals tr[data-row="Signed up"] [data-col=total_conversions]').dataset.value`)
	if conversions != strconv.FormatInt(conv.Data[0].TotalConversions, 10) || conv.Data[0].TotalConversions != 3 {
		t.Errorf("goal conversions: dashboard %s, API %d (alice once, carol twice)", conversions, conv.Data[0].TotalConversions)
	}
	// the journeys card shows the API's paths
	journeys, err := c.Journeys(context.Background(), week)
	if err != nil || len(journeys.Data.Journeys) == 0 {
		t.Fatalf("journeys of the scenario week: %+v, %v", journeys, err)
	}
	paths := evalJS[map[string]string](t, b, `Object.fromEntries([...document.querySelectorAll('#card-journeys tbody tr')].map(r =>
		[r.dataset.row, r.querySelector('[data-col=sessions]').dataset.value]))`)
	if len(paths) != len(journeys.Data.Journeys) {
		t.Errorf("journeys card has %d paths, the API %d", len(paths), len(journeys.Data.Journeys))
	}
	for _, j := range journeys.Data.Journeys {
		if label := strings.Join(j.Pages, " → "); paths[label] != strconv.FormatInt(j.Sessions, 10) {
			t.Errorf("path %s: the dashboard shows %q sessions, the API %d", label, paths[label], j.Sessions)
		}
	}
	audit(t, b, "dashboard")
	// on a phone the cards' wider tables scroll sideways inside their card:
	// such a card is reachable by keyboard, and one that fits is not a stop
	misfits := func() []string {
		return evalJS[[]string](t, b, `[...document.querySelectorAll('section.card')].filter(c => (c.scrollWidth > c.clientWidth) != (c.tabIndex === 0)).map(c => c.id)`)
	}
	run("phone width", chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2), chromedp.EmulateMobile), chromedp.Sleep(300*time.Millisecond))
	audit(t, b, "dashboard on a phone")
	if stops := misfits(); len(stops) > 0 {
		t.Errorf("on a phone, cards whose keyboard stop does not match their overflow: %v", stops)
	}
	// the pages' six columns are wider than a phone: that card scrolls, and is a stop
	if !evalJS[bool](t, b, `document.getElementById('card-pages').tabIndex === 0 && document.getElementById('card-pages').classList.contains('scrolls')`) {
		t.Error("on a phone, the pages card is no keyboard stop with shadows")
	}
	run("desktop width", chromedp.ResetViewport(), chromedp.Sleep(300*time.Millisecond))
	if stops := misfits(); len(stops) > 0 {
		t.Errorf("back at the window's width, cards whose keyboard stop does not match their overflow: %v", stops)
	}
	screenshots(t, b, "dashboard")
	// the journeys' form loads in place: a page without its slash is refused there, with the field marked
	run("journeys from a bad page", chromedp.SetValue(css(`#journey-start`), "pricing"),
		chromedp.Click(css(`#card-journeys button[type=submit]`), chromedp.NodeVisible),
		chromedp.WaitVisible(css(`#journey-error`)))
	if u := location(); u != "/sites/"+site+"?range=7d" {
		t.Errorf("the journeys' form left the dashboard for %s", u)
	}
	audit(t, b, "dashboard with a journeys error")
	first := journeys.Data.Journeys[0].Pages[0]
	run("journeys from a page", chromedp.SetValue(css(`#journey-start`), first),
		chromedp.Click(css(`#card-journeys button[type=submit]`), chromedp.NodeVisible), chromedp.WaitNotPresent(css(`#journey-error`)),
		chromedp.WaitVisible(css(`#card-journeys [data-metric=journey_sessions]`)))
	week.Start = first
	from, err := c.Journeys(context.Background(), week)
	if err != nil {
		t.Fatal(err)
	}
	week.Start = ""
	if shown := evalJS[string](t, b, `document.querySelector('#card-journeys [data-metric=journey_sessions]').dataset.value`); shown != strconv.FormatInt(from.Data.Sessions, 10) {
		t.Errorf("journeys from %s: the dashboard counts %s sessions, the API %d", first, shown, from.Data.Sessions)
	}
	checkDownloadLink(t, b, "/sites/"+site+"/download?range=7d")

	// filter by a source: click it
	run("filter by Google", chromedp.Click(css(`#card-sources tr[data-row="Google"] a`), chromedp.NodeVisible),
		chromedp.WaitVisible(css(`.chip[data-filter=source]`)))
	if u := location(); !strings.Contains(u, "source=Google") {
		t.Fatalf("after clicking Google: %s", u)
	}
	waitCards()
	week.Source = "Google"
	overview, err = c.Overview(context.Background(), week)
	if err != nil {
		t.Fatal(err)
	}
	if overview.Data.Metrics.Visitors != 2 {
		t.Fatalf("the API counts %d visitors from Google, want 2", overview.Data.Metrics.Visitors)
	}
	checkMetrics(t, b, overview)
	checkDownloadLink(t, b, "/sites/"+site+"/download?range=7d&source=Google")

	// log out: the dashboard is closed again
	run("log out", chromedp.Click(css(`form.logout button`)), chromedp.WaitVisible(css(`#email`)))
	run("after logout", chromedp.Navigate(h.srv.URL+"/sites/"+site), chromedp.WaitVisible(css(`#email`)))
	if u := location(); !strings.HasPrefix(u, "/login") {
		t.Errorf("after logging out, the dashboard went to %s", u)
	}
}

// checkDownloadLink checks that the dashboard's download link goes to the
// zip of the view (want) and that the browser gets a zip from it.
func checkDownloadLink(t *testing.T, b context.Context, want string) {
	t.Helper()
	link := evalJS[[]string](t, b, `[...document.querySelectorAll('a#download')].map(a => a.getAttribute('href') + ' ' + a.textContent)`)
	if len(link) != 1 || link[0] != want+" Download CSV" {
		t.Errorf("download links %q, want one to %s", link, want)
	}
	got, err := chromedp.Run(b, chromedp.Evaluate[string](`fetch(document.querySelector('a#download').href, {credentials: 'same-origin'})
		.then(r => r.status + ' ' + r.headers.get('Content-Type') + ' ' + r.headers.get('Content-Disposition'))`, chromedp.EvalAwaitPromise))
	if err != nil || !strings.HasPrefix(got, "200 application/zip attachment; filename=\"reports-") {
		t.Errorf("the download link answers %q, %v; want a zip attachment", got, err)
	}
}

// checkMetrics compares the overview card with an API overview.
func checkMetrics(t *testing.T, b context.Context, want api.OverviewResponse) {
	t.Helper()
	got := evalJS[map[string]string](t, b, `Object.fromEntries([...document.querySelectorAll('#card-overview [data-metric]')].map(e => [e.dataset.metric, e.dataset.value]))`)
	m := want.Data.Metrics
	for name, v := range map[string]string{
		"visitors": strconv.FormatInt(m.Visitors, 10), "visits": strconv.FormatInt(m.Visits, 10),
		"pageviews": strconv.FormatInt(m.Pageviews, 10), "views_per_visit": strconv.FormatFloat(m.ViewsPerVisit, 'f', -1, 64),
		"bounce_rate": strconv.FormatFloat(m.BounceRate, 'f', -1, 64), "visit_duration": strconv.FormatFloat(m.VisitDuration, 'f', -1, 64),
		"filtered_bot_traffic": strconv.FormatInt(want.Meta.FilteredBotTraffic, 10),
	} {
		if got[name] != v {
			t.Errorf("%s: the dashboard shows %q, the API %s", name, got[name], v)
		}
	}
	if want.Meta.FilteredBotTraffic == 0 {
		return
	}
	by := want.Meta.FilteredBotTrafficByCategory
	for name, v := range map[string]int64{"bots_crawler": by.Crawler, "bots_ai_agent": by.AIAgent, "bots_monitor": by.Monitor,
		"bots_automation": by.Automation, "bots_other": by.Other} {
		if got[name] != strconv.FormatInt(v, 10) {
			t.Errorf("%s: the dashboard shows %q, the API %d", name, got[name], v)
		}
	}
}

// themeBackgrounds are the page's background in each theme, as the
// browser computes them (app.css: --bg, #f6f7f9 and #0f1115).
var themeBackgrounds = map[string]string{"light": "rgb(246, 247, 249)", "dark": "rgb(15, 17, 21)"}

// prefersScheme makes the browser's system prefer scheme's colours (light
// or dark), as a system set to them does, on this page and the next.
func prefersScheme(t *testing.T, b context.Context, scheme string) {
	t.Helper()
	if _, err := chromedp.Call(b, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
		Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}}); err != nil {
		t.Fatalf("prefers-color-scheme %s: %v", scheme, err)
	}
}

// audit runs the axe-core accessibility checks (WCAG 2 A and AA, contrast
// among them) on the page and reports every violation, in both themes: a
// page that follows the system is checked with the system set to light
// colours and to dark ones, and must be in each; a page of a theme the user
// chose must be in it either way (and is checked in it). The system is
// left at light colours. The test stack fetches axe-core from npm
// (TALLY_TEST_AXE names its axe.min.js).
func audit(t *testing.T, b context.Context, name string) {
	t.Helper()
	src, err := os.ReadFile(testenv.Lookup(t, "TALLY_TEST_AXE"))
	if err != nil {
		t.Fatal(err)
	}
	evalJS[bool](t, b, string(src)+";true")
	chosen := evalJS[string](t, b, `document.documentElement.dataset.theme || ''`)
	for _, scheme := range []string{"dark", "light"} {
		prefersScheme(t, b, scheme)
		theme := scheme
		if chosen != "" {
			theme = chosen
		}
		if bg := evalJS[string](t, b, `getComputedStyle(document.body).backgroundColor`); bg != themeBackgrounds[theme] {
			t.Errorf("%s page, the system's colours %s and the theme chosen %q: the background is %s, want %s (%s)",
				name, scheme, chosen, bg, themeBackgrounds[theme], theme)
		}
		if chosen != "" && scheme == "light" {
			continue // the same colours as with a dark system, checked
		}
		found, err := chromedp.Run(b, chromedp.Evaluate[[]string](`axe.run(document, {runOnly: ['wcag2a', 'wcag2aa']}).then(r =>
			r.violations.map(v => v.id + ' (' + v.impact + '): ' + v.help + ' — ' + v.nodes.map(n => n.target.join(' ')).join(', ')))`,
			chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatalf("axe on %s (%s): %v", name, theme, err)
		}
		for _, v := range found {
			t.Errorf("accessibility, %s page in %s colours: %s", name, theme, v)
		}
		t.Logf("axe: %s page checked in %s colours, %d violations", name, theme, len(found))
	}
}

// screenshots saves the page at desktop and phone width into
// $TALLY_SCREENSHOTS, when it is set.
func screenshots(t *testing.T, b context.Context, name string) {
	dir := os.Getenv("TALLY_SCREENSHOTS")
	if dir == "" {
		return
	}
	for _, size := range []struct {
		suffix        string
		width, height int64
		opts          []chromedp.EmulateViewportOption
	}{{"desktop", 1280, 900, []chromedp.EmulateViewportOption{chromedp.EmulateScale(1)}},
		{"phone", 390, 844, []chromedp.EmulateViewportOption{chromedp.EmulateScale(2), chromedp.EmulateMobile}}} {
		if err := chromedp.Do(b, chromedp.EmulateViewport(size.width, size.height, size.opts...), chromedp.Sleep(500*time.Millisecond)); err != nil {
			t.Fatalf("viewport: %v", err)
		}
		png, err := chromedp.Run(b, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatalf("screenshot: %v", err)
		}
		if err := os.WriteFile(filepath.Join(dir, name+"-"+size.suffix+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := chromedp.Do(b, chromedp.ResetViewport()); err != nil {
		t.Fatal(err)
	}
}

// css selects by a CSS selector.
func css(sel string) chromedp.CSS { return chromedp.CSS(sel) }

// steps runs the browser's steps of what, failing the test with what.
func steps(t *testing.T, b context.Context) func(what string, steps ...chromedp.Action[chromedp.Void]) {
	return func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(b, steps...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
}

// textOf reads the text of the page's element sel.
func textOf(t *testing.T, b context.Context) func(sel string) string {
	return func(sel string) string {
		t.Helper()
		v, err := chromedp.Run(b, chromedp.Text(css(sel)))
		if err != nil {
			t.Fatalf("text of %s: %v", sel, err)
		}
		return v
	}
}

// evalJS evaluates an expression in the page.
func evalJS[T any](t *testing.T, b context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(b, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("evaluating %.60s: %v", js, err)
	}
	return v
}

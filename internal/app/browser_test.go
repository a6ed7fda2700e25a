package app_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/tally-analytics/tally/internal/accounts"
	"github.com/tally-analytics/tally/internal/ingest"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/testenv"
)

// browser starts Debian's headless Chromium (installed by the test stack;
// never a downloaded browser) and returns a chromedp context.
func browser(t *testing.T) context.Context {
	t.Helper()
	bin := testenv.Lookup(t, "TALLY_TEST_CHROMIUM")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("chromium: %v", err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		// Headless Chrome names itself HeadlessChrome, which tally rightly
		// counts as a bot: present the agent of an ordinary desktop Chrome.
		chromedp.UserAgent(chromeUA),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(func() { cancelTimeout(); cancelCtx(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil { // start the browser
		t.Fatalf("starting chromium: %v", err)
	}
	return ctx
}

// localhostSite makes a site on the domain localhost, where the pages of
// servePage are, with the harness's clock at the real time (the browser's).
func localhostSite(t *testing.T, h *harness) model.Site {
	t.Helper()
	h.clock.Set(time.Now().UTC())
	site, err := h.app.Accounts.CreateSite(context.Background(), accounts.NewSite{OwnerEmail: h.email, Domain: "localhost"})
	if err != nil {
		t.Fatal(err)
	}
	return site
}

// servePage serves page at every path and returns its origin on localhost,
// a page on the domain of localhostSite's sites.
func servePage(t *testing.T, page string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, page)
	}))
	t.Cleanup(srv.Close)
	return strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)
}

// The whole tracker in a real browser: a page loads the script, calls made
// before it loaded are replayed, client-side navigation is counted, custom
// and revenue events are sent, a checkout session id in the URL is kept, and
// the opt-out works.
func TestTrackerInABrowser(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	site := localhostSite(t, h)
	// the EUR purchase below is held to the USD site's cap at the latest rate
	if err := h.app.PG.UpsertRates(ctx, []model.Rate{{Currency: "USD", Day: h.clock.Now(), Rate: "1.08"}}); err != nil {
		t.Fatal(err)
	}
	page := `<!doctype html><html><head><title>shop</title>
<script>window.analytics = window.analytics || function () { (window.analytics.q = window.analytics.q || []).push(arguments) };
analytics('event', 'Early', {props: {queued: true}});</script>
<script defer data-site="` + string(site.ID) + `" data-allow-localhost src="` + h.srv.URL + `/js/tally.js"></script>
</head><body><a id="pricing" href="/pricing">Pricing</a></body></html>`
	origin := servePage(t, page)

	b := browser(t)
	events := func(where string, args ...any) int64 {
		return h.count("SELECT count() FROM events WHERE site_id = ? AND "+where, append([]any{string(site.ID)}, args...)...)
	}
	waitEvents := func(n int64, where string, args ...any) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for events(where, args...) < n {
			if time.Now().After(deadline) {
				t.Fatalf("waited for %d events where %s; have %d", n, where, events(where, args...))
			}
			time.Sleep(50 * time.Millisecond)
		}
	}

	if err := chromedp.Do(b, chromedp.Navigate(origin+"/"), chromedp.WaitReady(chromedp.ID("pricing"))); err != nil {
		t.Fatal(err)
	}
	waitEvents(1, "name = 'pageview' AND pathname = '/'")
	waitEvents(1, "name = 'Early'")
	for _, js := range []string{
		`history.pushState({}, '', '/pricing')`,
		`history.pushState({}, '', '/signup')`,
		`history.replaceState({}, '', '/welcome')`,        // a router's redirect shows a page too
		`history.replaceState({}, '', '/welcome?step=2')`, // a filter written into the query does not
		`tally('event', 'Signup', {props: {plan: 'pro'}})`,
		// a sum in JavaScript: 55.980000000000004
		`analytics('event', 'Purchase', {revenue: {amount: 49.99 + 5.99, currency: 'EUR'}})`,
	} {
		if _, err := chromedp.Run(b, chromedp.Evaluate[any](js)); err != nil {
			t.Fatalf("%s: %v", js, err)
		}
	}
	vid, err := chromedp.Run(b, chromedp.Evaluate[string](`localStorage.getItem('analytics_vid')`))
	if err != nil {
		t.Fatal(err)
	}
	waitEvents(1, "name = 'Purchase'")
	if err := chromedp.Do(b, chromedp.Navigate(origin+"/?session_id=cs_test_1"), chromedp.WaitReady(chromedp.ID("pricing"))); err != nil {
		t.Fatal(err)
	}
	waitEvents(5, "name = 'pageview'")
	ignoredCookie, err := chromedp.Run(b, chromedp.Evaluate[string](
		`localStorage.setItem('tally_ignore', 'true'); history.pushState({}, '', '/ignored'); analytics('event', 'Ignored'); document.cookie`))
	if err != nil {
		t.Fatal(err)
	}

	if len(vid) != 32 || !strings.Contains(ignoredCookie, "analytics_vid="+vid) {
		t.Fatalf("analytics_vid %q (cookie %q): want 32 hex characters in localStorage and the cookie", vid, ignoredCookie)
	}
	visitor := ingest.FromClientID(site.ID, vid)
	if n := events("name = 'pageview' AND visitor_id = ?", visitor); n != 5 {
		t.Errorf("%d pageviews carry the browser's analytics_vid, want 5 (/, /pricing, /signup, /welcome, / again)", n)
	}
	for _, path := range []string{"/", "/pricing", "/signup", "/welcome"} {
		if n := events("name = 'pageview' AND pathname = ?", path); n < 1 {
			t.Errorf("no pageview of %s", path)
		}
	}
	if n := events("name = 'Signup' AND props_keys = ['plan'] AND props_values = ['pro'] AND visitor_id = ?", visitor); n != 1 {
		t.Errorf("Signup event with plan=pro: %d, want 1", n)
	}
	if n := events("name = 'Early' AND props_keys = ['queued'] AND props_values = ['true'] AND visitor_id = ?", visitor); n != 2 {
		t.Errorf("the call queued before the script loaded: %d events, want 2 (one per page load)", n)
	}
	if n := events("name = 'Purchase' AND revenue_amount = 5598 AND revenue_currency = 'EUR'"); n != 1 {
		t.Errorf("Purchase with 49.99 + 5.99 EUR = 5598 cents: %d, want 1", n)
	}
	got, err := h.app.PG.CheckoutVisitor(ctx, site.ID, "cs_test_1")
	if err != nil || got != visitor {
		t.Errorf("checkout session cs_test_1 → visitor %d, %v; want %d", got, err, visitor)
	}
	time.Sleep(300 * time.Millisecond) // the opted-out calls would have arrived by now
	if n := events("pathname = '/ignored' OR name = 'Ignored'"); n != 0 {
		t.Errorf("%d events sent after opting out", n)
	}
}

// runHashApp runs each script in the page b shows, then a last event,
// waits for that event (every pageview is stored before it), and returns a
// count of site's pageviews where the condition holds.
func runHashApp(t *testing.T, h *harness, b context.Context, site model.Site, scripts ...string) func(where string, args ...any) int64 {
	t.Helper()
	for _, js := range append(scripts, `analytics('event', 'Done')`) {
		if _, err := chromedp.Run(b, chromedp.Evaluate[any](js)); err != nil {
			t.Fatalf("%s: %v", js, err)
		}
		time.Sleep(100 * time.Millisecond) // hashchange fires after the script returns
	}
	deadline := time.Now().Add(20 * time.Second)
	for h.count("SELECT count() FROM events WHERE site_id = ? AND name = 'Done'", string(site.ID)) < 1 {
		if time.Now().After(deadline) {
			t.Fatal("the last event never arrived")
		}
		time.Sleep(50 * time.Millisecond)
	}
	return func(where string, args ...any) int64 {
		return h.count("SELECT count() FROM events WHERE site_id = ? AND name = 'pageview' AND "+where,
			append([]any{string(site.ID)}, args...)...)
	}
}

// A hash-routed app tagged data-hash: each route is a page of its own, the
// router's root (#/) is the page it landed on, a query written into the
// route is not a page, and the script included twice counts each page once.
func TestTrackerHashRoutes(t *testing.T) {
	h := newHarness(t)
	site := localhostSite(t, h)
	tag := `<script defer data-site="` + string(site.ID) + `" data-hash data-allow-localhost src="` + h.srv.URL + `/js/tally.js"></script>`
	page := `<!doctype html><html><head><title>app</title>` + tag + tag + `</head><body><p id="app">app</p></body></html>`
	origin := servePage(t, page)

	b := browser(t)
	if err := chromedp.Do(b, chromedp.Navigate(origin+"/"), chromedp.WaitReady(chromedp.ID("app"))); err != nil {
		t.Fatal(err)
	}
	pageviews := runHashApp(t, h, b, site,
		`history.replaceState(null, '', '/#/')`, // the router's root: the page it landed on
		`location.hash = '#/pricing'`,
		`location.hash = '#/pricing?tab=2'`, // the same route
		`history.pushState({}, '', '/#/signup')`)
	time.Sleep(300 * time.Millisecond) // a second copy's pageviews would have arrived by now
	for _, path := range []string{"/", "/#/pricing", "/#/signup"} {
		if n := pageviews("pathname = ?", path); n != 1 {
			t.Errorf("%d pageviews of %s, want 1", n, path)
		}
	}
	if n := pageviews("1"); n != 3 {
		t.Errorf("%d pageviews in all, want 3", n)
	}
}

// A sign-in's redirect to a hash-routed app puts its token in the fragment,
// and the app then takes it out of the address: that is the same page, as
// the server stores it, and counts once.
func TestTrackerHashRouteTokenRemovedCountsOnce(t *testing.T) {
	h := newHarness(t)
	site := localhostSite(t, h)
	page := `<!doctype html><html><head><title>app</title><script defer data-site="` + string(site.ID) +
		`" data-hash data-allow-localhost src="` + h.srv.URL + `/js/tally.js"></script></head><body><p id="app">app</p></body></html>`
	origin := servePage(t, page)

	b := browser(t)
	if err := chromedp.Do(b, chromedp.Navigate(origin+"/callback#access_token=SECRET&token_type=bearer"), chromedp.WaitReady(chromedp.ID("app"))); err != nil {
		t.Fatal(err)
	}
	pageviews := runHashApp(t, h, b, site,
		`history.replaceState(null, '', location.pathname)`, // the token taken out: the same page
		`location.hash = '#/settings/token=abc'`,
		`location.hash = '#/settings'`) // the same route
	for _, path := range []string{"/callback", "/callback#/settings"} {
		if n := pageviews("pathname = ?", path); n != 1 {
			t.Errorf("%d pageviews of %s, want 1", n, path)
		}
	}
	if n := pageviews("1"); n != 2 {
		t.Errorf("%d pageviews in all, want 2", n)
	}
}

// Clicks the script counts: an element tagged data-tally-event (its
// data-tally-event-* attributes as props), and, where the tag asks for
// them, links to other sites and links to files, sent without their query
// or fragment.
func TestTrackerClicks(t *testing.T) {
	h := newHarness(t)
	site := localhostSite(t, h)
	body := `<body><script>['click', 'auxclick'].forEach(function (k) { document.addEventListener(k, function (e) { e.preventDefault() }) })</script>
<a id="out" href="https://example.org/path?email=a%40b.c#top">out</a>
<a id="file" href="/files/Report.PDF?token=1">report</a>
<a id="dl" href="/export" download>export</a>
<a id="zip" href="/a/archive.zip">archive</a>
<a id="internal" href="/pricing">pricing</a>
<a id="dot" href="/notes.">notes</a>
<button id="signup" data-tally-event="Signup" data-tally-event-plan="pro"><span id="inner">Sign up</span></button>
<a id="partner" data-tally-event="Partner" href="https://partner.example/x?ref=1">partner</a>
</body></html>`
	head := func(attrs string) string {
		return `<!doctype html><html><head><title>links</title><script defer data-site="` + string(site.ID) + `" data-allow-localhost ` +
			attrs + ` src="` + h.srv.URL + `/js/tally.js"></script></head>`
	}
	all := servePage(t, head(`data-outbound-links data-file-downloads`)+body)
	zips := servePage(t, head(`data-file-downloads="zip, .epub,"`)+body)
	clicks := []string{
		`document.getElementById('out').dispatchEvent(new MouseEvent('auxclick', {bubbles: true, button: 1}))`, // a new tab
		`document.getElementById('out').dispatchEvent(new MouseEvent('auxclick', {bubbles: true, button: 2}))`, // the context menu
		`document.getElementById('file').click()`,
		`document.getElementById('dl').click()`,
		`document.getElementById('zip').click()`,
		`document.getElementById('internal').click()`,
		`document.getElementById('dot').click()`, // no extension, whatever the list's stray commas
		`document.getElementById('inner').click()`,
		`document.getElementById('partner').click()`,
		// a middle-click opens a link in a new tab, and does nothing to a button
		`document.getElementById('partner').dispatchEvent(new MouseEvent('auxclick', {bubbles: true, button: 1}))`,
		`document.getElementById('inner').dispatchEvent(new MouseEvent('auxclick', {bubbles: true, button: 1}))`,
	}
	b := browser(t)
	for i, origin := range []string{all, zips} {
		page := fmt.Sprintf("/page-%d", i)
		if err := chromedp.Do(b, chromedp.Navigate(origin+page), chromedp.WaitReady(chromedp.ID("out")),
			chromedp.Click(chromedp.ID("out"))); err != nil {
			t.Fatal(err)
		}
		runHashApp(t, h, b, site, clicks...)
		// runHashApp waits for the first Done only
		h.waitCount(int64(i+1), "SELECT count() FROM events WHERE site_id = ? AND name = 'Done'", string(site.ID))
		h.clock.Set(time.Now().UTC())
	}
	events := func(where string, args ...any) int64 {
		return h.count("SELECT count() FROM events WHERE site_id = ? AND "+where, append([]any{string(site.ID)}, args...)...)
	}
	for _, c := range []struct {
		page, name, url string
		want            int64
	}{
		// the click and the middle-click of each link
		{"/page-0", "Outbound Link: Click", "https://example.org/path", 2},
		// a tagged link counts as its tag only
		{"/page-0", "Outbound Link: Click", "https://partner.example/x", 0},
		// the extension in any case; the download attribute; a default extension
		{"/page-0", "File Download", all + "/files/Report.PDF", 1},
		{"/page-0", "File Download", all + "/export", 1},
		{"/page-0", "File Download", all + "/a/archive.zip", 1},
		// no data-outbound-links; files: zip and epub only, and downloads
		{"/page-1", "Outbound Link: Click", "", 0},
		{"/page-1", "File Download", zips + "/files/Report.PDF", 0},
		{"/page-1", "File Download", zips + "/export", 1},
		{"/page-1", "File Download", zips + "/a/archive.zip", 1},
	} {
		where := "pathname = ? AND name = ?"
		args := []any{c.page, c.name}
		if c.url != "" {
			where += " AND props_keys = ['url'] AND props_values = [?]"
			args = append(args, c.url)
		}
		if n := events(where, args...); n != c.want {
			t.Errorf("%s on %s, url %q: %d events, want %d", c.name, c.page, c.url, n, c.want)
		}
	}
	// each page: the tagged button (clicked inside it, not its middle-click)
	// and the tagged link (clicked and middle-clicked)
	if n := events("name = 'Signup' AND props_keys = ['plan'] AND props_values = ['pro']"); n != 2 {
		t.Errorf("%d Signup events with plan=pro, want 2", n)
	}
	if n := events("name = 'Partner' AND empty(props_keys)"); n != 4 {
		t.Errorf("%d Partner events, want 4", n)
	}
	if n := events("name NOT IN ('pageview', 'Done', 'Signup', 'Partner', 'Outbound Link: Click', 'File Download')"); n != 0 {
		t.Errorf("%d other events, want 0", n)
	}
	if n := events("name = 'File Download'"); n != 5 {
		t.Errorf("%d file downloads in all, want 5", n)
	}
}

// With data-manual the site sends its pageviews itself, and may name the
// page (an id in the path left out); with data-form-submissions a form the
// browser lets through counts on its page.
func TestTrackerManualPageviewsAndForms(t *testing.T) {
	h := newHarness(t)
	site := localhostSite(t, h)
	page := `<!doctype html><html><head><title>app</title>
<script>window.analytics = window.analytics || function () { (window.analytics.q = window.analytics.q || []).push(arguments) };
analytics('pageview', {url: '/queued'});</script>
<script defer data-site="` + string(site.ID) + `" data-manual data-form-submissions data-allow-localhost src="` + h.srv.URL + `/js/tally.js"></script>
</head><body><script>document.addEventListener('submit', function (e) { e.preventDefault() })</script>
<form id="f" action="/thanks"><input id="q" name="q" required><button>Go</button></form></body></html>`
	origin := servePage(t, page)

	b := browser(t)
	if err := chromedp.Do(b, chromedp.Navigate(origin+"/users/42?tab=1"), chromedp.WaitReady(chromedp.ID("f"))); err != nil {
		t.Fatal(err)
	}
	pageviews := runHashApp(t, h, b, site,
		`analytics('pageview', {url: '/users/:id'})`,
		`analytics('event', 'Signup')`, // on the page the pageview named
		`analytics('event', 'Named', {url: '/teams/:id'})`,
		`history.pushState({}, '', '/users/43')`,       // no pageview of its own
		`analytics('pageview')`,                        // the page as it is
		`document.getElementById('f').requestSubmit()`, // the required field is empty: not sent
		`document.getElementById('q').value = 'x'; document.getElementById('f').requestSubmit()`)
	for _, path := range []string{"/queued", "/users/:id", "/users/43"} {
		if n := pageviews("pathname = ?", path); n != 1 {
			t.Errorf("%d pageviews of %s, want 1", n, path)
		}
	}
	if n := pageviews("1"); n != 3 {
		t.Errorf("%d pageviews in all, want 3", n)
	}
	events := func(where string, args ...any) int64 {
		return h.count("SELECT count() FROM events WHERE site_id = ? AND "+where, append([]any{string(site.ID)}, args...)...)
	}
	if n := events("name = 'Form: Submission' AND props_keys = ['path'] AND props_values = ['/users/43'] AND pathname = '/users/43'"); n != 1 {
		t.Errorf("%d form submissions on /users/43, want 1", n)
	}
	if n := events("name = 'Form: Submission'"); n != 1 {
		t.Errorf("%d form submissions in all, want 1 (the first was stopped by the browser's check)", n)
	}
	if n := events("name = 'Signup' AND pathname = '/users/:id'"); n != 1 {
		t.Errorf("%d Signups on /users/:id, want 1", n)
	}
	if n := events("name = 'Named' AND pathname = '/teams/:id'"); n != 1 {
		t.Errorf("%d events on the page they named, want 1", n)
	}
	// the page the site named is the next one's referrer: the id is nowhere
	if n := events("position(pathname, '42') > 0 OR position(referrer, '42') > 0"); n != 0 {
		t.Errorf("%d events carry the page's id", n)
	}
}

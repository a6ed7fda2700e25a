package app_test

import (
	"net/url"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/google/go-cmp/cmp"

	"github.com/tally-analytics/tally/internal/web/worldmap"
)

// The locations card's world map in a real browser, over the five visits
// of seedSegmentSite: GB has 3 visitors (ann, cat, dan), the US 2 (ben,
// eve). On the log scale up to 3, GB is the darkest class (5) and the US
// 1 + ⌊5 × ln 2 / ln 3⌋ = 1 + ⌊3.15⌋ = 4; every other country is drawn
// without visitors. Each shaded country is a link to the dashboard
// filtered by it, the same as its row's; clicking the US on the map
// filters by it, and so does reaching GB with the keyboard from the table
// (Tab) and pressing Enter, which shows its regions. Each state passes the
// accessibility checks.
func TestCountriesMapInABrowser(t *testing.T) {
	h := seedSegmentSite(t)
	site := string(h.siteID)
	world, err := worldmap.Load()
	if err != nil {
		t.Fatal(err)
	}
	b := browser(t)
	run := steps(t, b)
	waitCards := func() {
		t.Helper()
		if _, err := chromedp.Run(b, chromedp.Poll[bool](`document.querySelectorAll('[data-card]').length > 0 &&
			document.querySelectorAll('[data-card]:not([data-loaded])').length === 0`, chromedp.WithPollingTimeout(30*time.Second))); err != nil {
			t.Fatalf("waiting for the cards: %v", err)
		}
	}
	query := func() url.Values {
		t.Helper()
		u, err := url.Parse(evalJS[string](t, b, "location.search"))
		if err != nil {
			t.Fatal(err)
		}
		return u.Query()
	}
	week := "/sites/" + site + "?range=custom&from=2026-05-01&to=2026-05-07"
	run("log in", chromedp.Navigate(h.srv.URL+"/login"), chromedp.WaitVisible(css(`#email`)),
		chromedp.SendKeys(css(`#email`), h.email), chromedp.SendKeys(css(`#password`), password),
		chromedp.Submit(css(`#password`)), chromedp.WaitVisible(css(`.site-list`)))
	run("dashboard", chromedp.Navigate(h.srv.URL+week), chromedp.WaitVisible(css(`.cards`)))
	waitCards()

	type shaded struct{ Country, Class, Visitors, Label, Href string }
	got := evalJS[[]shaded](t, b, `[...document.querySelectorAll('#card-locations .worldmap a')].map(a => ({Country: a.dataset.country,
		Class: a.getAttribute('class'), Visitors: a.dataset.visitors, Label: a.getAttribute('aria-label'), Href: a.getAttribute('href')}))`)
	rowLinks := evalJS[map[string]string](t, b, `Object.fromEntries([...document.querySelectorAll('#card-locations tbody tr')].map(r =>
		[r.dataset.row, r.querySelector('a').getAttribute('href')]))`)
	want := []shaded{
		{"GB", "map-5", "3", "United Kingdom: 3 visitors", rowLinks["United Kingdom"]},
		{"US", "map-4", "2", "United States: 2 visitors", rowLinks["United States"]},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the map's shaded countries (-want +got):\n%s", diff)
	}
	if u, _ := url.Parse(rowLinks["United Kingdom"]); u.Query().Get("country") != "GB" || u.Query().Get("from") != "2026-05-01" {
		t.Errorf("the United Kingdom's row links to %q", rowLinks["United Kingdom"])
	}
	if n := evalJS[int](t, b, `document.querySelectorAll('#card-locations .worldmap .map-0 path').length`); n != len(world.Countries)-2 {
		t.Errorf("%d countries drawn without visitors, want %d (all but GB and US)", n, len(world.Countries)-2)
	}
	audit(t, b, "dashboard with the map")

	// a mouse click inside the US, at a point where the US is on top
	at := evalJS[[]float64](t, b, `(() => {
		const a = document.querySelector('#card-locations .worldmap a[data-country=US]');
		a.scrollIntoView({block: 'center'});
		const path = a.querySelector('path'), box = path.getBBox(), m = path.getScreenCTM();
		for (let i = 1; i < 20; i++) for (let j = 1; j < 20; j++) {
			const x = box.x + box.width * i / 20, y = box.y + box.height * j / 20;
			if (!path.isPointInFill(new DOMPoint(x, y))) continue;
			const p = new DOMPoint(x, y).matrixTransform(m);
			if (document.elementFromPoint(p.x, p.y) === path) return [p.x, p.y];
		}
		return [];
	})()`)
	if len(at) != 2 {
		t.Fatal("no point of the US on the map to click")
	}
	run("click the US", chromedp.MouseClickXY(at[0], at[1]), chromedp.WaitVisible(css(`.chip[data-filter=country]`)))
	if q := query(); q.Get("country") != "US" || q.Get("from") != "2026-05-01" || q.Get("to") != "2026-05-07" {
		t.Fatalf("after clicking the US: %s", evalJS[string](t, b, "location.search"))
	}
	waitCards()
	// filtered by a country, the card is its regions, without a map
	regions := evalJS[[]string](t, b, `[...document.querySelectorAll('#card-locations tbody tr')].map(r => r.dataset.row)`)
	if diff := cmp.Diff([]string{"Washington"}, regions); diff != "" {
		t.Errorf("the US's regions (-want +got):\n%s", diff)
	}
	if n := evalJS[int](t, b, `document.querySelectorAll('#card-locations .worldmap').length`); n != 0 {
		t.Errorf("the regions card has %d maps", n)
	}

	// the keyboard: from the table's last link, Tab reaches the map's first
	// country (GB, the most visitors), whose name and count show; Enter
	// follows it
	run("back", chromedp.Navigate(h.srv.URL+week), chromedp.WaitVisible(css(`.cards`)))
	waitCards()
	run("the table's last link", chromedp.Focus(css(`#card-locations tbody tr:last-child a`)), chromedp.KeyEvent(kb.Tab))
	focused := evalJS[string](t, b, `(() => {
		const shown = a => getComputedStyle(a.querySelector('.map-label')).display !== 'none' ? 'shown' : 'hidden';
		return document.activeElement.dataset.country + ' ' + shown(document.activeElement) + ', US ' +
			shown(document.querySelector('#card-locations .worldmap a[data-country=US]'));
	})()`)
	if focused != "GB shown, US hidden" {
		t.Fatalf("after Tab from the table: %q, want GB's link with its label shown (and the US's hidden)", focused)
	}
	audit(t, b, "dashboard with a country of the map focused")
	run("Enter", chromedp.KeyEvent(kb.Enter), chromedp.WaitVisible(css(`.chip[data-filter=country]`)))
	if q := query(); q.Get("country") != "GB" {
		t.Fatalf("after Enter on GB: %s", evalJS[string](t, b, "location.search"))
	}
	waitCards()
	regions = evalJS[[]string](t, b, `[...document.querySelectorAll('#card-locations tbody tr')].map(r => r.dataset.row)`)
	if diff := cmp.Diff([]string{"England"}, regions); diff != "" {
		t.Errorf("GB's regions (-want +got):\n%s", diff)
	}
	audit(t, b, "dashboard filtered by a country from the map")
}

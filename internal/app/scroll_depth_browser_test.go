package app_test

import (
	"math"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The tracking script reports how far a page was scrolled: when an app
// moves on to its next page, and when the page is left.
func TestScrollDepthInABrowser(t *testing.T) {
	h := newHarness(t)
	site := localhostSite(t, h)
	page := `<!doctype html><html><head><title>long</title>
<script defer data-site="` + string(site.ID) + `" data-allow-localhost src="` + h.srv.URL + `/js/tally.js"></script>
</head><body style="margin:0"><div id="top" style="height:4000px">a long page</div></body></html>`
	origin := servePage(t, page)
	b := browser(t)

	depth := func(path string) int64 {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			if n := h.count("SELECT count() FROM engagements WHERE site_id = ? AND pathname = ?", string(site.ID), path); n > 0 {
				return h.count("SELECT toUInt64(max(scroll_depth)) FROM engagements WHERE site_id = ? AND pathname = ?", string(site.ID), path)
			}
			if time.Now().After(deadline) {
				t.Fatalf("no scroll depth of %s", path)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	// the share of the page seen down to the window's bottom, as the page
	// itself measures it (the window's height is the browser's)
	measure := func() (seen, height float64) {
		t.Helper()
		if err := chromedp.Do(b, chromedp.Sleep(200*time.Millisecond)); err != nil { // the scroll event's frame
			t.Fatal(err)
		}
		seen, err := chromedp.Run(b, chromedp.Evaluate[float64](`innerHeight + scrollY`))
		if err != nil {
			t.Fatal(err)
		}
		if height, err = chromedp.Run(b, chromedp.Evaluate[float64](`document.scrollingElement.scrollHeight`)); err != nil {
			t.Fatal(err)
		}
		return seen, height
	}
	run := func(js string) {
		t.Helper()
		if _, err := chromedp.Run(b, chromedp.Evaluate[any](js)); err != nil {
			t.Fatal(err)
		}
	}
	if err := chromedp.Do(b, chromedp.Navigate(origin+"/long"), chromedp.WaitReady(chromedp.ID("top"))); err != nil {
		t.Fatal(err)
	}
	run(`scrollTo(0, 1000)`)
	seen, height := measure()
	want := int64(math.Round(seen / height * 100))
	if want <= 0 || want >= 100 {
		t.Fatalf("the window shows %.0f of %.0f px: not a page to scroll", seen, height)
	}
	// an app's next page: the one left reports how far it was scrolled
	run(`history.pushState({}, '', '/next')`)
	if got := depth("/long"); got != want {
		t.Errorf("/long scrolled to %d %%, want %d (%.0f of %.0f px)", got, want, seen, height)
	}
	// scrolled to its end, then left: the page is hidden and reports 100 %
	run(`scrollTo(0, 4000)`)
	measure()
	if err := chromedp.Do(b, chromedp.Navigate("about:blank")); err != nil {
		t.Fatal(err)
	}
	if got := depth("/next"); got != 100 {
		t.Errorf("/next scrolled to %d %%, want 100", got)
	}
	h.waitCount(2, "SELECT count() FROM events WHERE site_id = ? AND name = 'pageview'", string(site.ID))
	if n := h.count("SELECT count() FROM events WHERE site_id = ? AND name = 'engagement'", string(site.ID)); n != 0 {
		t.Errorf("%d scroll depths were stored as events", n)
	}
}

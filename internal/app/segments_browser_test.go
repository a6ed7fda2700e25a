package app_test

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/tally-analytics/tally/pkg/client"
)

// Segments in a real browser, over the five visits of seedSegmentSite:
// filter the dashboard, save the filters as a segment (a taken name first
// is refused in place), clear the filters, pick the segment: the dashboard
// shows the API's numbers of the segment; delete it. Each state passes the
// accessibility checks.
func TestSegmentsInABrowser(t *testing.T) {
	h := seedSegmentSite(t)
	ctx := context.Background()
	site := string(h.siteID)
	c := h.client(h.key)
	b := browser(t)
	run, text := steps(t, b), textOf(t, b)
	location := func() string { return evalJS[string](t, b, "location.pathname + location.search") }
	waitCards := func() {
		t.Helper()
		if _, err := chromedp.Run(b, chromedp.Poll[bool](`document.querySelectorAll('[data-card]').length > 0 &&
			document.querySelectorAll('[data-card]:not([data-loaded])').length === 0`, chromedp.WithPollingTimeout(30*time.Second))); err != nil {
			t.Fatalf("waiting for the cards: %v", err)
		}
	}
	week := "range=custom&from=2026-05-01&to=2026-05-07"
	run("log in", chromedp.Navigate(h.srv.URL+"/login"), chromedp.WaitVisible(css(`#email`)),
		chromedp.SendKeys(css(`#email`), h.email), chromedp.SendKeys(css(`#password`), password),
		chromedp.Submit(css(`#password`)), chromedp.WaitVisible(css(`.site-list`)))

	// the desktop visits with a plan-pro Signup: ann and cat
	filtered := url.Values{"range": {"custom"}, "from": {"2026-05-01"}, "to": {"2026-05-07"}, "device": {"Desktop"}, "props[plan]": {"pro"}}
	run("filtered dashboard", chromedp.Navigate(h.srv.URL+"/sites/"+site+"?"+filtered.Encode()), chromedp.WaitVisible(css(`#segment-name`)))
	if n := evalJS[int](t, b, `document.querySelectorAll('.segment-picker').length`); n != 0 {
		t.Errorf("a site without segments shows %d pickers", n)
	}
	waitCards()
	audit(t, b, "dashboard with filters to save")
	run("save", chromedp.SendKeys(css(`#segment-name`), "Desktop on pro"), chromedp.Submit(css(`#segment-name`)),
		chromedp.WaitVisible(css(`.segments .notice`)))
	if got := text(`.segment-picker summary`); got != "Segments (1): Desktop on pro applied" {
		t.Errorf("after saving, the picker reads %q", got)
	}
	list, err := c.Segments(ctx, site)
	if err != nil || len(list) != 1 || list[0].Name != "Desktop on pro" || len(list[0].Filters) != 2 ||
		list[0].Filters["device"] != "Desktop" || list[0].Filters["props[plan]"] != "pro" {
		t.Fatalf("the saved segment: %+v, %v", list, err)
	}
	waitCards()
	audit(t, b, "dashboard after saving a segment")
	run("a taken name", chromedp.SendKeys(css(`#segment-name`), "DESKTOP on pro"), chromedp.Submit(css(`#segment-name`)),
		chromedp.WaitVisible(css(`#segment-error`)))
	if msg := text(`#segment-error`); !strings.Contains(msg, `already has a segment named "DESKTOP on pro"`) {
		t.Errorf("the refusal reads %q", msg)
	}
	waitCards()
	audit(t, b, "dashboard with a refused segment")

	// without filters, pick the segment: its filters are the URL's
	run("unfiltered", chromedp.Navigate(h.srv.URL+"/sites/"+site+"?"+week), chromedp.WaitVisible(css(`.segment-picker summary`)))
	waitCards()
	run("open the picker", chromedp.Click(css(`.segment-picker summary`), chromedp.NodeVisible),
		chromedp.WaitVisible(css(`li[data-segment="Desktop on pro"] a`)))
	audit(t, b, "dashboard with the segment picker open")
	run("apply", chromedp.Click(css(`li[data-segment="Desktop on pro"] a`), chromedp.NodeVisible),
		chromedp.WaitVisible(css(`.chip[data-filter="props[plan]"]`)))
	if u, _ := url.Parse(location()); u.Query().Get("device") != "Desktop" || u.Query().Get("props[plan]") != "pro" || u.Query().Get("from") != "2026-05-01" {
		t.Fatalf("after applying the segment: %s", location())
	}
	waitCards()
	p := client.StatsParams{SiteID: site, DateFrom: "2026-05-01", DateTo: "2026-05-07", Segment: list[0].ID}
	overview, err := c.Overview(ctx, p)
	if err != nil || overview.Data.Metrics.Visitors != 2 || overview.Data.Metrics.Pageviews != 3 {
		t.Fatalf("the API's overview of the segment: %+v, %v; want ann's and cat's 2 visitors and 3 pageviews", overview.Data.Metrics, err)
	}
	checkMetrics(t, b, overview)
	audit(t, b, "dashboard with a segment applied")

	// delete it: the view stays, the picker goes
	run("delete", chromedp.Click(css(`.segment-picker summary`), chromedp.NodeVisible),
		chromedp.Click(css(`li[data-segment="Desktop on pro"] button`), chromedp.NodeVisible),
		chromedp.WaitVisible(css(`.segments .notice`)))
	if n := evalJS[int](t, b, `document.querySelectorAll('.segment-picker').length`); n != 0 || !strings.Contains(location(), "device=Desktop") {
		t.Errorf("after deleting: %d pickers, at %s", n, location())
	}
	if list, err := c.Segments(ctx, site); err != nil || len(list) != 0 {
		t.Errorf("after deleting: %+v, %v", list, err)
	}
	waitCards()
	audit(t, b, "dashboard after deleting a segment")
}

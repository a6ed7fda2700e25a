package app_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/tally-analytics/tally/pkg/api"
	"github.com/tally-analytics/tally/pkg/client"
)

// A shared dashboard in a real browser that never logged in: every card
// loads, with the API's numbers; the page passes the accessibility checks
// the dashboard does; clicking a source filters the shared dashboard, under
// its link.
func TestShareInABrowser(t *testing.T) {
	h := newHarness(t)
	seedShareSite(t, h)
	ctx := context.Background()
	c := h.client(h.key)
	link, err := c.CreateSharedLink(ctx, string(h.siteID), api.SharedLinkRequest{Label: "browser", ShowRevenue: true})
	if err != nil {
		t.Fatal(err)
	}
	b := browser(t)
	waitCards := func() {
		t.Helper()
		if _, err := chromedp.Run(b, chromedp.Poll[bool](`document.querySelectorAll('[data-card]').length > 0 &&
			document.querySelectorAll('[data-card]:not([data-loaded])').length === 0`, chromedp.WithPollingTimeout(30*time.Second))); err != nil {
			t.Fatalf("waiting for the cards: %v", err)
		}
	}
	if err := chromedp.Do(b, chromedp.Navigate(h.srv.URL+"/share/"+link.Token+"?"+shareWeek), chromedp.WaitVisible(chromedp.CSS(`.cards`))); err != nil {
		t.Fatal(err)
	}
	waitCards()
	if errs := evalJS[int](t, b, `document.querySelectorAll('.card-error').length`); errs != 0 {
		t.Fatalf("%d cards of the shared dashboard failed to load", errs)
	}
	week := client.StatsParams{SiteID: string(h.siteID), DateFrom: "2026-05-01", DateTo: "2026-05-07"}
	overview, err := c.Overview(ctx, week)
	if err != nil {
		t.Fatal(err)
	}
	checkMetrics(t, b, overview)
	if n := evalJS[int](t, b, `document.querySelectorAll('a[href^="/sites"], a[href*="/settings"], a#download, form.logout').length`); n != 0 {
		t.Errorf("the shared dashboard has %d links to the sites, the settings, the download or a logout", n)
	}
	audit(t, b, "shared dashboard")

	if err := chromedp.Do(b, chromedp.Click(chromedp.CSS(`#card-sources tr[data-row="Google"] a`), chromedp.NodeVisible),
		chromedp.WaitVisible(chromedp.CSS(`.chip[data-filter=source]`))); err != nil {
		t.Fatalf("filtering by Google: %v", err)
	}
	if u := evalJS[string](t, b, "location.pathname + location.search"); !strings.HasPrefix(u, "/share/"+link.Token+"?") ||
		!strings.Contains(u, "source=Google") {
		t.Fatalf("after clicking Google: %s, want the shared dashboard filtered", u)
	}
	waitCards()
	week.Source = "Google"
	if overview, err = c.Overview(ctx, week); err != nil || overview.Data.Metrics.Visitors != 1 {
		t.Fatalf("the API's visitors from Google: %+v, %v; want 1 (c)", overview.Data.Metrics, err)
	}
	checkMetrics(t, b, overview)
	audit(t, b, "filtered shared dashboard")
}

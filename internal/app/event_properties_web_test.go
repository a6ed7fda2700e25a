package app_test

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/tally-analytics/tally/pkg/client"
)

// The events card opens an event's props in place: its keys, then a key's
// values, each the API's numbers (TestEventProperties works them out).
func TestEventPropertiesCard(t *testing.T) {
	h, _, site := eventPropertiesSite(t)
	w := newWebUser(t, h)
	w.login(h.email)
	view := "?range=custom&from=2026-05-01&to=2026-05-07"
	card := "/sites/" + site + "/cards/events" + view
	body := w.expect(http.MethodGet, card, nil, http.StatusOK)
	drill := `href="/sites/` + site + `/cards/events?event=Signup&amp;from=2026-05-01&amp;range=custom&amp;to=2026-05-07" data-tab`
	if !strings.Contains(body, drill) {
		t.Errorf("the events card does not open Signup in place:\n%s", body)
	}
	body = w.expect(http.MethodGet, card+"&event=Signup", nil, http.StatusOK)
	for _, want := range []string{"Properties of Signup", `<tr data-row="plan">`, `data-col="unique_visitors" data-value="5"`,
		`<tr data-row="coupon">`, `<tr data-row="seats">`, `aria-current="true" class="active">Properties</a>`} {
		if !strings.Contains(body, want) {
			t.Errorf("Signup's keys lack %s:\n%s", want, body)
		}
	}
	body = w.expect(http.MethodGet, card+"&event=Signup&property=plan", nil, http.StatusOK)
	for _, want := range []string{"Signup by plan", `<tr data-row="(none)">`, `data-col="conversion_rate" data-value="71.4"`,
		`aria-current="true" class="active">plan</a>`} {
		if !strings.Contains(body, want) {
			t.Errorf("Signup by plan lacks %s:\n%s", want, body)
		}
	}
	// a value filters the dashboard by the prop; (none) cannot
	filter := `<a href="/sites/` + site + `?from=2026-05-01&amp;props%5Bplan%5D=pro&amp;range=custom&amp;to=2026-05-07" title="Filter the dashboard by pro">`
	if !strings.Contains(body, filter) || strings.Contains(body, `<a href="/sites/`+site+`?from=2026-05-01&amp;props%5Bplan%5D=%28none%29`) {
		t.Errorf("Signup by plan: pro does not filter the dashboard, or (none) does:\n%s", body)
	}
	// the dashboard filtered by it shows the filter, and its cards apply it:
	// the four visits with a pro Signup (TestPropFilters)
	page := w.expect(http.MethodGet, "/sites/"+site+view+"&props%5Bplan%5D=pro", nil, http.StatusOK)
	if !strings.Contains(page, `<span class="chip" data-filter="props[plan]">plan: <strong>pro</strong>`) ||
		!strings.Contains(page, `<input type="hidden" name="props[plan]" value="pro">`) {
		t.Errorf("the dashboard filtered by plan pro shows no chip:\n%s", page)
	}
	overview := w.expect(http.MethodGet, "/sites/"+site+"/cards/overview"+view+"&props%5Bplan%5D=pro", nil, http.StatusOK)
	if !strings.Contains(overview, `data-value="4"`) {
		t.Errorf("the overview card filtered by plan pro does not count 4 visitors:\n%s", overview)
	}
	// an event name is escaped where the card says it has no props
	body = w.expect(http.MethodGet, card+"&event="+url.QueryEscape("<b>x</b>"), nil, http.StatusOK)
	if strings.Contains(body, "<b>x</b>") || !strings.Contains(body, "No properties on &lt;b&gt;x&lt;/b&gt;") {
		t.Errorf("an unknown event's card:\n%s", body)
	}
	// the report's rules apply to the card
	for _, q := range []string{"&event=pageview", "&event=" + strings.Repeat("a", 121), "&event=Signup&property=" + strings.Repeat("k", 51)} {
		if status, _, _ := w.do(http.MethodGet, card+q, nil); status != http.StatusBadRequest {
			t.Errorf("events card%.60s: %d, want 400", q, status)
		}
	}
}

// In a browser: click an event, then a property; the values are the API's,
// and the page with the breakdown open passes the accessibility checks.
func TestEventPropertiesCardInABrowser(t *testing.T) {
	h, c, site := eventPropertiesSite(t)
	h.clock.Set(time.Date(2026, 5, 8, 12, 0, 0, 0, time.UTC))
	b := browser(t)
	run := steps(t, b)
	run("log in", chromedp.Navigate(h.srv.URL+"/login"), chromedp.WaitVisible(css(`#email`)),
		chromedp.SendKeys(css(`#email`), h.email), chromedp.SendKeys(css(`#password`), password),
		chromedp.Submit(css(`#password`)), chromedp.WaitVisible(css(`.site-list`)))
	run("dashboard", chromedp.Navigate(h.srv.URL+"/sites/"+site+"?range=custom&from=2026-05-01&to=2026-05-07"),
		chromedp.WaitVisible(css(`#card-events tr[data-row="Signup"] a`)))
	run("open Signup", chromedp.Click(css(`#card-events tr[data-row="Signup"] a`), chromedp.NodeVisible),
		chromedp.WaitVisible(css(`#card-events tr[data-row="plan"] a`)))
	run("open plan", chromedp.Click(css(`#card-events tr[data-row="plan"] a`), chromedp.NodeVisible),
		chromedp.WaitVisible(css(`#card-events tr[data-row="(none)"]`)))
	res, err := c.EventPropertyValues(context.Background(), client.StatsParams{SiteID: site, DateFrom: "2026-05-01",
		DateTo: "2026-05-07", EventName: "Signup", Property: "plan"})
	if err != nil {
		t.Fatal(err)
	}
	shown := evalJS[map[string]string](t, b, `Object.fromEntries([...document.querySelectorAll('#card-events tbody tr')].map(r =>
		[r.dataset.row, r.querySelector('[data-col=unique_visitors]').dataset.value + ' ' +
			r.querySelector('[data-col=total_count]').dataset.value + ' ' + r.querySelector('[data-col=conversion_rate]').dataset.value]))`)
	if len(shown) != len(res.Data) || len(res.Data) != 3 {
		t.Errorf("the card shows %v, the API %+v", shown, res.Data)
	}
	for _, row := range res.Data {
		want := strconv.FormatInt(row.UniqueVisitors, 10) + " " + strconv.FormatInt(row.TotalCount, 10) + " " +
			strconv.FormatFloat(row.ConversionRate, 'f', -1, 64)
		if shown[row.Value] != want {
			t.Errorf("%s: the card shows %q, the API %q", row.Value, shown[row.Value], want)
		}
	}
	if focused := evalJS[string](t, b, `document.activeElement.textContent`); focused != "plan" {
		t.Errorf("after opening plan, the focus is on %q, want its tab", focused)
	}
	audit(t, b, "dashboard with an event's property")
	run("back to every event", chromedp.Click(css(`#card-events nav.tabs a`), chromedp.NodeVisible),
		chromedp.WaitVisible(css(`#card-events tr[data-row="Download"]`)))
}

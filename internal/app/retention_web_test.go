package app_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The retention card is the API's table (TestRetention works its numbers
// out): by the day for two weeks, by the week on its tab, each share shaded
// by its size and its visitors written out for screen readers.
func TestRetentionCard(t *testing.T) {
	h, _, site := retentionSite(t)
	w := newWebUser(t, h)
	w.login(h.email)
	card := "/sites/" + site + "/cards/retention?range=custom&from=2026-05-01&to=2026-05-14"
	body := w.expect(http.MethodGet, card, nil, http.StatusOK)
	// 14 days go by the day: Day 0 to Day 13; ann's first day (May 1) and
	// her returns on May 5 (day 4) and 12 (day 11), alone in her cohort
	for _, want := range []string{`aria-current="true" class="active">Days</a>`, `<th scope="col" class="num">Day 13</th>`,
		`<tr data-row="2026-05-01">`, `data-col="period_4" data-value="100" data-visitors="1"`,
		`data-col="period_11" data-value="100" data-visitors="1"`, `>Weeks</a>`, `>Months</a>`} {
		if !strings.Contains(body, want) {
			t.Errorf("the card by the day lacks %s:\n%s", want, body)
		}
	}
	body = w.expect(http.MethodGet, card+"&tab=week", nil, http.StatusOK)
	for _, want := range []string{`aria-current="true" class="active">Weeks</a>`,
		`<tr data-row="2026-04-27">`, `<span>Apr 27</span>`, `data-col="visitors" data-value="4"`,
		// 1 of 4 (25 %: up to a quarter, shade 2), 2 of 4 (50 %: shade 3)
		`<td class="num shade-2" data-col="period_1" data-value="25" data-visitors="1" title="1 visitor">25.0%<span class="visually-hidden"> (1 visitor)</span></td>`,
		`<td class="num shade-3" data-col="period_2" data-value="50" data-visitors="2"`,
		// the cohort of May 4: eve, 1 of 3, and no week after the range's last
		`<td class="num shade-3" data-col="period_1" data-value="33.3" data-visitors="1"`,
		`<tr data-row="2026-05-11">`} {
		if !strings.Contains(body, want) {
			t.Errorf("the card by the week lacks %s:\n%s", want, body)
		}
	}
	// a range of 120 days has too many days: no tab for them, weeks by default
	body = w.expect(http.MethodGet, "/sites/"+site+"/cards/retention?range=custom&from=2026-01-15&to=2026-05-14&tab=day", nil, http.StatusOK)
	if strings.Contains(body, ">Days</a>") || !strings.Contains(body, `aria-current="true" class="active">Weeks</a>`) {
		t.Errorf("120 days by the day:\n%s", body)
	}
}

// In a browser, in both themes: the dashboard with the retention card
// passes the accessibility checks (the shades' contrast among them).
func TestRetentionCardInABrowser(t *testing.T) {
	h, _, site := retentionSite(t)
	h.clock.Set(time.Date(2026, 5, 15, 12, 0, 0, 0, time.UTC))
	b := browser(t)
	run := steps(t, b)
	run("log in", chromedp.Navigate(h.srv.URL+"/login"), chromedp.WaitVisible(css(`#email`)),
		chromedp.SendKeys(css(`#email`), h.email), chromedp.SendKeys(css(`#password`), password),
		chromedp.Submit(css(`#password`)), chromedp.WaitVisible(css(`.site-list`)))
	run("dashboard", chromedp.Navigate(h.srv.URL+"/sites/"+site+"?range=custom&from=2026-05-01&to=2026-05-14"),
		chromedp.WaitVisible(css(`#card-retention tr[data-row="2026-05-01"]`)))
	run("by the week", chromedp.Click(css(`#card-retention nav.tabs a:nth-child(2)`), chromedp.NodeVisible),
		chromedp.WaitVisible(css(`#card-retention tr[data-row="2026-04-27"]`)))
	shades := evalJS[[]string](t, b, `[...document.querySelectorAll('#card-retention tr[data-row="2026-04-27"] td[data-col^=period_]')].map(td => td.className)`)
	if strings.Join(shades, " ") != "num shade-5 num shade-2 num shade-3" {
		t.Errorf("the first cohort's shades: %q", shades)
	}
	audit(t, b, "dashboard with the retention card")
}

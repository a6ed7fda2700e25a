package app_test

import (
	"html"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The devices card drills down as the locations card does: filtered by a
// browser, it opens on that browser's versions, each a link that filters by
// the version; filtered by a system, on the system's. The numbers are the
// scenario's (stats_scenario_test.go), in the week of May 1..7.
func TestDevicesCardDrillsDownToVersions(t *testing.T) {
	h, _, site := scenarioSite(t)
	h.clock.Set(time.Date(2026, 5, 8, 3, 0, 0, 0, time.UTC))
	w := newWebUser(t, h)
	w.login(h.email)
	card := "/sites/" + site + "/cards/devices?range=7d"
	row := regexp.MustCompile(`(?s)<tr data-row="([^"]*)">.*?(?:href="([^"]*)".*?)?data-col="visitors" data-value="(\d+)"`)
	rows := func(body string) []string {
		var out []string
		for _, m := range row.FindAllStringSubmatch(body, -1) {
			out = append(out, m[1]+" "+m[3]+" "+html.UnescapeString(m[2]))
		}
		return out
	}
	for _, c := range []struct {
		query, note string
		want        []string
	}{
		// alice 121.0; erin and gina 120.0
		{"&browser=Chrome", "Versions of Chrome", []string{
			"120.0 2 /sites/" + site + "?browser=Chrome&browser_version=120.0&range=7d",
			"121.0 1 /sites/" + site + "?browser=Chrome&browser_version=121.0&range=7d"}},
		// bob's iPhone 17.1, carol's iPad 16.6
		{"&os=iOS", "Versions of iOS", []string{
			"16.6 1 /sites/" + site + "?os=iOS&os_version=16.6&range=7d",
			"17.1 1 /sites/" + site + "?os=iOS&os_version=17.1&range=7d"}},
		// the browsers tab of a view filtered by a system lists browsers
		{"&os=iOS&tab=browser", "", []string{
			"Safari 2 /sites/" + site + "?browser=Safari&os=iOS&range=7d"}},
		// a version filters the card: Chrome 120.0 is on Android phones
		{"&browser=Chrome&browser_version=120.0&tab=device", "", []string{
			"Mobile 2 /sites/" + site + "?browser=Chrome&browser_version=120.0&device=Mobile&range=7d"}},
	} {
		body := w.expect(http.MethodGet, card+c.query, nil, http.StatusOK)
		if got := rows(body); strings.Join(got, "\n") != strings.Join(c.want, "\n") {
			t.Errorf("%s: rows\n%s\nwant\n%s", c.query, strings.Join(got, "\n"), strings.Join(c.want, "\n"))
		}
		if c.note != "" && !strings.Contains(body, `<p class="note">`+c.note+`</p>`) {
			t.Errorf("%s: no note %q", c.query, c.note)
		}
	}
	// the dashboard names the version filters
	page := w.expect(http.MethodGet, "/sites/"+site+"?range=7d&browser=Chrome&browser_version=120.0", nil, http.StatusOK)
	if !strings.Contains(page, "Browser version") {
		t.Error("the dashboard does not name the browser_version filter")
	}
}

package app_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The dashboard's "Right now" card counts the visitors of the last 5
// minutes, with their current pages and where they came from: v1 and v2 on
// /a (v1 from Google, after /b), v3 on /b from Google, v4's visit an hour
// ago left out. So 3 visitors; pages /a 2, /b 1; sources Google 2, Direct /
// None 1.
func TestRealtimeCard(t *testing.T) {
	h := newHarness(t)
	sendPageviews(t, h, h.siteID,
		[4]string{"v4", "2026-06-01 11:00:00", "/c", ""},
		[4]string{"v1", "2026-06-01 11:58:00", "/b", "https://www.google.com/"},
		[4]string{"v1", "2026-06-01 11:59:00", "/a", ""},
		[4]string{"v2", "2026-06-01 11:59:30", "/a", ""},
		[4]string{"v3", "2026-06-01 11:59:40", "/b", "https://www.google.com/"})
	h.waitCount(5, "SELECT count() FROM events WHERE site_id = ?", string(h.siteID))
	h.clock.Set(time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC))
	w := newWebUser(t, h)
	w.login(h.email)
	body := w.expect(http.MethodGet, "/sites/"+string(h.siteID)+"/cards/realtime", nil, http.StatusOK)
	rows := func(report string) string {
		t.Helper()
		i := strings.Index(body, `data-report="`+report+`"`)
		if i < 0 {
			t.Fatalf("no %s in the card:\n%s", report, body)
		}
		table := body[i : i+strings.Index(body[i:], "</table>")]
		var out []string
		for _, m := range regexp.MustCompile(`<tr data-row="([^"]+)">.*?data-value="(\d+)"`).FindAllStringSubmatch(table, -1) {
			out = append(out, m[1]+" "+m[2])
		}
		return strings.Join(out, ", ")
	}
	if !strings.Contains(body, `data-metric="active_visitors" data-value="3"`) {
		t.Errorf("the card does not count 3 visitors:\n%s", body)
	}
	if got := rows("current-pages"); got != "/a 2, /b 1" {
		t.Errorf("current pages: %s", got)
	}
	if got := rows("current-sources"); got != "Google 2, Direct / None 1" {
		t.Errorf("current sources: %s", got)
	}
}

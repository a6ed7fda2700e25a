package spikes

import (
	"strings"
	"testing"
	"time"

	"github.com/tally-analytics/tally/internal/model"
)

// A notification lists the top five sources and pages, writes the moment
// in the site's zone, escapes what visitors sent in the HTML part, and has
// no link at all without a public URL.
func TestMessage(t *testing.T) {
	var pages []model.VisitorCount
	for _, p := range []string{"/<script>", "/a", "/b", "/c", "/d", "/sixth"} {
		pages = append(pages, model.VisitorCount{Value: p, Visitors: 1})
	}
	sp := Spike{Site: model.Site{ID: "s1", Domain: "shop.example", Timezone: "Europe/Berlin"}, Threshold: 1000,
		Realtime: model.Realtime{Visitors: 1234, Pages: pages, Sources: []model.VisitorCount{{Value: "Google", Visitors: 1200}}},
		At:       time.Date(2026, 6, 1, 12, 4, 0, 0, time.UTC)}
	msg, err := sp.Message("reports@tally.example", "reader@reports.example", "", "https://ignored.example/u")
	if err != nil {
		t.Fatal(err)
	}
	if msg.Subject != "Traffic spike on shop.example: 1,234 current visitors" {
		t.Errorf("subject %q", msg.Subject)
	}
	for _, part := range []string{msg.Text, msg.HTML} {
		if !strings.Contains(part, "current visitors (in the last 5 minutes) at 14:04 on Mon 1 June 2026 (Europe/Berlin); the threshold is 1,000.") ||
			!strings.Contains(part, "Google") || !strings.Contains(part, "/d") || strings.Contains(part, "/sixth") {
			t.Errorf("a part lacks the count, the moment or the top five, or lists a sixth:\n%s", part)
		}
		if strings.Contains(part, "http") || strings.Contains(part, "nsubscribe") {
			t.Errorf("a link without a public URL:\n%s", part)
		}
	}
	if msg.Unsubscribe != "" {
		t.Errorf("an unsubscribe header without a public URL: %q", msg.Unsubscribe)
	}
	if strings.Contains(msg.HTML, "<script>") || !strings.Contains(msg.HTML, "/&lt;script&gt;") {
		t.Errorf("the page path is not escaped:\n%s", msg.HTML)
	}
}

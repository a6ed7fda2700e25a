package emailreports

import (
	"strings"
	"testing"
	"time"

	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/stats"
)

// Without a public URL a report has no link; what visitors sent (a page
// path) is escaped in the HTML part.
func TestMessageWithoutPublicURL(t *testing.T) {
	day := func(d int) time.Time { return time.Date(2026, 6, d, 0, 0, 0, 0, time.UTC) }
	rep := Report{Site: model.Site{ID: "s1", Domain: "shop.example"}, Period: Period{Kind: model.ReportWeekly, First: day(1), Last: day(7)},
		Overview: stats.Overview{Meta: stats.Meta{Timezone: "UTC"}, Metrics: stats.Metrics{Visitors: 1, Pageviews: 1}},
		Pages:    []stats.PageRow{{Path: `/<script>alert(1)</script>`, Pageviews: 1}}}
	msg, err := rep.Message("reports@tally.example", "reader@reports.example", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, part := range []string{msg.Text, msg.HTML} {
		if strings.Contains(part, "http") || strings.Contains(part, "dashboard") {
			t.Errorf("a link without a public URL:\n%s", part)
		}
		if !strings.Contains(part, "Settings page") || !strings.Contains(part, "No visits in this period.") {
			t.Errorf("no unsubscribe note or no empty sources line:\n%s", part)
		}
	}
	if strings.Contains(msg.HTML, "<script>") || !strings.Contains(msg.HTML, "&lt;script&gt;") {
		t.Errorf("the page path is not escaped:\n%s", msg.HTML)
	}
	if !strings.Contains(msg.Text, "Visitors        1         –") {
		t.Errorf("the text part's headline without a comparison:\n%s", msg.Text)
	}
}

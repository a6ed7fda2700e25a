package httpapi

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/tally-analytics/tally/pkg/api"
)

// BenchmarkDecodeBatch decodes a batch body of 1,000 pageviews as the batch
// route does.
func BenchmarkDecodeBatch(b *testing.B) {
	events := make([]api.CustomEventRequest, 1000)
	for i := range events {
		events[i] = api.CustomEventRequest{PageviewRequest: api.PageviewRequest{SiteID: "k3v9x0q2m1ab",
			URL:       fmt.Sprintf("https://example.com/docs/page-%d?utm_source=x%d", i%50, i%7),
			Referrer:  "https://www.google.com/search?q=x",
			UserAgent: "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36",
			IPAddress: fmt.Sprintf("81.2.69.%d", i%250), VisitorID: fmt.Sprintf("v-%d", i%300)}}
		if i%3 == 0 {
			events[i].EventName, events[i].Props = "Signup", map[string]any{"plan": "pro", "seats": 3}
		}
	}
	body, err := json.Marshal(api.BatchRequest{Events: events})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		var req api.BatchRequest
		if err := decodeBody(body, &req); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1000/1000, "µs/event")
}

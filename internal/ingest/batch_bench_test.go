package ingest

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/tally-analytics/tally/internal/accounts"
	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/model"
)

// openSite lets every principal send to one site.
type openSite struct{ site model.Site }

func (o openSite) Site(context.Context, model.SiteID) (model.Site, error) { return o.site, nil }
func (o openSite) Check(context.Context, auth.Principal, model.SiteID, accounts.Action) (model.Site, model.Role, error) {
	return o.site, model.RoleOwner, nil
}

// encodingWriter encodes records as the write buffer does, and keeps nothing.
type encodingWriter struct{ buf []byte }

func (w *encodingWriter) WriteMany(_ context.Context, recs []model.Record) error {
	w.buf = w.buf[:0]
	for _, r := range recs {
		w.buf = model.AppendRecord(w.buf, r)
	}
	return nil
}

// BenchmarkTrackBatch is the ingest service's work for a batch of 1,000
// varied pageviews: validation, enrichment, records, their WAL encoding.
func BenchmarkTrackBatch(b *testing.B) {
	s, p, ins := benchService()
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		res, err := s.TrackBatch(ctx, p, ins)
		if err != nil || res[0].Err != nil {
			b.Fatal(err, res[0].Err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1000/1000, "µs/event")
}

// BenchmarkTrack is the ingest service's work for one event of the Events
// API, the same varied pageviews one at a time: what a single-event request
// costs past its decoding.
func BenchmarkTrack(b *testing.B) {
	s, p, ins := benchService()
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		if _, err := s.Track(ctx, p, ins[i%len(ins)]); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// benchService is an ingest service over a site every principal may send
// to, the principal, and 1,000 varied pageviews.
func benchService() (*Service, auth.Principal, []Input) {
	e := newTestEnricher(&testing.T{})
	site := model.Site{ID: "s1", Domain: "example.com", BaseCurrency: "USD"}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	s := NewService(openSite{site}, e, &encodingWriter{}, nil, nil, nil,
		func() time.Time { return time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC) }, log, nil)
	uas := []string{chromeMac,
		"Mozilla/5.0 (iPhone; CPU iPhone OS 17_2 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.2 Mobile/15E148 Safari/604.1",
		"Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:121.0) Gecko/20100101 Firefox/121.0",
		"Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Mobile Safari/537.36"}
	refs := []string{"", "https://www.google.com/search?q=x", "https://news.ycombinator.com/item?id=1", "https://t.co/abc"}
	ins := make([]Input, 1000)
	for i := range ins {
		ins[i] = Input{Pageview: true, SiteID: "s1", URL: fmt.Sprintf("https://example.com/docs/page-%d?utm_source=x%d", i%50, i%7),
			Referrer: refs[i%len(refs)], UserAgent: uas[i%len(uas)], IPAddress: fmt.Sprintf("81.2.69.%d", i%250),
			VisitorID: fmt.Sprintf("v-%d", i%300)}
	}
	p := auth.Principal{UserID: "u1", Scopes: []model.Scope{model.ScopeEventsWrite}}
	return s, p, ins
}

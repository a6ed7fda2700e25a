package ingest

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/model"
)

// checkingWriter checks that the records of one WriteMany are the events of
// one request: each request's paths start with its own prefix.
type checkingWriter struct {
	mu     sync.Mutex
	errs   []string
	events int
}

func (w *checkingWriter) WriteMany(_ context.Context, recs []model.Record) error {
	prefix, _, _ := strings.Cut(strings.TrimPrefix(recs[0].Event.Pathname, "/"), "/")
	bad := 0
	for _, r := range recs {
		if !strings.HasPrefix(r.Event.Pathname, "/"+prefix+"/") {
			bad++
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.events += len(recs)
	if bad > 0 || len(recs) != 200 {
		w.errs = append(w.errs, fmt.Sprintf("a write of %d records, %d of them not from request %s", len(recs), bad, prefix))
	}
	return nil
}

// Requests at once each keep their own drafts and rows, though accept
// reuses that room from one request to the next.
func TestConcurrentBatchesKeepTheirRows(t *testing.T) {
	site := model.Site{ID: "s1", Domain: "example.com", BaseCurrency: "USD"}
	w := &checkingWriter{}
	s := NewService(openSite{site}, newTestEnricher(t), w, nil, nil, nil,
		func() time.Time { return time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC) }, slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
	p := auth.Principal{UserID: "u1", Scopes: []model.Scope{model.ScopeEventsWrite}}
	const workers, requests = 8, 25
	var wg sync.WaitGroup
	for g := range workers {
		wg.Go(func() {
			for r := range requests {
				ins := make([]Input, 200)
				for i := range ins {
					ins[i] = Input{Pageview: true, SiteID: "s1", URL: fmt.Sprintf("https://example.com/r%d-%d/p%d", g, r, i),
						UserAgent: chromeMac, IPAddress: "81.2.69.1", VisitorID: fmt.Sprintf("v%d", i)}
				}
				res, err := s.TrackBatch(context.Background(), p, ins)
				if err != nil {
					t.Error(err)
					return
				}
				for i, x := range res {
					if x.Err != nil || x.EventID == "" {
						t.Errorf("request %d-%d, event %d: %+v", g, r, i, x)
					}
				}
			}
		})
	}
	wg.Wait()
	if len(w.errs) > 0 || w.events != workers*requests*200 {
		t.Errorf("%d events written, want %d; %v", w.events, workers*requests*200, w.errs)
	}
}

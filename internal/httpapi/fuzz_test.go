package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/ingest"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/pkg/api"
)

// validating is an Ingester that runs the real validation and stores nothing.
type validating struct{}

func (validating) Track(_ context.Context, _ auth.Principal, in ingest.Input) (string, error) {
	return "id", ingest.Validate(in)
}

func (validating) TrackBrowser(_ context.Context, in ingest.Input, _ ingest.RevenueAllowance) (string, error) {
	in.Browser = true
	return "id", ingest.Validate(in)
}

func (validating) RefusedRequest(*auth.Principal, []string, error) {}

func (v validating) TrackBatch(ctx context.Context, p auth.Principal, ins []ingest.Input) ([]ingest.Result, error) {
	out := make([]ingest.Result, len(ins))
	for i, in := range ins {
		out[i].EventID, out[i].Err = v.Track(ctx, p, in)
	}
	return out, nil
}

// FuzzTrackerBody posts arbitrary bodies to /e: the answer is always 202 or
// a 4xx with the error envelope, never a 5xx or a panic.
func FuzzTrackerBody(f *testing.F) {
	for _, seed := range []string{
		`{"site_id":"s","event_name":"pageview","url":"https://example.com/","referrer":"https://google.com/","visitor_id":"abc"}`,
		`{"site_id":"s","event_name":"Signup","url":"https://example.com/","props":{"plan":"pro"},"revenue":{"amount":49.99,"currency":"EUR"}}`,
		`{"site_id":"s","event_name":"pageview","url":"https://example.com/?session_id=cs_1","checkout_session_id":"cs_1"}`,
		`{"event_name":7}`, `[]`, `null`, ``, `{"revenue":{"amount":"x"}}`, `{"props":{"a":[1]}}`,
	} {
		f.Add([]byte(seed))
	}
	s := New(Deps{Auth: stubAuth{}, Ingest: validating{}, Stats: struct{ Stats }{}, Goals: struct{ Goals }{},
		Limiter: allowAll{}, Log: discardLog(), MaxEventBody: 64 << 10})
	f.Fuzz(func(t *testing.T, body []byte) {
		req := httptest.NewRequest(http.MethodPost, "/e", bytes.NewReader(body))
		req.Header.Set("Content-Type", "text/plain")
		req.Header.Set("User-Agent", "Mozilla/5.0")
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, req)
		switch {
		case rec.Code == http.StatusAccepted:
		case rec.Code >= 400 && rec.Code < 500:
			if !bytes.Contains(rec.Body.Bytes(), []byte(`"error":{"code":`)) {
				t.Fatalf("%d without the error envelope: %s", rec.Code, rec.Body)
			}
		default:
			t.Fatalf("status %d for %q: %s", rec.Code, body, rec.Body)
		}
	})
}

// FuzzBatchBody posts arbitrary bodies to the batch endpoint: the answer is
// 200 with one result per event, or a 4xx with the error envelope; never a
// 5xx or a panic.
func FuzzBatchBody(f *testing.F) {
	for _, seed := range []string{
		`{"events":[{"site_id":"s1","url":"https://example.com/"}]}`,
		`{"events":[{"site_id":"s1","url":"https://example.com/","event_name":"Signup","props":{"plan":"pro","n":1.5}},` +
			`{"site_id":"s1","url":5},{"site_id":"s1","url":"https://example.com/","revenue":{"amount":"9.99","currency":"EUR"}}]}`,
		`{"events":[]}`, `{"events":{}}`, `{"events":[null,1,"x",[]]}`, `[]`, ``,
	} {
		f.Add([]byte(seed))
	}
	s := New(Deps{Auth: stubAuth{}, Ingest: validating{}, Stats: struct{ Stats }{}, Goals: struct{ Goals }{},
		Limiter: allowAll{}, Log: discardLog(), MaxEventBody: 64 << 10, MaxBatchBody: 1 << 20,
		Limits: Limits{EventsPerHour: map[model.Plan]int{model.PlanFree: 1 << 30}}})
	f.Fuzz(func(t *testing.T, body []byte) {
		req := httptest.NewRequest(http.MethodPost, "/api/v1/events/batch", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer good")
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, req)
		switch {
		case rec.Code == http.StatusOK:
			var resp api.BatchResponse
			if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil || len(resp.Results) == 0 ||
				resp.Accepted+resp.Rejected != len(resp.Results) {
				t.Fatalf("200 with a bad answer (%v): %s", err, rec.Body)
			}
			for i, r := range resp.Results {
				if r.Index != i || r.Success != (r.Error == nil) || r.Success != (r.EventID != "") {
					t.Fatalf("result %d inconsistent: %+v", i, r)
				}
			}
		case rec.Code >= 400 && rec.Code < 500:
			if !bytes.Contains(rec.Body.Bytes(), []byte(`"error":{"code":`)) {
				t.Fatalf("%d without the error envelope: %s", rec.Code, rec.Body)
			}
		default:
			t.Fatalf("status %d for %q: %s", rec.Code, body, rec.Body)
		}
	})
}

func serveOnce(s *Server, method, path string) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, httptest.NewRequest(method, path, nil))
	return rec
}

// FuzzPixelQuery loads the pixel with arbitrary query strings and Referers:
// the answer is always the image or a 4xx with the error envelope, never
// a 5xx or a panic.
func FuzzPixelQuery(f *testing.F) {
	for _, seed := range [][2]string{
		{"site_id=s&url=https%3A%2F%2Fexample.com%2F&referrer=https%3A%2F%2Fgoogle.com%2F&event_name=Open", ""},
		{"site_id=s", "https://example.com/a"},
		{"site_id=s&url=%zz&url=x;y&props%5Bplan%5D=pro", "android-app://com.google.android.gm/"},
		{"site_id=%FF&event_name=%00&referrer=%FF", "\xff"},
		{"&&=&site_id&url", ""},
	} {
		f.Add(seed[0], seed[1])
	}
	s := New(Deps{Auth: stubAuth{}, Ingest: validating{}, Stats: struct{ Stats }{}, Goals: struct{ Goals }{},
		Limiter: allowAll{}, Log: discardLog(), MaxEventBody: 64 << 10})
	f.Fuzz(func(t *testing.T, query, referer string) {
		req := httptest.NewRequest(http.MethodGet, "/p.gif", nil)
		req.URL.RawQuery = query
		req.Header.Set("Referer", referer)
		req.Header.Set("User-Agent", "Mozilla/5.0")
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, req)
		switch {
		case rec.Code == http.StatusOK:
			if !bytes.Equal(rec.Body.Bytes(), pixelGIF) {
				t.Fatalf("200 without the image: %q", rec.Body)
			}
		case rec.Code >= 400 && rec.Code < 500:
			if !bytes.Contains(rec.Body.Bytes(), []byte(`"error":{"code":`)) {
				t.Fatalf("%d without the error envelope: %s", rec.Code, rec.Body)
			}
		default:
			t.Fatalf("status %d for ?%q (Referer %q): %s", rec.Code, query, referer, rec.Body)
		}
	})
}

package httpapi

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/export"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/ratelimit"
	"github.com/tally-analytics/tally/internal/stats"
)

// openRanges lets every caller export any site but "nosuchsite01".
type openRanges struct{}

func (openRanges) Range(_ context.Context, _ auth.Principal, r stats.Request) (stats.Range, error) {
	if r.SiteID == "nosuchsite01" {
		return stats.Range{}, errs.E(errs.NotFound, "site_not_found", "site not found").WithField("site_id")
	}
	return stats.Range{Site: model.Site{ID: r.SiteID}, Timezone: "UTC", From: r.DateFrom, To: r.DateTo.AddDate(0, 0, 1)}, nil
}

// rowStore streams n events, then fails with err (when set); done is
// closed when a stream returns.
type rowStore struct {
	n     int
	err   error
	delay time.Duration // before each row
	done  chan struct{}
	once  sync.Once
}

func (s *rowStore) EventHours(context.Context, model.SiteID, time.Time, time.Time) ([]export.HourCount, error) {
	return []export.HourCount{{Start: time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC), Events: int64(s.n)}}, nil
}

func (s *rowStore) StreamEvents(ctx context.Context, _ model.SiteID, from, _ time.Time, fn func(*model.EventRow) error) error {
	defer s.once.Do(func() { close(s.done) })
	row := model.EventRow{Name: "pageview", Pathname: "/a/page/with/a/rather/long/path", Timestamp: from,
		Attribution: model.Attribution{Hostname: "example.com", ReferrerSource: "Direct / None", SourceType: "direct"}}
	for i := range s.n {
		if err := ctx.Err(); err != nil {
			return err
		}
		time.Sleep(s.delay)
		row.EventID = fmt.Sprintf("event-%08d", i)
		if err := fn(&row); err != nil {
			return err
		}
	}
	return s.err
}

// countingLimiter allows everything and remembers the keys it was asked about.
type countingLimiter struct {
	mu   sync.Mutex
	keys []string
}

func (l *countingLimiter) AllowN(_ context.Context, key string, lim ratelimit.Limit, _ int) (ratelimit.Result, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.keys = append(l.keys, key)
	return ratelimit.Result{Allowed: true, Limit: lim.N, Remaining: lim.N - 1}, nil
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func exportServer(t *testing.T, store *rowStore, writeTimeout ...time.Duration) (*httptest.Server, *countingLimiter, *syncBuffer) {
	store.done = make(chan struct{})
	logs, lim := &syncBuffer{}, &countingLimiter{}
	s := New(Deps{Auth: stubAuth{}, Stats: struct{ Stats }{}, Goals: struct{ Goals }{}, Revenue: struct{ Revenue }{},
		SitesAPI: struct{ SitesAPI }{}, Export: export.NewEvents(openRanges{}, store), Limiter: lim,
		Log: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})), Limits: Limits{ExportsPerHour: 10}})
	srv := httptest.NewUnstartedServer(s.Handler())
	if len(writeTimeout) > 0 {
		srv.Config.WriteTimeout = writeTimeout[0]
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, lim, logs
}

func getExport(t *testing.T, srv *httptest.Server, query string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/api/v1/export/events?"+query, nil)
	req.Header.Set("Authorization", "Bearer good")
	res, err := http.DefaultClient.Do(req) // asks for gzip and decompresses
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Body.Close() })
	return res
}

const exportQuery = "site_id=s1&date_from=2026-05-01&date_to=2026-05-01"

// A complete export ends with its count in the trailer; the limit is asked
// once, after the request's checks.
func TestExportStreamsToItsEnd(t *testing.T) {
	srv, lim, _ := exportServer(t, &rowStore{n: 5000})
	res := getExport(t, srv, exportQuery)
	body, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != 200 || !res.Uncompressed {
		t.Fatalf("%d, gzip %v, %v", res.StatusCode, res.Uncompressed, err)
	}
	if n := bytes.Count(body, []byte("\n")); n != 5000 || res.Trailer.Get(RecordsTrailer) != "5000" {
		t.Errorf("%d lines, trailer %q; want 5000 of each", n, res.Trailer.Get(RecordsTrailer))
	}
	for _, q := range []string{"site_id=s1&date_from=2026-05-02&date_to=2026-05-01", "site_id=nosuchsite01&date_from=2026-05-01&date_to=2026-05-01"} {
		if res := getExport(t, srv, q); res.StatusCode != 400 && res.StatusCode != 404 {
			t.Errorf("%s: %d", q, res.StatusCode)
		}
	}
	if len(lim.keys) != 1 || lim.keys[0] != "exports:account:u1" {
		t.Errorf("limit asked for %v; want once, for the account", lim.keys)
	}
}

// A failure after the first byte cuts the answer short: the client cannot
// take it for a complete export.
func TestExportCutShortOnFailure(t *testing.T) {
	for _, gz := range []bool{false, true} {
		t.Run(fmt.Sprintf("gzip %v", gz), func(t *testing.T) {
			store := &rowStore{n: 3000, err: errors.New("clickhouse: connection reset")}
			srv, _, logs := exportServer(t, store)
			req, _ := http.NewRequest(http.MethodGet, srv.URL+"/api/v1/export/events?"+exportQuery, nil)
			req.Header.Set("Authorization", "Bearer good")
			if !gz {
				req.Header.Set("Accept-Encoding", "identity")
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			body, err := io.ReadAll(res.Body)
			if res.StatusCode != 200 || err == nil || res.Trailer.Get(RecordsTrailer) != "" {
				t.Fatalf("%d, read error %v, trailer %q: want 200 and a body cut short", res.StatusCode, err, res.Trailer.Get(RecordsTrailer))
			}
			if !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("read error %v, want an unexpected EOF", err)
			}
			if n := bytes.Count(body, []byte("\n")); n == 0 || n > 3000 {
				t.Errorf("%d records before the cut", n)
			}
			<-store.done
			waitFor(t, func() bool { return strings.Contains(logs.String(), "connection reset") })
			if !strings.Contains(logs.String(), "level=ERROR") {
				t.Errorf("the failure is not logged as an error:\n%s", logs)
			}
		})
	}
}

// An export outlives the server's write timeout, made for whole answers:
// the first byte may come late, and writes go on past it.
func TestExportOutlivesTheWriteTimeout(t *testing.T) {
	srv, _, _ := exportServer(t, &rowStore{n: 3000, delay: 500 * time.Microsecond}, 200*time.Millisecond)
	start := time.Now()
	res := getExport(t, srv, exportQuery)
	body, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != 200 || bytes.Count(body, []byte("\n")) != 3000 || res.Trailer.Get(RecordsTrailer) != "3000" {
		t.Fatalf("%d, %d lines, trailer %q, %v", res.StatusCode, bytes.Count(body, []byte("\n")), res.Trailer.Get(RecordsTrailer), err)
	}
	if took := time.Since(start); took < time.Second {
		t.Errorf("the export took %s: not longer than the write timeout, the test proves nothing", took)
	}
}

// A failure before the first byte is an error envelope.
func TestExportFailureBeforeTheFirstByte(t *testing.T) {
	srv, _, _ := exportServer(t, &rowStore{n: 10, err: errs.StoreDown(errors.New("dial tcp: refused"))})
	res := getExport(t, srv, exportQuery)
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != 503 || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") ||
		!strings.Contains(string(body), `"service_unavailable"`) || res.Header.Get("Retry-After") == "" {
		t.Errorf("%d %v %s, want a 503 envelope", res.StatusCode, res.Header, body)
	}
}

// A client that goes away is nobody's failure: no error in the log.
func TestExportClientGoesAway(t *testing.T) {
	store := &rowStore{n: 1 << 30}
	srv, _, logs := exportServer(t, store)
	res := getExport(t, srv, exportQuery)
	r := bufio.NewReader(res.Body)
	for range 1000 {
		if _, err := r.ReadBytes('\n'); err != nil {
			t.Fatal(err)
		}
	}
	res.Body.Close()
	select {
	case <-store.done:
	case <-time.After(20 * time.Second):
		t.Fatal("the export went on after its client left")
	}
	time.Sleep(100 * time.Millisecond)
	if strings.Contains(logs.String(), "level=ERROR") {
		t.Errorf("a client that left is logged as an error:\n%s", logs)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

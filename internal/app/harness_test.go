package app_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/tally-analytics/tally/internal/accounts"
	"github.com/tally-analytics/tally/internal/app"
	"github.com/tally-analytics/tally/internal/chstore"
	"github.com/tally-analytics/tally/internal/config"
	"github.com/tally-analytics/tally/internal/httpapi/openapi"
	"github.com/tally-analytics/tally/internal/ingest/geo"
	"github.com/tally-analytics/tally/internal/ingest/geo/geotest"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/testenv"
	"github.com/tally-analytics/tally/pkg/client"
)

// clock is a settable test clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

func (c *clock) Advance(d time.Duration) { c.Set(c.Now().Add(d)) }

// harness is a running tally on per-test databases, served by httptest,
// with an account that owns one site and has one API key.
type harness struct {
	t      testing.TB
	cfg    *config.Config
	app    *app.App
	srv    *httptest.Server
	clock  *clock
	ch     *chstore.Store
	userID model.UserID
	email  string
	siteID model.SiteID
	key    string
	keyID  model.KeyID
}

const password = "correct horse battery"

func newHarness(t testing.TB) *harness {
	t.Helper()
	return newHarnessWith(t, testenv.Config(t))
}

// londonAndMilton gives cfg a GeoIP database of two places: 81.2.69.0/24
// is London (GB, England), 216.160.83.0/24 Milton (US, Washington).
func londonAndMilton(t testing.TB, cfg *config.Config) {
	t.Helper()
	cfg.GeoIPPath = filepath.Join(t.TempDir(), "city.mmdb")
	geotest.WriteCityDB(t, cfg.GeoIPPath, map[string]geo.Location{
		"81.2.69.0/24":    {CountryCode: "GB", RegionCode: "GB-ENG", RegionName: "England", City: "London"},
		"216.160.83.0/24": {CountryCode: "US", RegionCode: "US-WA", RegionName: "Washington", City: "Milton"},
	})
}

func newHarnessWith(t testing.TB, cfg *config.Config) *harness {
	t.Helper()
	return newHarnessLogged(t, cfg, testenv.Logger(t))
}

// newHarnessLogged is newHarnessWith with the server logging to log.
func newHarnessLogged(t testing.TB, cfg *config.Config, log *slog.Logger, opts ...app.Option) *harness {
	t.Helper()
	h := startAppLogged(t, cfg, &clock{now: time.Now().UTC().Truncate(time.Second)}, log, opts...)
	ctx := context.Background()
	h.email = "owner@example.com"
	u, err := h.app.Accounts.CreateUser(ctx, accounts.NewUser{Email: h.email, Password: password, Name: "Owner", Plan: model.PlanPro})
	if err != nil {
		t.Fatal(err)
	}
	h.userID = u.ID
	site, err := h.app.Accounts.CreateSite(ctx, accounts.NewSite{OwnerEmail: h.email, Domain: "example.com"})
	if err != nil {
		t.Fatal(err)
	}
	h.siteID = site.ID
	k, err := h.app.Accounts.CreateKey(ctx, accounts.NewKey{OwnerEmail: h.email, Name: "test"})
	if err != nil {
		t.Fatal(err)
	}
	h.key, h.keyID = k.Secret, k.Key.ID
	return h
}

// startApp builds and serves an App for cfg; a second call with the same
// cfg (but its own WAL) is a second instance of the same deployment.
func startApp(t testing.TB, cfg *config.Config, c *clock) *harness {
	t.Helper()
	return startAppLogged(t, cfg, c, testenv.Logger(t))
}

// startAppLogged is startApp with the server logging to log.
func startAppLogged(t testing.TB, cfg *config.Config, c *clock, log *slog.Logger, opts ...app.Option) *harness {
	t.Helper()
	a, err := app.New(context.Background(), cfg, log, append([]app.Option{app.WithClock(c.Now)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { a.RunBackground(ctx); close(done) }()
	srv := httptest.NewServer(contractCheck(t, a.Handler()))
	t.Cleanup(func() {
		srv.Close()
		cancel()
		<-done
		a.Close()
	})
	ch, err := chstore.New(app.CHOptions(cfg))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ch.Close() })
	return &harness{t: t, cfg: cfg, app: a, srv: srv, clock: c, ch: ch}
}

// secondInstance starts another server on the same databases.
func (h *harness) secondInstance() *harness {
	cfg := *h.cfg
	cfg.WALDir = h.t.TempDir()
	other := startApp(h.t, &cfg, h.clock)
	other.userID, other.email, other.siteID, other.key, other.keyID = h.userID, h.email, h.siteID, h.key, h.keyID
	return other
}

func (h *harness) client(token string) *client.Client { return client.New(h.srv.URL, token) }

// count runs a count query on ClickHouse.
func (h *harness) count(query string, args ...any) int64 {
	h.t.Helper()
	var n uint64
	if err := h.ch.QueryRow(context.Background(), query, args...).Scan(&n); err != nil {
		h.t.Fatalf("%s: %v", query, err)
	}
	return int64(n)
}

// waitCount polls a count query until it reaches want.
//
// Once the count is reached it also waits until this instance's buffer has
// committed every record it wrote: a batch's events are inserted before its
// session rows, so a count of events alone can be reached while the sessions
// behind it are on their way.
func (h *harness) waitCount(want int64, query string, args ...any) {
	h.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		got := h.count(query, args...)
		if st := h.app.Buffer.Stats(); got == want && st.Flushed >= st.Written {
			return
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("%s = %d, want %d", query, got, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

type configT = config.Config

// testenvConfigWith is a per-test configuration adjusted by fn.
func testenvConfigWith(t testing.TB, fn func(*config.Config)) *config.Config {
	cfg := testenv.Config(t)
	fn(cfg)
	return cfg
}

func statsParams(h *harness) client.StatsParams {
	return client.StatsParams{SiteID: string(h.siteID), DateFrom: "2026-05-01", DateTo: "2026-05-07"}
}

var (
	openAPIOnce   sync.Once
	openAPIRouter routers.Router
	openAPIErr    error
)

// contractCheck wraps the API so that every response an end-to-end test
// receives is validated against openapi.yaml (status, headers, body).
func contractCheck(t testing.TB, next http.Handler) http.Handler {
	openAPIOnce.Do(func() {
		doc, err := openapi.Load()
		if err != nil {
			openAPIErr = err
			return
		}
		doc.Servers = nil // match any host
		openapi3filter.RegisterBodyDecoder("application/javascript", openapi3filter.FileBodyDecoder)
		openapi3filter.RegisterBodyDecoder("application/x-ndjson", openapi3filter.FileBodyDecoder)
		openapi3filter.RegisterBodyDecoder("image/gif", openapi3filter.FileBodyDecoder)
		openAPIRouter, openAPIErr = gorillamux.NewRouter(doc)
	})
	if openAPIErr != nil {
		t.Fatalf("openapi.yaml: %v", openAPIErr)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r)
		if route, params, err := openAPIRouter.FindRoute(r); err == nil {
			in := &openapi3filter.RequestValidationInput{Request: r, PathParams: params, Route: route,
				Options: &openapi3filter.Options{ExcludeRequestBody: true, AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}}
			out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: rec.Code, Header: rec.Header(),
				Options: &openapi3filter.Options{IncludeResponseStatus: true}}
			out.SetBodyBytes(decoded(t, rec))
			if err := openapi3filter.ValidateResponse(r.Context(), out); err != nil {
				t.Errorf("%s %s → %d does not match openapi.yaml: %v\n%.500s", r.Method, r.URL.Path, rec.Code, err, rec.Body.String())
			}
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())
	})
}

// decoded is a recorded answer's body without its content encoding: the
// contract is about the content.
func decoded(t testing.TB, rec *httptest.ResponseRecorder) []byte {
	if rec.Header().Get("Content-Encoding") != "gzip" {
		return rec.Body.Bytes()
	}
	zr, err := gzip.NewReader(bytes.NewReader(rec.Body.Bytes()))
	if err != nil {
		t.Errorf("a gzip answer that is not gzip: %v", err)
		return nil
	}
	body, err := io.ReadAll(zr)
	if err != nil {
		t.Errorf("a gzip answer that is not gzip: %v", err)
	}
	return body
}

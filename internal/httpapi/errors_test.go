package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/ingest"
	"github.com/tally-analytics/tally/internal/ratelimit"
	"github.com/tally-analytics/tally/pkg/api"
)

// stubAuth accepts one bearer token.
type stubAuth struct{}

func (stubAuth) Authenticate(_ context.Context, bearer string) (auth.Principal, error) {
	if bearer != "good" {
		return auth.Principal{}, errs.E(errs.Unauthenticated, "unauthorized", "invalid API key")
	}
	return auth.Principal{UserID: "u1", KeyID: "k1"}, nil
}

func (stubAuth) Login(context.Context, auth.Credentials) (auth.LoginResult, error) {
	return auth.LoginResult{}, errors.New("not used")
}

// failingIngest answers every event with a fixed error, or panics.
type failingIngest struct{ err error }

func (f failingIngest) Track(context.Context, auth.Principal, ingest.Input) (string, error) {
	if f.err == nil {
		panic("boom")
	}
	return "", f.err
}

func (f failingIngest) TrackBrowser(ctx context.Context, in ingest.Input, _ ingest.RevenueAllowance) (string, error) {
	return f.Track(ctx, auth.Principal{}, in)
}

func (f failingIngest) TrackBatch(ctx context.Context, p auth.Principal, ins []ingest.Input) ([]ingest.Result, error) {
	_, err := f.Track(ctx, p, ins[0])
	return nil, err
}

func (failingIngest) RefusedRequest(*auth.Principal, []string, error) {}

// allowAll is a limiter that never limits.
type allowAll struct{}

func (allowAll) AllowN(context.Context, string, ratelimit.Limit, int) (ratelimit.Result, error) {
	return ratelimit.Result{Allowed: true, Limit: 1, Remaining: 1}, nil
}

func serve(t *testing.T, ing Ingester) (*httptest.Server, *bytes.Buffer) {
	var logs bytes.Buffer
	s := New(Deps{Auth: stubAuth{}, Ingest: ing, Stats: struct{ Stats }{}, Goals: struct{ Goals }{}, Limiter: allowAll{}, Log: slog.New(slog.NewTextHandler(&logs, nil)), MaxEventBody: 1024})
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	return srv, &logs
}

func send(t *testing.T, srv *httptest.Server) (*http.Response, api.Error) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/api/v1/events/pageview", strings.NewReader(`{"site_id":"s","url":"https://e.com/"}`))
	req.Header.Set("Authorization", "Bearer good")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var e api.Error
	if err := json.NewDecoder(resp.Body).Decode(&e); err != nil {
		t.Fatalf("body is not the error envelope: %v", err)
	}
	return resp, e
}

func TestInternalErrorsHideTheirCause(t *testing.T) {
	for name, ing := range map[string]Ingester{
		"error": failingIngest{err: errors.New("dial tcp 10.1.2.3:9000: secret-cause")},
		"panic": failingIngest{},
	} {
		t.Run(name, func(t *testing.T) {
			srv, logs := serve(t, ing)
			resp, e := send(t, srv)
			if resp.StatusCode != 500 || e.Error.Code != "internal_error" {
				t.Fatalf("got %d %+v, want 500 internal_error", resp.StatusCode, e)
			}
			id := resp.Header.Get("X-Request-Id")
			if id == "" {
				t.Fatal("no X-Request-Id header")
			}
			if strings.Contains(e.Error.Message, "secret-cause") || strings.Contains(e.Error.Message, "boom") {
				t.Errorf("the cause leaked to the client: %q", e.Error.Message)
			}
			if !strings.Contains(logs.String(), "request_id="+id) {
				t.Errorf("the log does not name the request id %s:\n%s", id, logs.String())
			}
			if name == "error" && !strings.Contains(logs.String(), "secret-cause") {
				t.Errorf("the cause is not in the log:\n%s", logs.String())
			}
		})
	}
}

func TestErrorKindsMapToStatuses(t *testing.T) {
	for _, tc := range []struct {
		err    error
		status int
		code   string
		field  string
	}{
		{errs.InvalidField("url", "bad"), 400, "invalid_request", "url"},
		{errs.E(errs.Forbidden, "forbidden", "no"), 403, "forbidden", ""},
		{errs.E(errs.Conflict, "", "exists"), 409, "conflict", ""},
		{&errs.Error{Kind: errs.Unavailable, Message: "full", RetryAfter: 1500 * time.Millisecond}, 503, "service_unavailable", ""},
	} {
		srv, _ := serve(t, failingIngest{err: tc.err})
		resp, e := send(t, srv)
		if resp.StatusCode != tc.status || e.Error.Code != tc.code || e.Error.Field != tc.field {
			t.Errorf("%v: got %d %+v, want %d %s %q", tc.err, resp.StatusCode, e, tc.status, tc.code, tc.field)
		}
		if tc.status == 503 && resp.Header.Get("Retry-After") != "2" {
			t.Errorf("Retry-After = %q, want 2 (whole seconds, rounded up)", resp.Header.Get("Retry-After"))
		}
	}
}

func discardLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// A request's own X-Request-Id names it in the log and the answer only when
// it reads as an id (1 to 64 letters, digits, '.', '_' or '-', as proxies
// make them); anything else, which would write the client's text into every
// log line of the request ("x request_id=<another request's>", 64 KiB of
// it), is replaced by an id of the server's: 16 hex characters.
func TestRequestIDsTakenOnlyWhenWellFormed(t *testing.T) {
	srv, logs := serve(t, failingIngest{err: errors.New("boom")})
	for _, tc := range []struct {
		sent string
		kept bool
	}{
		{"5f0c2a9e-8b1d-4c3e-9f00-1a2b3c4d5e6f", true},
		{"req_123.abc-XYZ", true},
		{strings.Repeat("a", 64), true},
		{strings.Repeat("a", 65), false},
		{"x request_id=0123456789abcdef", false},
		{`x" msg="forged`, false},
		{"id\u00e9", false},
	} {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/api/v1/events/pageview", strings.NewReader(`{"site_id":"s","url":"https://e.com/"}`))
		req.Header.Set("Authorization", "Bearer good")
		req.Header.Set("X-Request-Id", tc.sent)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		got := resp.Header.Get("X-Request-Id")
		switch {
		case tc.kept && got != tc.sent:
			t.Errorf("%q: answered as %q, want it kept", tc.sent, got)
		case !tc.kept && (got == tc.sent || len(got) != 16 || strings.Trim(got, "0123456789abcdef") != ""):
			t.Errorf("%q: answered as %q, want 16 hex characters of the server's", tc.sent, got)
		case !tc.kept && strings.Contains(logs.String(), tc.sent):
			t.Errorf("%q is in the log:\n%s", tc.sent, logs.String())
		}
	}
}

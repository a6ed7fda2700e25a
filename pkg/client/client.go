// Package client is a Go client for tally's HTTP API.
//
//	c := client.New("https://tally.example.com", "sk_live_...")
//	res, err := c.Pageview(ctx, api.PageviewRequest{SiteID: "...", URL: "https://example.com/"})
//
// Errors from the API are *Error values carrying the HTTP status and the
// error envelope's code, message and field.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/tally-analytics/tally/pkg/api"
)

// Client calls one tally server with one credential.
type Client struct {
	base  string
	token string
	http  *http.Client
}

// Option configures a Client.
type Option func(*Client)

// WithHTTPClient replaces the default HTTP client (30 s timeout).
func WithHTTPClient(h *http.Client) Option { return func(c *Client) { c.http = h } }

// New makes a client for the server at baseURL (without /api/v1) using a
// login token or API key; token may be empty for Login and Health.
func New(baseURL, token string, opts ...Option) *Client {
	c := &Client{base: strings.TrimRight(baseURL, "/"), token: token, http: &http.Client{Timeout: 30 * time.Second}}
	for _, o := range opts {
		o(c)
	}
	return c
}

// WithToken returns a copy of c using another credential.
func (c *Client) WithToken(token string) *Client {
	cp := *c
	cp.token = token
	return &cp
}

// Error is an error answer of the API.
type Error struct {
	Status int
	api.ErrorDetail
	// RetryAfter is the server's Retry-After, when it sent one.
	RetryAfter time.Duration
}

func (e *Error) Error() string {
	s := fmt.Sprintf("tally: %d %s: %s", e.Status, e.Code, e.Message)
	if e.Field != "" {
		s += " (field " + e.Field + ")"
	}
	return s
}

// Health checks GET /health.
func (c *Client) Health(ctx context.Context) error {
	var h api.Health
	return c.do(ctx, http.MethodGet, "/health", nil, nil, &h)
}

// Login exchanges an email and password for a token. An account with
// two-factor authentication answers 401 otp_required: use LoginWithOTP.
func (c *Client) Login(ctx context.Context, email, password string) (api.LoginResponse, error) {
	return c.LoginWithOTP(ctx, email, password, "")
}

// LoginWithOTP is Login for an account with two-factor authentication: otp
// is the authenticator app's current 6-digit code or a recovery code (each
// works once). A wrong one is 401 invalid_credentials, as a wrong password is.
func (c *Client) LoginWithOTP(ctx context.Context, email, password, otp string) (api.LoginResponse, error) {
	var res api.LoginResponse
	err := c.do(ctx, http.MethodPost, "/api/v1/auth/login", nil, api.LoginRequest{Email: email, Password: password, OTP: otp}, &res)
	return res, err
}

// Verify checks the client's credential.
func (c *Client) Verify(ctx context.Context) (api.VerifyResponse, error) {
	var res api.VerifyResponse
	err := c.do(ctx, http.MethodGet, "/api/v1/auth/verify", nil, nil, &res)
	return res, err
}

// ChangePassword changes the password of the client's user; the client's
// credential must be a login token (an API key is 403 forbidden). Every
// login token of the user ends, the client's own too: the answer holds a
// new one, for c.WithToken. The user's dashboard sessions end as well; API
// keys keep working. A wrong current password is 400 invalid_request with
// field current_password.
func (c *Client) ChangePassword(ctx context.Context, current, next string) (api.LoginResponse, error) {
	var res api.LoginResponse
	err := c.do(ctx, http.MethodPost, "/api/v1/auth/password", nil,
		api.ChangePasswordRequest{CurrentPassword: current, NewPassword: next}, &res)
	return res, err
}

// Pageview sends a pageview.
func (c *Client) Pageview(ctx context.Context, req api.PageviewRequest) (api.EventResponse, error) {
	var res api.EventResponse
	err := c.do(ctx, http.MethodPost, "/api/v1/events/pageview", nil, req, &res)
	return res, err
}

// CustomEvent sends a custom event.
func (c *Client) CustomEvent(ctx context.Context, req api.CustomEventRequest) (api.EventResponse, error) {
	var res api.EventResponse
	err := c.do(ctx, http.MethodPost, "/api/v1/events/custom", nil, req, &res)
	return res, err
}

// Batch sends up to 1,000 events in one request (events without an
// event_name are pageviews); the answer holds one result per event.
func (c *Client) Batch(ctx context.Context, events []api.CustomEventRequest) (api.BatchResponse, error) {
	var res api.BatchResponse
	err := c.do(ctx, http.MethodPost, "/api/v1/events/batch", nil, api.BatchRequest{Events: events}, &res)
	return res, err
}

// do sends a request with an optional JSON body and decodes a JSON answer
// into out; a non-2xx answer becomes *Error.
func (c *Client) do(ctx context.Context, method, path string, query url.Values, body, out any) error {
	resp, err := c.send(ctx, method, path, query, body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("tally: read answer: %w", err)
	}
	if out == nil || len(data) == 0 {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("tally: decode answer: %w", err)
	}
	return nil
}

// send sends a request with an optional JSON body and returns a 2xx answer
// for the caller to read and close; a non-2xx answer becomes *Error.
func (c *Client) send(ctx context.Context, method, path string, query url.Values, body any) (*http.Response, error) {
	return c.sendWith(ctx, c.http, method, path, query, body)
}

// sendWith is send through hc.
func (c *Client) sendWith(ctx context.Context, hc *http.Client, method, path string, query url.Values, body any) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("tally: encode request: %w", err)
		}
		rd = bytes.NewReader(b)
	}
	u := c.base + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, fmt.Errorf("tally: %w", err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("tally: %s %s: %w", method, path, err)
	}
	if resp.StatusCode >= 200 && resp.StatusCode <= 299 {
		return resp, nil
	}
	defer resp.Body.Close()
	apiErr := &Error{Status: resp.StatusCode}
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("tally: read answer: %w", err)
	}
	var env api.Error
	if json.Unmarshal(data, &env) == nil {
		apiErr.ErrorDetail = env.Error
	}
	if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil {
		apiErr.RetryAfter = time.Duration(s) * time.Second
	}
	return nil, apiErr
}

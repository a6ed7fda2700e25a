// Package api holds the public wire types of tally's HTTP API: requests,
// responses and the error envelope. The server and the Go client share them.
package api

import "time"

// Error is the body of every error response: {"error": {code, message, field?}}.
type Error struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail describes what went wrong.
type ErrorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	// Field names the offending parameter of a validation error.
	Field string `json:"field,omitempty"`
}

// LoginRequest is the body of POST /api/v1/auth/login.
type LoginRequest struct {
	Email    string `json:"email"`
	Password string `json:"password"`
	// OTP is the second factor of an account with two-factor
	// authentication: the authenticator app's current 6-digit code, or one
	// of the account's recovery codes (each works once).
	OTP string `json:"otp,omitempty"`
}

// LoginResponse is a successful login.
type LoginResponse struct {
	Token     string    `json:"token"`
	User      User      `json:"user"`
	ExpiresAt time.Time `json:"expires_at"`
}

// ChangePasswordRequest is the body of POST /api/v1/auth/password.
type ChangePasswordRequest struct {
	CurrentPassword string `json:"current_password"`
	NewPassword     string `json:"new_password"`
}

// User is the public view of an account.
type User struct {
	ID    string `json:"id"`
	Email string `json:"email"`
	Name  string `json:"name"`
}

// VerifyResponse answers GET /api/v1/auth/verify: key_id for an API key,
// user_id for a login token.
type VerifyResponse struct {
	Authenticated bool     `json:"authenticated"`
	KeyID         string   `json:"key_id,omitempty"`
	UserID        string   `json:"user_id,omitempty"`
	Scopes        []string `json:"scopes,omitempty"`
}

// PageviewRequest is the body of POST /api/v1/events/pageview.
type PageviewRequest struct {
	SiteID    string `json:"site_id"`
	URL       string `json:"url"`
	Referrer  string `json:"referrer,omitempty"`
	UserAgent string `json:"user_agent,omitempty"`
	// IPAddress is used for the country lookup only and never stored.
	IPAddress string `json:"ip_address,omitempty"`
	// VisitorID is an optional identifier of the visitor chosen by the sender
	// (the tracker's analytics_vid); without it tally derives an anonymous,
	// daily-rotating one.
	VisitorID string `json:"visitor_id,omitempty"`
}

// CustomEventRequest is the body of POST /api/v1/events/custom.
type CustomEventRequest struct {
	PageviewRequest
	EventName string `json:"event_name"`
	// Props: at most 10 entries; keys up to 50 characters; values string,
	// number or boolean.
	Props map[string]any `json:"props,omitempty"`
	// Revenue, optional, in major units.
	Revenue *Revenue `json:"revenue,omitempty"`
}

// EventResponse answers an accepted event (201).
type EventResponse struct {
	Success bool   `json:"success"`
	EventID string `json:"event_id"`
}

// Health answers GET /health and GET /api/health.
type Health struct {
	Status string `json:"status"`
}

// Revenue is money attached to a custom event, in major units (49.99, not 4999).
type Revenue struct {
	Amount   Number `json:"amount"`
	Currency string `json:"currency"`
}

// TrackerEvent is the body the tracking script posts to /e (as text/plain
// JSON, so that browsers send it without a CORS preflight). event_name is
// "pageview" or a custom event's name.
type TrackerEvent struct {
	SiteID    string         `json:"site_id"`
	EventName string         `json:"event_name"`
	URL       string         `json:"url"`
	Referrer  string         `json:"referrer,omitempty"`
	VisitorID string         `json:"visitor_id,omitempty"`
	Props     map[string]any `json:"props,omitempty"`
	Revenue   *Revenue       `json:"revenue,omitempty"`
	// CheckoutSessionID is session_id or checkout_session_id from the page URL.
	CheckoutSessionID string `json:"checkout_session_id,omitempty"`
	// HashRoutes says the page's fragment is part of its path: an app that
	// routes by the hash (#/pricing), tagged data-hash.
	HashRoutes bool `json:"hash_routes,omitempty"`
	// ScrollDepth makes the event (named "engagement") a report of how far
	// the page was scrolled, in percent of its height (0 to 100): it counts
	// as no event and only gives the page its scroll depth.
	ScrollDepth Number `json:"scroll_depth,omitempty"`
}

// BatchRequest is the body of POST /api/v1/events/batch: 1 to 1,000 events.
// An event with an event_name is a custom event; one without is a pageview.
type BatchRequest struct {
	Events []CustomEventRequest `json:"events"`
}

// BatchResponse answers a batch (200): one result per event, in order.
type BatchResponse struct {
	Accepted int           `json:"accepted"`
	Rejected int           `json:"rejected"`
	Results  []BatchResult `json:"results"`
}

// BatchResult is the outcome of one event of a batch: its event_id, or the
// error it would have got on its own (field prefixed with events[i]).
type BatchResult struct {
	Index   int          `json:"index"`
	Success bool         `json:"success"`
	EventID string       `json:"event_id,omitempty"`
	Error   *ErrorDetail `json:"error,omitempty"`
}

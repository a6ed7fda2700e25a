// Package errs defines the error kinds tally's services return. The HTTP layer
// maps each kind to a status code and the spec's error envelope in one place;
// services never know about HTTP.
package errs

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"time"
)

// Kind classifies an error for the caller (and for the HTTP status it becomes).
type Kind int

// The kinds, from the client's point of view.
const (
	Internal         Kind = iota // a bug or a failed dependency; details stay in the log
	Invalid                      // the request is malformed or a field is invalid (400)
	Unauthenticated              // missing, malformed, expired or revoked credential (401)
	Forbidden                    // authenticated but not allowed (403)
	NotFound                     // the resource does not exist or is not visible (404)
	Conflict                     // the resource already exists (409)
	TooLarge                     // the request body is over the limit (413)
	UnsupportedMedia             // the request body is not of a type the endpoint reads (415)
	RateLimited                  // too many requests (429)
	Unavailable                  // a dependency is down or a buffer is full; retry later (503)
)

// Error is an error with a kind, a machine-readable code, a message that is
// safe to show to the client, and an optional offending field.
type Error struct {
	Kind    Kind
	Code    string // e.g. "invalid_request", "invalid_site_id"; empty means the kind's default
	Message string // safe for clients; never contains secrets
	Field   string // the offending request field, for validation errors
	// RetryAfter tells the client when to try again (RateLimited, Unavailable).
	RetryAfter time.Duration
	Err        error // the cause, for logs only
}

func (e *Error) Error() string {
	msg := e.Message
	if e.Field != "" {
		msg = e.Field + ": " + msg
	}
	if e.Err != nil {
		return msg + ": " + e.Err.Error()
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

// E builds an Error of kind k with a client-safe message.
func E(k Kind, code, format string, args ...any) *Error {
	return &Error{Kind: k, Code: code, Message: fmt.Sprintf(format, args...)}
}

// InvalidField reports a bad request field with code invalid_request.
func InvalidField(field, format string, args ...any) *Error {
	return &Error{Kind: Invalid, Code: "invalid_request", Field: field, Message: fmt.Sprintf(format, args...)}
}

// WithField returns a copy of e naming the offending field.
func (e *Error) WithField(field string) *Error {
	c := *e
	c.Field = field
	return &c
}

// Wrap attaches a cause to e (kept for logs, never shown to clients).
func (e *Error) Wrap(err error) *Error {
	c := *e
	c.Err = err
	return &c
}

// KindOf reports the kind of err: the Kind of the first *Error in its chain,
// Internal otherwise.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return Internal
}

// Is reports whether err is an *Error of kind k.
func Is(err error, k Kind) bool {
	return err != nil && KindOf(err) == k
}

// Sentinels the stores return at their boundary; services compare with errors.Is
// or wrap them into client-facing errors.
var (
	ErrNotFound = &Error{Kind: NotFound, Code: "not_found", Message: "not found"}
	ErrConflict = &Error{Kind: Conflict, Code: "conflict", Message: "already exists"}
	// ErrFull is a store refusing to add to what is at its limit (a site's
	// most segments), told apart from a conflict of names.
	ErrFull = &Error{Kind: Conflict, Code: "full", Message: "at its limit"}
)

// retryAfterDown is what a client is told to wait while a store is down.
const retryAfterDown = 5 * time.Second

// StoreDown is the error of a request that needs a store (database,
// cache) that cannot be reached now: 503 with a Retry-After, the cause kept
// for logs only.
func StoreDown(err error) *Error {
	return &Error{Kind: Unavailable, Code: "service_unavailable", RetryAfter: retryAfterDown,
		Message: "a database this request needs is unavailable; retry later", Err: err}
}

// IsNetwork reports whether err is a failure to reach a server (refused,
// reset, closed or timed-out connection, failed lookup) rather than an
// answer from it: what a store turns into StoreDown.
func IsNetwork(err error) bool {
	var netErr net.Error
	var opErr *net.OpError
	var dnsErr *net.DNSError
	return errors.As(err, &netErr) || errors.As(err, &opErr) || errors.As(err, &dnsErr) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, os.ErrDeadlineExceeded)
}

package httpapi

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/pkg/api"
)

var kindStatus = map[errs.Kind]int{
	errs.Internal:         http.StatusInternalServerError,
	errs.Invalid:          http.StatusBadRequest,
	errs.Unauthenticated:  http.StatusUnauthorized,
	errs.Forbidden:        http.StatusForbidden,
	errs.NotFound:         http.StatusNotFound,
	errs.Conflict:         http.StatusConflict,
	errs.TooLarge:         http.StatusRequestEntityTooLarge,
	errs.UnsupportedMedia: http.StatusUnsupportedMediaType,
	errs.RateLimited:      http.StatusTooManyRequests,
	errs.Unavailable:      http.StatusServiceUnavailable,
}

// StatusOf is the HTTP status of an error kind, for every HTTP face of
// tally (the API and the dashboard).
func StatusOf(k errs.Kind) int {
	if status, ok := kindStatus[k]; ok {
		return status
	}
	return http.StatusInternalServerError
}

var statusCode = map[int]string{
	http.StatusBadRequest:            "invalid_request",
	http.StatusUnauthorized:          "unauthorized",
	http.StatusForbidden:             "forbidden",
	http.StatusNotFound:              "not_found",
	http.StatusMethodNotAllowed:      "method_not_allowed",
	http.StatusConflict:              "conflict",
	http.StatusRequestEntityTooLarge: "payload_too_large",
	http.StatusUnsupportedMediaType:  "unsupported_media_type",
	http.StatusTooManyRequests:       "rate_limit_exceeded",
	http.StatusServiceUnavailable:    "service_unavailable",
}

// handleError is the one place errors become responses: the spec's envelope
// for every status, a safe message for clients, and the cause in the log
// (with the request id) for server errors.
func (s *Server) handleError(err error, c echo.Context) {
	if c.Response().Committed {
		s.abortAnswer(c, err)
	}
	status, body := Describe(err)
	s.logFailure(c, status, err)
	SetRetryAfter(c.Response().Header(), err)
	if c.Request().Method == http.MethodHead {
		err = c.NoContent(status)
	} else {
		err = c.JSON(status, body)
	}
	if err != nil && !ClientGone(err) {
		s.deps.Log.Warn("writing error response", "request_id", requestID(c), "err", err)
	}
}

// ClientGone reports whether err is a failed write of an answer: the client
// went away or stopped reading. Nobody is left to answer, nothing is broken,
// and the error names the client's address, which no log may hold.
func ClientGone(err error) bool {
	var op *net.OpError
	return errors.Is(err, errClientGone) || errors.As(err, &op) && op.Op == "write"
}

// logFailure logs a server-side failure: a 500 (a bug, or a failure without
// a kind) with its request id every time, a 503 (an outage or a full
// buffer: many requests at once) once per interval with a count.
func (s *Server) logFailure(c echo.Context, status int, err error) {
	switch {
	case status < 500:
	case c.Response().Committed && ClientGone(err):
		// only an answer under way can fail on the client's connection; a
		// failed write before it is a store's
		s.deps.Log.Debug("answer abandoned by the client", "request_id", requestID(c), "route", c.Path())
	case errors.Is(err, context.Canceled) && c.Request().Context().Err() != nil:
		// the client went away before its request was done: nothing for
		// an operator to act on (an event it sent is not stored)
		s.deps.Log.Debug("request abandoned by the client", "request_id", requestID(c), "route", c.Path())
	case status == http.StatusServiceUnavailable:
		s.unavailable.Fail(1, err, "route", c.Path())
	case status >= 500:
		s.deps.Log.Error("request failed", "request_id", requestID(c), "method", c.Request().Method,
			"route", c.Path(), "status", status, "err", err)
	}
}

// abortAnswer ends an answer that failed after it began (a streamed
// export): it can no longer become an error envelope, so the connection is
// cut before the answer's end. The client sees a truncated answer (a
// chunked body without its last chunk), never one that looks complete.
func (s *Server) abortAnswer(c echo.Context, err error) {
	status, _ := Describe(err)
	s.logFailure(c, max(status, http.StatusInternalServerError), err)
	panic(http.ErrAbortHandler)
}

// SetRetryAfter sets the Retry-After header (whole seconds, rounded up)
// when err says when to try again.
func SetRetryAfter(h http.Header, err error) {
	var e *errs.Error
	if errors.As(err, &e) && e.RetryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(ceilSeconds(e.RetryAfter)))
	}
}

// Describe is the status and error envelope err is answered with (an
// internal error's details stay in the log), for every HTTP face of tally.
func Describe(err error) (int, api.Error) {
	var e *errs.Error
	if errors.As(err, &e) && e.Kind != errs.Internal {
		status := StatusOf(e.Kind)
		code := e.Code
		if code == "" {
			code = statusCode[status]
		}
		return status, api.Error{Error: api.ErrorDetail{Code: code, Message: e.Message, Field: e.Field}}
	}
	var he *echo.HTTPError
	if errors.As(err, &he) && he.Code < 500 {
		code := statusCode[he.Code]
		if code == "" {
			code = "invalid_request"
		}
		msg := http.StatusText(he.Code)
		if m, ok := he.Message.(string); ok && he.Code != http.StatusNotFound {
			msg = m
		}
		if he.Code == http.StatusNotFound {
			msg = "no such route"
		}
		return he.Code, api.Error{Error: api.ErrorDetail{Code: code, Message: msg}}
	}
	return http.StatusInternalServerError, api.Error{Error: api.ErrorDetail{Code: "internal_error",
		Message: "internal server error; the request id is in the X-Request-Id header"}}
}

// assignRequestID names the request in its answer (X-Request-Id) and its
// log lines: by the id the request carries, as a proxy in front sets it,
// when it reads as one (1 to 64 letters, digits, '.', '_' or '-'), else by
// 16 random hex characters. Any other text would be the client's, written
// into every log line of the request (another request's id among it).
func assignRequestID(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		id := c.Request().Header.Get(echo.HeaderXRequestID)
		if len(id) == 0 || len(id) > 64 || strings.ContainsFunc(id, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-')
		}) {
			id = auth.RandomString(16, "0123456789abcdef")
		}
		c.Response().Header().Set(echo.HeaderXRequestID, id)
		return next(c)
	}
}

func requestID(c echo.Context) string {
	return c.Response().Header().Get(echo.HeaderXRequestID)
}

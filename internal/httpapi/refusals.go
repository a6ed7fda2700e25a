package httpapi

import (
	"bytes"
	"encoding/json"
	"io"

	"github.com/labstack/echo/v4"

	"github.com/tally-analytics/tally/internal/auth"
)

// Keys of what the ingest routes keep in their echo.Context for
// countRefusals.
const (
	ctxBody     = "tally.body"     // the request body as read (cut off when too large)
	ctxIngested = "tally.ingested" // the events reached the ingest service, which counts its own refusals
)

// unreadScanLimit is how much of a body refused before it was read (over a
// rate limit, or declared too large) is read to find the sites it names: a
// refusal stays cheap whatever its size.
const unreadScanLimit = 8 << 10

// markIngested notes that the request's events are handed to the ingest
// service.
func markIngested(c echo.Context) { c.Set(ctxIngested, true) }

// countRefusals counts, for the tracking health of the sites they name, the
// events of an ingest request refused before they reached the ingest
// service: a body too large or not JSON, a rate limit, a parameter the
// route does not take. The service counts the rest itself. sitesOf finds
// the sites the request names. It goes on the ingest routes inside
// authenticate (the caller is known) and outside the limits and the body
// limit.
func (s *Server) countRefusals(sitesOf func(c echo.Context) []string) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			err := next(c)
			if err == nil || c.Get(ctxIngested) != nil {
				return err
			}
			var caller *auth.Principal
			if p, ok := auth.FromContext(c.Request().Context()); ok {
				caller = &p
			}
			s.deps.Ingest.RefusedRequest(caller, sitesOf(c), err)
			return err
		}
	}
}

// sitesInBody finds the sites of a JSON body's events (see bodySites): in
// what was read of it, or else in its first unreadScanLimit bytes.
func sitesInBody(batch bool) func(c echo.Context) []string {
	return func(c echo.Context) []string {
		body, read := c.Get(ctxBody).([]byte)
		if !read {
			body, _ = io.ReadAll(io.LimitReader(c.Request().Body, unreadScanLimit))
		}
		return bodySites(body, batch)
	}
}

// sitesInQuery finds the site of an event sent in the query string.
func sitesInQuery(c echo.Context) []string {
	if site := c.QueryParam("site_id"); site != "" {
		return []string{site}
	}
	return nil
}

// bodySites finds the site_id of each event of a JSON body, which may be
// cut off or invalid past some point: the top-level object's for one event,
// each of the top-level "events" array's objects' for a batch. Only what
// precedes the first syntax error is read.
func bodySites(body []byte, batch bool) []string {
	// frame is an open object or array; key is an object's current key
	type frame struct {
		object bool
		key    string
		atKey  bool // the next token of the object is a key
	}
	var stack []frame
	eventDepth := 1 // the depth of an event's object: 1, or 3 (top, events, event)
	if batch {
		eventDepth = 3
	}
	inEvent := func() bool {
		if len(stack) != eventDepth || !stack[len(stack)-1].object {
			return false
		}
		return !batch || (stack[0].object && stack[0].key == "events" && !stack[1].object)
	}
	// valueDone moves the enclosing object to its next key.
	valueDone := func() {
		if n := len(stack); n > 0 && stack[n-1].object {
			stack[n-1].atKey = true
		}
	}
	var sites []string
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if err != nil {
			return sites
		}
		top := len(stack) - 1
		if d, ok := tok.(json.Delim); ok {
			switch d {
			case '{':
				stack = append(stack, frame{object: true, atKey: true})
			case '[':
				stack = append(stack, frame{})
			default:
				stack = stack[:top]
				valueDone()
			}
			continue
		}
		if top >= 0 && stack[top].object && stack[top].atKey {
			stack[top].key, stack[top].atKey = tok.(string), false
			continue
		}
		if v, ok := tok.(string); ok && inEvent() && stack[top].key == "site_id" {
			sites = append(sites, v)
		}
		valueDone()
	}
}

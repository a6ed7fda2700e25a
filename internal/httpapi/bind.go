package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/labstack/echo/v4"

	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/pkg/api"
)

// decodeJSON reads the request body as one JSON value into v. Numbers decode
// as json.Number where v holds interface values (props), so their validity is
// judged later and exactly. Errors name the offending field where JSON allows.
// also are media types the endpoint reads as JSON besides the JSON ones.
func decodeJSON(c echo.Context, v any, also ...string) error {
	body, err := readBody(c, also...)
	if err != nil {
		return err
	}
	return decodeBody(body, v)
}

// readBody reads the whole request body (within its size limit), once its
// declared type says it is JSON (see jsonMedia).
func readBody(c echo.Context, also ...string) ([]byte, error) {
	if err := jsonMedia(c.Request().Header.Get(echo.HeaderContentType), also); err != nil {
		return nil, err
	}
	body, err := readAll(c.Request())
	c.Set(ctxBody, body) // for countRefusals: what was read, even when cut off
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return nil, errs.E(errs.TooLarge, "payload_too_large", "request body is larger than %d bytes", tooBig.Limit)
	}
	if err != nil {
		return nil, errs.E(errs.Invalid, "invalid_request", "could not read the request body").Wrap(err)
	}
	return body, nil
}

// readAll reads r's body into one buffer of its declared length, which
// bodyLimit has held within the route's limit: io.ReadAll would grow a
// batch's body of ~300 KB from 512 bytes, a copy at each step (5 % of the
// server's CPU under batch ingest). A body without a declared length is read
// as io.ReadAll does.
func readAll(r *http.Request) ([]byte, error) {
	if r.ContentLength <= 0 {
		return io.ReadAll(r.Body)
	}
	buf := make([]byte, 0, r.ContentLength+1) // +1: the read that meets EOF needs room
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)] // longer than declared: grow as append does
		}
		n, err := r.Body.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// jsonMedia refuses a body declared as anything but JSON (text/csv,
// application/xml, multipart/form-data …) with 415. JSON is
// application/json or any application/…+json type, or one of also; a body
// without a Content-Type is read as JSON, and so is curl's default for -d
// (application/x-www-form-urlencoded) — a body that is not JSON then fails
// as invalid JSON.
func jsonMedia(contentType string, also []string) error {
	if contentType == "application/json" || strings.TrimSpace(contentType) == "" { // what nearly every request says
		return nil
	}
	mt, _, err := mime.ParseMediaType(contentType)
	switch {
	case err != nil:
		return errs.E(errs.UnsupportedMedia, "unsupported_media_type", "the Content-Type header is not a media type; send application/json")
	case mt == "application/json", strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json"),
		mt == "application/x-www-form-urlencoded", slices.Contains(also, mt):
		return nil
	}
	return errs.E(errs.UnsupportedMedia, "unsupported_media_type", "the request body must be JSON (application/json), not %s", mt)
}

// decodeBody decodes a body read by readBody as one JSON value into v.
func decodeBody(body []byte, v any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return errs.E(errs.Invalid, "invalid_request", "request body must be a JSON object")
	}
	if decodeEvents(body, v) {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return jsonError(body, err)
	}
	// (dec.More would take a stray ] or } for the end of a list)
	if len(bytes.TrimSpace(body[dec.InputOffset():])) > 0 {
		return errs.E(errs.Invalid, "invalid_request", "request body must hold a single JSON object")
	}
	if _, ok := v.(*api.BatchRequest); ok && twice(body, "events") {
		// encoding/json would decode the second list into the first one's
		// events: fields of two events in one
		return errs.InvalidField("events", "request body must hold one list of events")
	}
	return nil
}

// twice reports whether the object body holds key twice, as encoding/json
// matches keys: without regard to case.
func twice(body []byte, key string) bool {
	dec := json.NewDecoder(bytes.NewReader(body))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return false
	}
	seen := false
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return false
		}
		if k, _ := t.(string); strings.EqualFold(k, key) {
			if seen {
				return true
			}
			seen = true
		}
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return false
		}
	}
	return false
}

func jsonError(body []byte, err error) error {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		field := jsonPath(typeErr.Field)
		// a type's own decoder reports offsets of its value alone: the
		// path found at the offset must hold the fields named
		if path, ok := valuePath(body, typeErr.Offset); ok && names(path, field) {
			field = path
		}
		if field == "" {
			return errs.E(errs.Invalid, "invalid_request", "request body must be a JSON object")
		}
		e := errs.InvalidField(field, "must be of type %s", jsonType(typeErr.Type.Kind().String()))
		if strings.HasPrefix(field, "props") {
			e.Code = "invalid_props"
		}
		return e
	}
	return errs.E(errs.Invalid, "invalid_request", "request body is not valid JSON")
}

// valuePath is the path (keys and array indexes, joined by dots:
// steps.1.props.plan) of the value of body that ends at offset, where
// encoding/json reports a value of the wrong type: its own path names no
// array index or map key. ok is false when no value ends there.
func valuePath(body []byte, offset int64) (path string, ok bool) {
	type level struct {
		array   bool
		index   int
		key     string
		wantKey bool
	}
	var stack []level
	name := func() string {
		parts := make([]string, len(stack))
		for i, l := range stack {
			if l.array {
				parts[i] = strconv.Itoa(l.index)
			} else {
				parts[i] = l.key
			}
		}
		return strings.Join(parts, ".")
	}
	done := func() { // a value of the innermost level is read
		if n := len(stack); n > 0 {
			if stack[n-1].array {
				stack[n-1].index++
			} else {
				stack[n-1].wantKey = true
			}
		}
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if err != nil {
			return "", false
		}
		if n := len(stack); n > 0 && !stack[n-1].array && stack[n-1].wantKey {
			if key, isKey := tok.(string); isKey {
				stack[n-1].key, stack[n-1].wantKey = key, false
				continue
			}
		}
		switch tok {
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			done()
			continue
		}
		if dec.InputOffset() >= offset {
			return name(), true
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, level{wantKey: true})
		case json.Delim('['):
			stack = append(stack, level{array: true})
		default:
			done()
		}
	}
}

// names reports whether the dotted path holds every part of field, in order.
func names(path, field string) bool {
	if field == "" {
		return true
	}
	parts := strings.Split(field, ".")
	for _, p := range strings.Split(path, ".") {
		if len(parts) > 0 && p == parts[0] {
			parts = parts[1:]
		}
	}
	return len(parts) == 0
}

// jsonPath drops the names of embedded Go structs (PageviewRequest.site_id
// → site_id) from a decoding error's field path: the client knows only the
// JSON names, which are all lower-case.
func jsonPath(field string) string {
	parts := strings.Split(field, ".")
	out := parts[:0]
	for _, p := range parts {
		if p != "" && !unicode.IsUpper(rune(p[0])) {
			out = append(out, p)
		}
	}
	return strings.Join(out, ".")
}

func jsonType(goKind string) string {
	switch goKind {
	case "string":
		return "string"
	case "map", "struct":
		return "object"
	case "slice", "array":
		return "array"
	case "bool":
		return "boolean"
	default:
		return "number"
	}
}

package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/tally-analytics/tally/internal/ingest"
	"github.com/tally-analytics/tally/pkg/api"
)

// decodeEvents decodes the bodies of the event routes (pageview, custom
// event, batch, tracker) in one pass, without reflection: encoding/json
// scans a body twice and reflects over every field, 6–10 µs an event of a
// batch, the largest share of the server's CPU under batch ingest. It
// takes only bodies it decodes exactly as decodeBody's encoding/json
// would: one object with the routes' field names as written, strings,
// numbers, booleans and null where the types allow them, valid UTF-8. On
// anything else (a misspelt case, a wrong type, bad JSON, trailing data)
// it reports false and leaves v zeroed, so that encoding/json decodes the
// body again and phrases the error; a test holds the two to the same
// results. It takes only a zero v (encoding/json would decode into what v
// holds).
func decodeEvents(body []byte, v any) bool {
	if rv := reflect.ValueOf(v); rv.Kind() != reflect.Pointer || rv.IsNil() || !rv.Elem().IsZero() {
		return false
	}
	d := eventDecoder{b: body}
	var ok bool
	switch v := v.(type) {
	case *api.PageviewRequest:
		ok = d.object(pageviewFields(v, d.fields[:0]))
	case *api.CustomEventRequest:
		ok = d.object(d.customFields(v))
	case *api.TrackerEvent:
		ok = d.object(d.trackerFields(v))
	case *api.BatchRequest:
		ok = d.batch(v)
	default:
		return false
	}
	if d.space(); !ok || d.i != len(d.b) {
		zero(v)
		return false
	}
	return true
}

// zero resets what decodeEvents may have half filled.
func zero(v any) {
	switch v := v.(type) {
	case *api.PageviewRequest:
		*v = api.PageviewRequest{}
	case *api.CustomEventRequest:
		*v = api.CustomEventRequest{}
	case *api.TrackerEvent:
		*v = api.TrackerEvent{}
	case *api.BatchRequest:
		*v = api.BatchRequest{}
	}
}

// eventField is one field an object may hold: where its value goes.
type eventField struct {
	name  string
	str   *string
	props *map[string]any
	rev   **api.Revenue
	num   *api.Number
	flag  *bool
}

// eventDecoder reads a body from b[i:]. Its methods report false where the
// body is not one they decode exactly as encoding/json does.
type eventDecoder struct {
	b []byte
	i int
	// depth is how deep skip is in the arrays and objects of a value the
	// destination does not have
	depth int
	// the fields of the object being read and of its revenue, reused from
	// one event of a batch to the next
	fields  [10]eventField
	revenue [2]eventField
}

// pageviewFields appends the fields of a pageview to to.
func pageviewFields(r *api.PageviewRequest, to []eventField) []eventField {
	return append(to,
		eventField{name: "site_id", str: &r.SiteID},
		eventField{name: "url", str: &r.URL},
		eventField{name: "referrer", str: &r.Referrer},
		eventField{name: "user_agent", str: &r.UserAgent},
		eventField{name: "ip_address", str: &r.IPAddress},
		eventField{name: "visitor_id", str: &r.VisitorID})
}

func (d *eventDecoder) customFields(r *api.CustomEventRequest) []eventField {
	return pageviewFields(&r.PageviewRequest, append(d.fields[:0],
		eventField{name: "event_name", str: &r.EventName},
		eventField{name: "props", props: &r.Props},
		eventField{name: "revenue", rev: &r.Revenue}))
}

func (d *eventDecoder) trackerFields(r *api.TrackerEvent) []eventField {
	return append(d.fields[:0],
		eventField{name: "site_id", str: &r.SiteID},
		eventField{name: "event_name", str: &r.EventName},
		eventField{name: "url", str: &r.URL},
		eventField{name: "referrer", str: &r.Referrer},
		eventField{name: "visitor_id", str: &r.VisitorID},
		eventField{name: "props", props: &r.Props},
		eventField{name: "revenue", rev: &r.Revenue},
		eventField{name: "checkout_session_id", str: &r.CheckoutSessionID},
		eventField{name: "hash_routes", flag: &r.HashRoutes},
		eventField{name: "scroll_depth", num: &r.ScrollDepth})
}

// batch reads {"events": [event, …]} (other fields skipped as
// encoding/json skips unknown ones).
func (d *eventDecoder) batch(r *api.BatchRequest) bool {
	seen := false
	return d.members(func(key []byte) bool {
		switch {
		case string(key) == "events":
			if seen {
				return false // encoding/json decodes into the first list's elements
			}
			seen = true
			return d.events(r)
		case !plainKey(key) || strings.EqualFold(string(key), "events"):
			return false
		}
		return d.skip()
	})
}

func (d *eventDecoder) events(r *api.BatchRequest) bool {
	switch d.peek() {
	case 'n':
		r.Events = nil
		return d.literal("null")
	case '[':
	default:
		return false
	}
	// room for the events the body seems to hold, within a batch's limit
	r.Events = make([]api.CustomEventRequest, 0, min(bytes.Count(d.b[d.i:], []byte(`"site_id"`)), ingest.MaxBatch))
	return d.elements(func() bool {
		if d.peek() != '{' {
			return false // null or another type: encoding/json's answer
		}
		r.Events = append(r.Events, api.CustomEventRequest{})
		return d.object(d.customFields(&r.Events[len(r.Events)-1]))
	})
}

// elements reads an array, calling element with d at each element.
func (d *eventDecoder) elements(element func() bool) bool {
	return d.sequence('[', ']', element)
}

// object reads an object whose known fields are fields.
func (d *eventDecoder) object(fields []eventField) bool {
	return d.members(func(key []byte) bool {
		for k := range fields {
			if f := &fields[k]; f.name == string(key) {
				return d.field(f)
			}
		}
		if !plainKey(key) {
			return false // escapes may spell a field's name
		}
		for _, f := range fields {
			if strings.EqualFold(f.name, string(key)) {
				return false // encoding/json matches names without regard to case
			}
		}
		return d.skip()
	})
}

// plainKey reports whether a key's raw text is its name: no escapes.
func plainKey(raw []byte) bool { return bytes.IndexByte(raw, '\\') < 0 }

// members reads an object, calling member for each key (its raw text) with
// d at its value.
func (d *eventDecoder) members(member func(key []byte) bool) bool {
	d.space()
	return d.sequence('{', '}', func() bool {
		key, ok := d.rawKey()
		if !ok {
			return false
		}
		d.space()
		if d.next() != ':' {
			return false
		}
		d.space()
		return member(key)
	})
}

// sequence reads the items of an array or object from its open to its
// close byte, separated by commas, calling item with d at each.
func (d *eventDecoder) sequence(open, close byte, item func() bool) bool {
	if d.next() != open {
		return false
	}
	d.space()
	if d.peek() == close {
		d.i++
		return true
	}
	for {
		if !item() {
			return false
		}
		d.space()
		switch d.next() {
		case ',':
			d.space()
		case close:
			return true
		default:
			return false
		}
	}
}

func (d *eventDecoder) field(f *eventField) bool {
	switch {
	case f.str != nil:
		if d.peek() == 'n' {
			return d.literal("null") // null leaves a string as it is
		}
		s, ok := d.str()
		*f.str = s
		return ok
	case f.props != nil:
		return d.props(f.props)
	case f.rev != nil:
		return d.readRevenue(f.rev)
	case f.num != nil:
		if d.peek() == 'n' {
			return d.literal("null")
		}
		n, ok := d.number()
		*f.num = api.Number(n)
		return ok
	case f.flag != nil:
		switch d.peek() {
		case 'n':
			return d.literal("null") // null leaves a bool as it is
		case 't':
			*f.flag = true
			return d.literal("true")
		case 'f':
			*f.flag = false
			return d.literal("false")
		}
	}
	return false
}

// props reads the props object: strings, numbers (json.Number, as
// decodeBody's UseNumber gives them), booleans and null; a second props
// object adds to the first, as encoding/json's maps do.
func (d *eventDecoder) props(m *map[string]any) bool {
	if d.peek() == 'n' {
		*m = nil
		return d.literal("null")
	}
	if d.peek() != '{' {
		return false
	}
	if *m == nil {
		*m = map[string]any{}
	}
	return d.members(func(raw []byte) bool {
		key, ok := unquote(raw)
		if !ok {
			return false
		}
		var v any
		switch c := d.peek(); {
		case c == '"':
			v, ok = d.str()
		case c == '-' || c >= '0' && c <= '9':
			var n string
			n, ok = d.number()
			v = json.Number(n)
		case c == 't':
			v, ok = true, d.literal("true")
		case c == 'f':
			v, ok = false, d.literal("false")
		case c == 'n':
			ok = d.literal("null")
		default:
			return false // objects and arrays: encoding/json's maps and slices
		}
		(*m)[key] = v
		return ok
	})
}

// revenue reads {"amount": number, "currency": string}; a second revenue
// object fills the first again, as encoding/json does.
func (d *eventDecoder) readRevenue(r **api.Revenue) bool {
	if d.peek() == 'n' {
		*r = nil
		return d.literal("null")
	}
	if d.peek() != '{' {
		return false
	}
	if *r == nil {
		*r = &api.Revenue{}
	}
	d.revenue[0] = eventField{name: "amount", num: &(*r).Amount}
	d.revenue[1] = eventField{name: "currency", str: &(*r).Currency}
	return d.object(d.revenue[:])
}

func (d *eventDecoder) space() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// peek is the next byte, 0 at the end.
func (d *eventDecoder) peek() byte {
	if d.i < len(d.b) {
		return d.b[d.i]
	}
	return 0
}

// next consumes the next byte, 0 at the end.
func (d *eventDecoder) next() byte {
	c := d.peek()
	d.i++
	return c
}

func (d *eventDecoder) literal(lit string) bool {
	if !bytes.HasPrefix(d.b[d.i:], []byte(lit)) {
		return false
	}
	d.i += len(lit)
	return true
}

// rawKey reads a string and returns what is between its quotes, as is.
func (d *eventDecoder) rawKey() ([]byte, bool) {
	if d.peek() != '"' {
		return nil, false
	}
	start := d.i + 1
	for j := start; j < len(d.b); j++ {
		switch c := d.b[j]; {
		case c == '"':
			d.i = j + 1
			return d.b[start:j], true
		case c == '\\':
			j++ // the escaped byte cannot end the string
		case c < 0x20:
			return nil, false
		}
	}
	return nil, false
}

// str reads a string value.
func (d *eventDecoder) str() (string, bool) {
	raw, ok := d.rawKey()
	if !ok {
		return "", false
	}
	return unquote(raw)
}

// unquote is the text of a string's raw contents: its escapes resolved; false
// where encoding/json would replace something (invalid UTF-8, a lone
// surrogate) or refuse it.
func unquote(raw []byte) (string, bool) {
	plain := true
	for _, c := range raw {
		if c == '\\' || c >= utf8.RuneSelf {
			plain = false
			break
		}
	}
	if plain {
		return string(raw), true
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw), utf8.Valid(raw)
	}
	if !utf8.Valid(raw) {
		return "", false
	}
	out := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c != '\\' {
			out = append(out, c)
			continue
		}
		i++
		if i == len(raw) {
			return "", false
		}
		switch raw[i] {
		case '"', '\\', '/':
			out = append(out, raw[i])
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := hex4(raw[i+1:])
			if !ok || utf16.IsSurrogate(r) {
				return "", false // surrogate pairs: encoding/json's
			}
			out = utf8.AppendRune(out, r)
			i += 4
		default:
			return "", false
		}
	}
	return string(out), true
}

func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// number reads a JSON number and returns its text.
func (d *eventDecoder) number() (string, bool) {
	start := d.i
	if d.peek() == '-' {
		d.i++
	}
	switch c := d.peek(); {
	case c == '0':
		d.i++
	case c >= '1' && c <= '9':
		d.digits()
	default:
		return "", false
	}
	if d.peek() == '.' {
		d.i++
		if !d.digits() {
			return "", false
		}
	}
	if c := d.peek(); c == 'e' || c == 'E' {
		d.i++
		if c := d.peek(); c == '+' || c == '-' {
			d.i++
		}
		if !d.digits() {
			return "", false
		}
	}
	return string(d.b[start:d.i]), true
}

// digits reads one or more digits.
func (d *eventDecoder) digits() bool {
	start := d.i
	for d.i < len(d.b) && d.b[d.i] >= '0' && d.b[d.i] <= '9' {
		d.i++
	}
	return d.i > start
}

// maxSkipDepth bounds the nesting of a value skip reads: each level is a
// call deeper (a body of 4 MB nested all the way took 768 MB of stack).
// Deeper bodies go to encoding/json, which refuses more than 10,000 levels
// without recursion.
const maxSkipDepth = 64

// skip reads any value, checking it is valid JSON, for a field the
// destination does not have.
func (d *eventDecoder) skip() bool {
	switch c := d.peek(); {
	case c == '"':
		raw, ok := d.rawKey()
		return ok && validEscapes(raw)
	case c == '-' || c >= '0' && c <= '9':
		_, ok := d.number()
		return ok
	case c == 't':
		return d.literal("true")
	case c == 'f':
		return d.literal("false")
	case c == 'n':
		return d.literal("null")
	case c == '{':
		return d.deeper(func() bool { return d.members(func(key []byte) bool { return validEscapes(key) && d.skip() }) })
	case c == '[':
		return d.deeper(func() bool { return d.elements(d.skip) })
	}
	return false
}

// deeper reads a value nested one level deeper with read, or reports false
// past maxSkipDepth.
func (d *eventDecoder) deeper(read func() bool) bool {
	if d.depth == maxSkipDepth {
		return false
	}
	d.depth++
	defer func() { d.depth-- }()
	return read()
}

// validEscapes reports whether a skipped string's escapes are JSON's (its
// text is not needed).
func validEscapes(raw []byte) bool {
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' {
			continue
		}
		i++
		if i == len(raw) {
			return false
		}
		switch raw[i] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		case 'u':
			if _, ok := hex4(raw[i+1:]); !ok {
				return false
			}
			i += 4
		default:
			return false
		}
	}
	return true
}

// eventCreated answers an accepted event (201, api.EventResponse) without
// reflection: the answer of every single-event request, where encoding/json
// took about 2 µs. It writes what c.JSON writes, byte for byte, trailing
// newline included; the id is a UUID, which JSON writes as it is (anything
// else goes through encoding/json).
func eventCreated(c echo.Context, id string) error {
	if !plainJSONString(id) {
		return c.JSON(http.StatusCreated, api.EventResponse{Success: true, EventID: id})
	}
	b := make([]byte, 0, len(`{"success":true,"event_id":""}`)+len(id)+1)
	b = append(b, `{"success":true,"event_id":"`...)
	b = append(b, id...)
	b = append(b, "\"}\n"...)
	return c.JSONBlob(http.StatusCreated, b)
}

// plainJSONString reports whether encoding/json writes s unchanged between
// its quotes: printable ASCII without '"', '\\', '<', '>' or '&'.
func plainJSONString(s string) bool {
	for i := range len(s) {
		switch c := s[i]; {
		case c < 0x20 || c >= 0x7f, c == '"', c == '\\', c == '<', c == '>', c == '&':
			return false
		}
	}
	return true
}

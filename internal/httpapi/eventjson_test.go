package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/tally-analytics/tally/pkg/api"
)

// decodeStd is decodeBody without decodeEvents: what the event routes
// decoded before it.
func decodeStd(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errTrailing
	}
	return nil
}

var errTrailing = errors.New("data after the value")

// eventTargets are fresh destinations of every type decodeEvents reads.
func eventTargets() [][2]any {
	return [][2]any{
		{new(api.PageviewRequest), new(api.PageviewRequest)},
		{new(api.CustomEventRequest), new(api.CustomEventRequest)},
		{new(api.TrackerEvent), new(api.TrackerEvent)},
		{new(api.BatchRequest), new(api.BatchRequest)},
	}
}

// sameAsStd checks that whatever decodeEvents takes, it decodes as
// encoding/json does, and that what it leaves it leaves untouched; it
// reports how many of the four types it took.
func sameAsStd(t *testing.T, body []byte) int {
	t.Helper()
	took := 0
	for _, pair := range eventTargets() {
		fast, std := pair[0], pair[1]
		if !decodeEvents(body, fast) {
			if !reflect.ValueOf(fast).Elem().IsZero() {
				t.Errorf("%T of %q: refused but not left zero: %+v", fast, body, fast)
			}
			continue
		}
		took++
		if err := decodeStd(body, std); err != nil {
			t.Errorf("%T of %q: taken, but encoding/json refuses it: %v", fast, body, err)
			continue
		}
		if !reflect.DeepEqual(fast, std) {
			t.Errorf("%T of %q:\n got %#v\nwant %#v", fast, body, fast, std)
		}
	}
	return took
}

var eventBodies = []string{
	`{"site_id":"s","url":"https://example.com/","referrer":"https://google.com/","user_agent":"Mozilla/5.0","ip_address":"81.2.69.1","visitor_id":"v"}`,
	` { "site_id" : "s" , "url" : "https://example.com/" } `,
	`{"site_id":"s","event_name":"Signup","url":"https://example.com/","props":{"plan":"pro","seats":3,"trial":true,"ref":null,"x":-1.5e3},"revenue":{"amount":49.99,"currency":"EUR"}}`,
	`{"site_id":"s","url":"https:\/\/example.com\/caf\u00e9?q=\"a\"\\b\n","referrer":"https://bücher.de/straße"}`,
	`{"site_id":"s","url":"https://example.com/","extra":{"a":[1,2,{"b":null}],"c":"d\u0041"},"more":[true,false]}`,
	`{"site_id":"s","site_id":"t","url":null}`,
	`{"site_id":"s","props":{"a":"1"},"props":{"b":2}}`,
	`{"site_id":"s","props":{"a":"1"},"props":null}`,
	`{"site_id":"s","revenue":{"amount":1,"currency":"EUR"},"revenue":{"amount":2}}`,
	`{"site_id":"s","revenue":null,"props":{}}`,
	`{"site_id":"s","checkout_session_id":"cs_1","event_name":"pageview"}`,
	`{"site_id":"s","hash_routes":true,"url":"https://example.com/#/a"}`,
	`{"site_id":"s","hash_routes":true,"hash_routes":null}`, `{"hash_routes":false}`,
	`{"events":[{"site_id":"s1","url":"https://example.com/"},{"site_id":"s1","url":"https://example.com/","event_name":"Signup","props":{"plan":"pro","n":1.5}}]}`,
	`{"events":[]}`, `{"events":null}`, `{"other":1,"events":[{}]}`, `{}`,
	// what encoding/json decides: a case, an escape in a name, a wrong type,
	// a surrogate, invalid UTF-8, trailing data, bad JSON
	`{"Site_ID":"s"}`, `{"site\u005fid":"s"}`, `{"site_id":5}`, `{"site_id":"\ud83d\ude00"}`,
	"{\"site_id\":\"\xff\"}", `{"site_id":"s"} {}`, `{"site_id":"s"}]`, `{"site_id":"s",}`, `{"props":{"a":[1]}}`,
	`{"hash_routes":"true"}`, `{"hash_routes":1}`, `{"hash_routes":tru}`,
	`{"props":{"a":{"b":1}}}`, `{"revenue":{"amount":"9.99"}}`, `{"revenue":{"Amount":1}}`, `{"events":[null]}`,
	`{"events":[{}],"events":[{}]}`, `{"events":{}}`, `[]`, `null`, `{"site_id":"a\x01"}`, `{"n":01}`, `{"n":1.}`,
	`{"n":-}`, `{"n":"\x"}`, `{"n":"\u12"}`, `{"site_id":"s"`, `{"site_id" "s"}`, `{"events":[{"site_id":"s"}`,
}

func TestDecodeEventsMatchesEncodingJSON(t *testing.T) {
	for _, body := range eventBodies {
		sameAsStd(t, []byte(body))
	}
}

// TestDecodeEventsTakesWhatClientsSend: the bodies clients send are decoded
// without falling back — PHP's escaped slashes, non-ASCII text and unknown
// fields included.
func TestDecodeEventsTakesWhatClientsSend(t *testing.T) {
	for _, c := range []struct {
		body string
		v    any
	}{
		{eventBodies[0], new(api.PageviewRequest)},
		{eventBodies[2], new(api.CustomEventRequest)},
		{eventBodies[2], new(api.TrackerEvent)},
		{eventBodies[3], new(api.PageviewRequest)},
		{eventBodies[4], new(api.PageviewRequest)},
		{eventBodies[11], new(api.TrackerEvent)},
		{eventBodies[14], new(api.BatchRequest)},
	} {
		if !decodeEvents([]byte(c.body), c.v) {
			t.Errorf("%T of %s: fell back to encoding/json", c.v, c.body)
		}
	}
	var r api.CustomEventRequest
	if !decodeEvents([]byte(eventBodies[3]), &r) || r.URL != "https://example.com/café?q=\"a\"\\b\n" || r.Referrer != "https://bücher.de/straße" {
		t.Errorf("escapes: %+v", r)
	}
	for _, body := range eventBodies[19:] {
		if n := sameAsStd(t, []byte(body)); n == 4 {
			t.Errorf("%q: taken for every type; it is there to be left to encoding/json", body)
		}
	}
}

// FuzzDecodeEvents: for any body, what decodeEvents takes equals what
// encoding/json makes of it.
func FuzzDecodeEvents(f *testing.F) {
	for _, body := range eventBodies {
		f.Add([]byte(body))
	}
	f.Fuzz(func(t *testing.T, body []byte) { sameAsStd(t, body) })
}

// TestDecodeEventsLeavesFilledValues: a value that holds something already
// is left to encoding/json, which decodes into what it holds.
func TestDecodeEventsLeavesFilledValues(t *testing.T) {
	r := api.PageviewRequest{Referrer: "https://kept.example/"}
	if decodeEvents([]byte(eventBodies[1]), &r) {
		t.Fatal("took a value that was not zero")
	}
	if err := decodeBody([]byte(eventBodies[1]), &r); err != nil || r.Referrer != "https://kept.example/" || r.SiteID != "s" {
		t.Errorf("decodeBody: %v, %+v", err, r)
	}
	var nilPtr *api.PageviewRequest
	if decodeEvents([]byte(eventBodies[1]), nilPtr) {
		t.Error("took a nil pointer")
	}
}

// TestEventCreated holds the accepted event's answer to what c.JSON
// writes, for a UUID and for ids JSON has to escape.
func TestEventCreated(t *testing.T) {
	for _, id := range []string{"01936f0e-6a4b-7c2d-8e9f-0a1b2c3d4e5f", "", "a\"b", `a\b`, "<x>&", "é", "\x01", "\x7f"} {
		answer := func(f func(echo.Context) error) (int, string, string) {
			rec := httptest.NewRecorder()
			c := echo.New().NewContext(httptest.NewRequest(http.MethodPost, "/", nil), rec)
			if err := f(c); err != nil {
				t.Fatal(err)
			}
			return rec.Code, rec.Header().Get(echo.HeaderContentType), rec.Body.String()
		}
		code, ctype, body := answer(func(c echo.Context) error { return eventCreated(c, id) })
		wcode, wctype, wbody := answer(func(c echo.Context) error {
			return c.JSON(http.StatusCreated, api.EventResponse{Success: true, EventID: id})
		})
		if code != wcode || ctype != wctype || body != wbody {
			t.Errorf("id %q: got %d %q %q, c.JSON writes %d %q %q", id, code, ctype, body, wcode, wctype, wbody)
		}
	}
	if !plainJSONString("01936f0e-6a4b-7c2d-8e9f-0a1b2c3d4e5f") || plainJSONString("a\"b") {
		t.Error("plainJSONString: a UUID is plain, a quote is not")
	}
}

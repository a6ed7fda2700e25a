package httpapi

import (
	"bytes"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/pkg/api"
)

// readAll reads a body of declared length into one buffer of that length
// (plus the byte the EOF read needs), and any other body whole.
func TestReadAll(t *testing.T) {
	body := strings.Repeat(`{"name":"pageview"}`, 20_000) // 380,000 bytes
	tests := []struct {
		name     string
		declared int64
		wantCap  int // 0: any
	}{
		{name: "declared length", declared: int64(len(body)), wantCap: len(body) + 1},
		{name: "no declared length", declared: -1},
		{name: "declared shorter than sent", declared: 1000},
		{name: "declared longer than sent", declared: int64(len(body)) + 5000, wantCap: len(body) + 5001},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/api/v1/events/batch", iotest.HalfReader(strings.NewReader(body)))
			r.ContentLength = tt.declared
			got, err := readAll(r)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, []byte(body)) {
				t.Fatalf("read %d bytes, want the %d sent", len(got), len(body))
			}
			if tt.wantCap != 0 && cap(got) != tt.wantCap {
				t.Errorf("buffer of %d bytes, want %d: it grew", cap(got), tt.wantCap)
			}
		})
	}
}

// decodeBody refuses what is not one JSON object, and a batch of two lists
// of events (encoding/json would mix their fields into one list).
func TestDecodeBodyRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, body, field string
		v                 any
	}{
		{name: "a stray ]", body: `{"site_id":"s","url":"https://x.com/"} ]garbage`, v: new(api.PageviewRequest)},
		{name: "a stray }", body: `{"site_id":"s","url":"https://x.com/"}}`, v: new(api.TrackerEvent)},
		{name: "a batch with a stray }", body: `{"events":[{"site_id":"s","url":"https://x.com/"}]}}`, v: new(api.BatchRequest)},
		{name: "two lists of events", field: "events", v: new(api.BatchRequest),
			body: `{"events":[{"site_id":"s","url":"https://x.com/","event_name":"e","props":{"k":"v"}}],"Events":[{"site_id":"t","url":"https://t.com/"}]}`},
		{name: "nested past encoding/json's limit", body: `{"events":[{"x":` + strings.Repeat("[", 20_000), v: new(api.BatchRequest)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var e *errs.Error
			if err := decodeBody([]byte(tc.body), tc.v); !errors.As(err, &e) || e.Kind != errs.Invalid || e.Field != tc.field {
				t.Errorf("%v; want invalid_request on field %q", err, tc.field)
			}
		})
	}
}

// An unknown field nested deeper than decodeEvents follows goes to
// encoding/json, which decodes the body without recursing once a level.
func TestDecodeBodyDeepUnknownField(t *testing.T) {
	deep := strings.Repeat("[", maxSkipDepth+1) + strings.Repeat("]", maxSkipDepth+1)
	body := []byte(`{"site_id":"s","url":"https://x.com/","x":` + deep + `}`)
	if decodeEvents(body, new(api.PageviewRequest)) {
		t.Fatalf("decodeEvents took %d levels; it follows %d", maxSkipDepth+1, maxSkipDepth)
	}
	var r api.PageviewRequest
	if err := decodeBody(body, &r); err != nil || r.SiteID != "s" || r.URL != "https://x.com/" {
		t.Errorf("%+v, %v; want the pageview", r, err)
	}
	shallow := []byte(`{"site_id":"s","url":"https://x.com/","x":` + deep[1:len(deep)-1] + `}`)
	if !decodeEvents(shallow, new(api.PageviewRequest)) {
		t.Errorf("decodeEvents refused %d levels", maxSkipDepth)
	}
}

package httpapi

import (
	"bytes"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/iotest"
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

package session

import (
	"encoding/json"
	"testing"

	"github.com/tally-analytics/tally/internal/model"
)

// Sessions stored before the binary encoding (JSON) still decode, and a
// binary one whose first field happens to start with '{' is not taken for JSON.
func TestDecodeAttribution(t *testing.T) {
	a := model.Attribution{Hostname: string(make([]byte, '{')), ReferrerSource: "Google", CountryCode: "DE"}
	for name, stored := range map[string]string{
		"binary": string(model.AppendAttribution([]byte{attributionV1}, a)),
		"json":   func() string { b, _ := json.Marshal(a); return string(b) }(),
	} {
		got, err := decodeAttribution(stored)
		if err != nil || got != a {
			t.Errorf("%s: %+v, %v", name, got, err)
		}
	}
}

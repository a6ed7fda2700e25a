package httpapi

import (
	"encoding/json"
	"testing"
)

// A value of the wrong type is named by its whole path, array indexes and
// map keys included, where encoding/json names only the struct fields.
func TestValuePathNamesIndexesAndKeys(t *testing.T) {
	type step struct {
		Type  string            `json:"type"`
		Props map[string]string `json:"props"`
	}
	type request struct {
		Name   string         `json:"name"`
		Steps  []step         `json:"steps"`
		Limits map[string]int `json:"limits"`
	}
	for body, want := range map[string]string{
		`{"name":3}`: "name",
		`{"name":"x","steps":[{"type":"a"},{"type":"b","props":{"plan":"pro","seats":3}}]}`: "steps.1.props.seats",
		`{"steps":[{"type":"a","props":{"k":[1]}}]}`:                                        "steps.0.props.k",
		`{"steps":[{"type":{"x":1}}]}`:                                                      "steps.0.type",
		`{"steps":"no"}`:                                                                    "steps",
		`{"limits":{"a":1,"b":"two"}}`:                                                      "limits.b",
		`{"steps":[{}, {"props":[1]}]}`:                                                     "steps.1.props",
	} {
		var v request
		err := json.Unmarshal([]byte(body), &v)
		typeErr, ok := err.(*json.UnmarshalTypeError)
		if !ok {
			t.Fatalf("%s: %v, want a type error", body, err)
		}
		if got, ok := valuePath([]byte(body), typeErr.Offset); !ok || got != want {
			t.Errorf("%s: %q (%v), want %q", body, got, ok, want)
		}
	}
}

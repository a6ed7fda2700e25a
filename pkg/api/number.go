package api

import (
	"encoding/json"
	"fmt"
	"reflect"
)

// Number is a JSON number kept as its text, as json.Number keeps it:
// Number("49.99") in Go, 49.99 on the wire. Unlike json.Number it refuses
// a JSON string when decoding ("49.99" is a type error that names the
// field): an amount is a number.
type Number string

// String is the number's text.
func (n Number) String() string { return string(n) }

// MarshalJSON writes the number as is (an empty Number as 0, like
// json.Number).
func (n Number) MarshalJSON() ([]byte, error) {
	if n == "" {
		return []byte("0"), nil
	}
	var f json.Number
	if err := json.Unmarshal([]byte(n), &f); err != nil || len(n) == 0 || n[0] == '"' {
		return nil, fmt.Errorf("api: %q is not a JSON number", string(n))
	}
	return []byte(n), nil
}

// UnmarshalJSON reads a JSON number; null leaves n as it is.
func (n *Number) UnmarshalJSON(b []byte) error {
	switch {
	case len(b) == 0:
		return nil
	case b[0] == '-' || (b[0] >= '0' && b[0] <= '9'):
		*n = Number(b)
		return nil
	case string(b) == "null":
		return nil
	}
	value := map[byte]string{'"': "string", '{': "object", '[': "array", 't': "bool", 'f': "bool"}[b[0]]
	return &json.UnmarshalTypeError{Value: value, Type: reflect.TypeFor[float64]()}
}

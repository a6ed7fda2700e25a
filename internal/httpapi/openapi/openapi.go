// Package openapi holds tally's OpenAPI 3.1 document (openapi.yaml), kept
// by hand next to the code and checked against it by tests: every route is
// documented, every documented route exists, and the end-to-end tests'
// responses validate against it.
package openapi

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
)

//go:embed openapi.yaml
var yamlDoc []byte

// Load parses and validates the document.
func Load() (*openapi3.T, error) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(yamlDoc)
	if err != nil {
		return nil, fmt.Errorf("openapi: load: %w", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("openapi: validate: %w", err)
	}
	return doc, nil
}

var (
	jsonOnce sync.Once
	jsonDoc  []byte
	jsonErr  error
)

// JSON is the document as JSON, as served at /api/v1/openapi.json.
func JSON() ([]byte, error) {
	jsonOnce.Do(func() {
		var doc *openapi3.T
		if doc, jsonErr = Load(); jsonErr == nil {
			jsonDoc, jsonErr = json.Marshal(doc)
		}
	})
	return jsonDoc, jsonErr
}

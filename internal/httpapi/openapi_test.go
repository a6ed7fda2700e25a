package httpapi

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"

	"github.com/tally-analytics/tally/internal/httpapi/openapi"
)

func testServer() *Server {
	return New(Deps{Auth: stubAuth{}, Ingest: validating{}, Stats: struct{ Stats }{}, Goals: struct{ Goals }{},
		Revenue: struct{ Revenue }{}, SitesAPI: struct{ SitesAPI }{}, Limiter: allowAll{}, Log: discardLog(), MaxEventBody: 1024})
}

// The document and the route table agree both ways.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	doc, err := openapi.Load()
	if err != nil {
		t.Fatal(err)
	}
	if doc.OpenAPI != "3.1.0" {
		t.Errorf("openapi %q, want 3.1.0", doc.OpenAPI)
	}
	documented := map[string]bool{}
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			documented[method+" "+path] = true
		}
	}
	registered := map[string]bool{}
	for _, r := range testServer().Routes() {
		if r.Method == "echo_route_not_found" || strings.HasSuffix(r.Path, "/*") {
			continue
		}
		parts := strings.Split(r.Path, "/")
		for i, p := range parts {
			if strings.HasPrefix(p, ":") {
				parts[i] = "{" + p[1:] + "}"
			}
		}
		registered[r.Method+" "+strings.Join(parts, "/")] = true
	}
	for _, k := range sorted(registered) {
		if !documented[k] {
			t.Errorf("route %s is not in openapi.yaml", k)
		}
	}
	for _, k := range sorted(documented) {
		if !registered[k] {
			t.Errorf("openapi.yaml documents %s, which is not a route", k)
		}
	}
	if len(registered) < 30 {
		t.Errorf("only %d routes registered?", len(registered))
	}
}

func TestOpenAPIServed(t *testing.T) {
	rec := httptest.NewRecorder()
	testServer().Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/v1/openapi.json", nil))
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), `"openapi":"3.1.0"`) {
		t.Errorf("GET /api/v1/openapi.json: %d %.200s", rec.Code, rec.Body.String())
	}
}

func sorted(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// A v2 query's filters are the document's: a filter on a dimension, and the
// logical filters of two items.
func TestOpenAPIQueryFilters(t *testing.T) {
	doc, err := openapi.Load()
	if err != nil {
		t.Fatal(err)
	}
	schema := doc.Components.Schemas["QueryRequest"].Value
	for _, filters := range []string{
		`[["is", "visit:country", ["DE"]]]`,
		`[["not", ["is", "visit:country", ["DE"]]], ["has_done", ["is", "event:name", ["Signup"]]]]`,
		`[["or", [["is", "visit:country", ["DE"]], ["is", "visit:country", ["FR"]]]], ["and", [["is", "visit:os", ["iOS"]]]]]`,
	} {
		var body map[string]any
		if err := json.Unmarshal([]byte(`{"site_id": "s", "date_range": "7d", "metrics": ["visitors"], "filters": `+filters+`}`), &body); err != nil {
			t.Fatal(err)
		}
		if err := schema.VisitJSON(body); err != nil {
			t.Errorf("%s: %v", filters, err)
		}
	}
}

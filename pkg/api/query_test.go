package api

import (
	"encoding/json"
	"math"
	"testing"
)

// A figure not measured is null on the wire and NaN in Go; every other is
// written as encoding/json writes a float64.
func TestQueryMetricsNull(t *testing.T) {
	m := QueryMetrics{1, math.NaN(), 2.5, 1e21, 0}
	b, err := json.Marshal(QueryResult{Metrics: m, Dimensions: []string{"/"}})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"metrics":[1,null,2.5,1e+21,0],"dimensions":["/"]}`; string(b) != want {
		t.Errorf("%s, want %s", b, want)
	}
	var back QueryResult
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Metrics) != 5 || back.Metrics[0] != 1 || !math.IsNaN(back.Metrics[1]) || back.Metrics[2] != 2.5 ||
		back.Metrics[3] != 1e21 || back.Metrics[4] != 0 {
		t.Errorf("read back %v", back.Metrics)
	}
	if err := json.Unmarshal([]byte(`{"metrics":["1"]}`), &back); err == nil {
		t.Error("a text read as a figure")
	}
}

package chstore

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tally-analytics/tally/internal/stats"
)

// Each set a query binds travels beside it as a table, once however often
// the query names it; other arguments stay bound, and a ? in a string
// literal is no placeholder.
func TestExternalSets(t *testing.T) {
	a, b := stats.Set{"x", "y"}, stats.Set{"z"}
	query, args, tables, err := externalSets("SELECT a IN ?, '?', b IN ?, c = ?, d IN ?", []any{a, b, "v", stats.Set{"x", "y"}})
	if err != nil {
		t.Fatal(err)
	}
	if want := "SELECT a IN _set0, '?', b IN _set1, c = ?, d IN _set0"; query != want {
		t.Errorf("query = %q, want %q", query, want)
	}
	if diff := cmp.Diff([]any{"v"}, args); diff != "" {
		t.Errorf("args (-want +got):\n%s", diff)
	}
	var names []string
	for _, tb := range tables {
		names = append(names, tb.Name())
	}
	if diff := cmp.Diff([]string{"_set0", "_set1"}, names); diff != "" {
		t.Errorf("tables (-want +got):\n%s", diff)
	}
}

package migrations

import (
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"github.com/tally-analytics/tally/clickhouse"
	"github.com/tally-analytics/tally/postgres"
)

func TestSplit(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string
	}{
		{"one", "CREATE TABLE a (x int);", []string{"CREATE TABLE a (x int)"}},
		{"comments and two", "-- hello\nCREATE TABLE a (\n  x int -- trailing\n);\n\n-- c\nCREATE INDEX i ON a (x);\n",
			[]string{"CREATE TABLE a (\n  x int -- trailing\n)", "CREATE INDEX i ON a (x)"}},
		{"no final semicolon", "SELECT 1", []string{"SELECT 1"}},
		{"only comments", "-- nothing\n\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Split(tt.in)); diff != "" {
				t.Errorf("Split (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLoadOrdersAndRejectsBadNames(t *testing.T) {
	fsys := fstest.MapFS{
		"0002_b.sql": {Data: []byte("SELECT 2;")},
		"0001_a.sql": {Data: []byte("SELECT 1;")},
	}
	got, err := Load(fsys)
	if err != nil {
		t.Fatal(err)
	}
	want := []Migration{{Version: 1, Name: "a", Body: "SELECT 1;", Statements: []string{"SELECT 1"}},
		{Version: 2, Name: "b", Body: "SELECT 2;", Statements: []string{"SELECT 2"}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Load (-want +got):\n%s", diff)
	}
	for name, fsys := range map[string]fstest.MapFS{
		"bad name":  {"x_a.sql": {Data: []byte("SELECT 1;")}},
		"duplicate": {"0001_a.sql": {Data: []byte("SELECT 1;")}, "01_b.sql": {Data: []byte("SELECT 1;")}},
		"empty":     {"0001_a.sql": {Data: []byte("-- nothing")}},
	} {
		if _, err := Load(fsys); err == nil {
			t.Errorf("%s: Load succeeded, want error", name)
		}
	}
}

// The shipped migrations must always load.
func TestShippedMigrationsLoad(t *testing.T) {
	for _, fsys := range []struct {
		name string
		load func() ([]Migration, error)
	}{
		{"postgres", func() ([]Migration, error) { return Load(postgres.Migrations) }},
		{"clickhouse", func() ([]Migration, error) { return Load(clickhouse.Migrations) }},
	} {
		ms, err := fsys.load()
		if err != nil {
			t.Fatalf("%s: %v", fsys.name, err)
		}
		for i, m := range ms {
			if m.Version != i+1 {
				t.Errorf("%s: migration %d has version %d; versions must be 1..n without gaps", fsys.name, i, m.Version)
			}
		}
	}
}

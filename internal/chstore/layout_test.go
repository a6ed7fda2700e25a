package chstore

import (
	"errors"
	"flag"
	"os"
	"strings"
	"testing"

	ch "github.com/ClickHouse/clickhouse-go/v2"
	"github.com/google/go-cmp/cmp"

	"github.com/tally-analytics/tally/clickhouse"
	"github.com/tally-analytics/tally/internal/migrations"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/")

// renderAll renders the shipped migrations up to version last for l, one
// statement a line with its whitespace folded.
func renderAll(t *testing.T, l layout, last int) string {
	t.Helper()
	ms, err := migrations.Load(clickhouse.Migrations)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, m := range ms {
		if m.Version > last {
			continue
		}
		sql, err := l.render(m.Name, m.Body)
		if err != nil {
			t.Fatal(err)
		}
		for _, stmt := range migrations.Split(sql) {
			b.WriteString(strings.Join(strings.Fields(stmt), " ") + ";\n")
		}
	}
	return b.String()
}

func golden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s (-want +got):\n%s", path, diff)
	}
}

// On one node the templated migrations are, statement for statement, the
// plain SQL they were before the templates (testdata/migrations.one-node.sql
// holds that SQL), so databases migrated before see nothing new.
func TestOneNodeRenderingIsThePlainSQL(t *testing.T) {
	want, err := os.ReadFile("testdata/migrations.one-node.sql")
	if err != nil {
		t.Fatal(err)
	}
	var folded strings.Builder
	for _, stmt := range migrations.Split(string(want)) {
		folded.WriteString(strings.Join(strings.Fields(stmt), " ") + ";\n")
	}
	if diff := cmp.Diff(folded.String(), renderAll(t, layout{db: "tally"}, 5)); diff != "" {
		t.Errorf("one-node rendering (-plain +rendered):\n%s", diff)
	}
}

// The cluster rendering of the templated migrations, reviewed as a whole;
// every later one must render too (adapted or templated).
func TestClusterRendering(t *testing.T) {
	golden(t, "testdata/migrations.cluster.sql", renderAll(t, layout{cluster: "tally", db: "tally"}, 5))
	renderAll(t, layout{cluster: "tally", db: "tally"}, 1<<30)
}

func TestLayout(t *testing.T) {
	one, cl := layout{db: "d"}, layout{cluster: "c", db: "d"}
	for _, tc := range []struct{ name, got, want string }{
		{"local", one.local("events"), "events"},
		{"local cluster", cl.local("events"), "d.events_local"},
		{"engine", one.engine("t", "MergeTree"), "MergeTree"},
		{"engine params", one.engine("t", "VersionedCollapsingMergeTree", "sign", "version"), "VersionedCollapsingMergeTree(sign, version)"},
		{"engine cluster", cl.engine("t", "SummingMergeTree", "events"),
			"ReplicatedSummingMergeTree('/clickhouse/tables/{shard}/d/t', '{replica}', events)"},
		{"distributed", one.distributed("t", "visitor_id"), ""},
		{"distributed cluster", cl.distributed("t", "visitor_id"),
			"CREATE TABLE IF NOT EXISTS d.t ON CLUSTER c AS d.t_local ENGINE = Distributed(c, d, t_local, visitor_id)"},
		{"alter", one.alter("t", "ADD COLUMN x String"), "ALTER TABLE t ADD COLUMN x String"},
		{"alter cluster", cl.alter("t", "ADD COLUMN x String"),
			"/* every shard */ ALTER TABLE d.t_local ADD COLUMN x String;\n/* every node */ ALTER TABLE d.t ADD COLUMN x String"},
		{"computed", one.computed(), "MATERIALIZED"},
		{"computed cluster", cl.computed(), "DEFAULT"},
	} {
		if tc.got != tc.want {
			t.Errorf("%s = %q, want %q", tc.name, tc.got, tc.want)
		}
	}
}

// A plain file runs unchanged on one node; on a cluster, the statements
// whose shape leaves no choice are adapted, anything else refused.
func TestPlainFiles(t *testing.T) {
	one, cl := layout{db: "d"}, layout{cluster: "c", db: "d"}
	plain := "-- a comment\nCREATE TABLE IF NOT EXISTS t (\n    k UInt64 MATERIALIZED cityHash64(s),\n    s String\n) ENGINE = SummingMergeTree(n)\nORDER BY k;\nALTER TABLE t ADD COLUMN x String DEFAULT s;\n"
	if got, err := one.render("p.sql", plain); err != nil || got != plain {
		t.Errorf("one node: %q, %v; want the file unchanged", got, err)
	}
	got, err := cl.render("p.sql", plain)
	if err != nil {
		t.Fatal(err)
	}
	var stmts []string
	for _, s := range migrations.Split(got) {
		stmts = append(stmts, strings.Join(strings.Fields(s), " "))
	}
	want := []string{
		"CREATE TABLE IF NOT EXISTS d.t_local ON CLUSTER c ( k UInt64 DEFAULT cityHash64(s), s String ) ENGINE = " +
			"ReplicatedSummingMergeTree('/clickhouse/tables/{shard}/d/t', '{replica}', n) ORDER BY k",
		"CREATE TABLE IF NOT EXISTS d.t ON CLUSTER c AS d.t_local ENGINE = Distributed(c, d, t_local, rand())",
		"/* every shard */ ALTER TABLE d.t_local ADD COLUMN x String DEFAULT s",
		"/* every node */ ALTER TABLE d.t ADD COLUMN x String DEFAULT s",
	}
	if diff := cmp.Diff(want, stmts); diff != "" {
		t.Errorf("cluster (-want +got):\n%s", diff)
	}
	got, err = cl.render("v.sql", "CREATE MATERIALIZED VIEW IF NOT EXISTS v TO t AS\nSELECT a FROM events\nGROUP BY a;\n"+
		"TRUNCATE TABLE t;\nINSERT INTO t (a) SELECT a FROM events;\n")
	if err != nil {
		t.Fatal(err)
	}
	want = []string{
		"CREATE MATERIALIZED VIEW IF NOT EXISTS d.v_local ON CLUSTER c TO d.t_local AS SELECT a FROM d.events_local GROUP BY a",
		"TRUNCATE TABLE d.t_local ON CLUSTER c",
		"INSERT INTO t (a) SELECT a FROM events",
	}
	stmts = nil
	for _, s := range migrations.Split(got) {
		stmts = append(stmts, strings.Join(strings.Fields(s), " "))
	}
	if diff := cmp.Diff(want, stmts); diff != "" {
		t.Errorf("cluster views (-want +got):\n%s", diff)
	}
	for _, refused := range []string{
		"CREATE MATERIALIZED VIEW IF NOT EXISTS v ENGINE = MergeTree ORDER BY a AS SELECT a FROM events;",
		"CREATE TABLE IF NOT EXISTS r (a String) ENGINE = ReplacingMergeTree(a) ORDER BY a;",
		"INSERT INTO t (k) VALUES (1);",
		"DROP TABLE t;",
	} {
		if _, err := cl.render("p.sql", refused); err == nil || !strings.Contains(err.Error(), "not written for a cluster") {
			t.Errorf("%q on a cluster: %v, want a refusal", refused, err)
		}
	}
}

// A statement that adds or drops one column counts as done when ClickHouse
// says the column is there already or gone already, as 18.16 and current
// releases say it; no other error does.
func TestColumnDone(t *testing.T) {
	exc := func(code int32, msg string) error { return &ch.Exception{Code: code, Message: msg} }
	add := "ALTER TABLE events ADD COLUMN x String"
	drop := "ALTER TABLE tally.device_days_local DROP COLUMN visitors"
	for _, c := range []struct {
		stmt string
		err  error
		want bool
	}{
		{add, exc(44, "Cannot add column x: column with this name already exists"), true}, // 18.16
		{add, exc(15, "Cannot add column `x`: column with this name already exists"), true},
		{drop, exc(44, "Wrong column name. Cannot find column visitors to drop"), true}, // 18.16
		{drop, exc(10, "Wrong column name. Cannot find column `visitors` to drop."), true},
		{"ALTER TABLE t ON CLUSTER c DROP COLUMN visitors", exc(44, "Wrong column name. Cannot find column visitors to drop"), true},
		{drop, exc(44, "column with this name already exists"), false},                                 // not what a drop fails with
		{add, exc(10, "Wrong column name. Cannot find column x to drop"), false},                       // nor an add
		{"ALTER TABLE t DROP COLUMN a, DROP COLUMN b", exc(44, "Cannot find column b to drop"), false}, // two changes: one may have failed alone
		{drop, exc(60, "Table tally.device_days_local doesn't exist."), false},
		{drop, errors.New("connection refused"), false},
	} {
		if got := columnDone(c.stmt, c.err); got != c.want {
			t.Errorf("columnDone(%q, %v) = %v, want %v", c.stmt, c.err, got, c.want)
		}
	}
}

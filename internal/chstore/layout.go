package chstore

import (
	"fmt"
	"regexp"
	"strings"
	"text/template"

	"github.com/tally-analytics/tally/internal/migrations"
)

// layout is the one place that decides where tally's tables live.
//
// On one node (no cluster) every table is what its migration says, under
// its own name. On a cluster (TALLY_CLICKHOUSE_CLUSTER) a table's rows live
// in <name>_local on every node, a Replicated variant of the migration's
// engine (ZooKeeper path per shard and database), and <name> is a
// Distributed table over them: queries and inserts keep using <name>, so
// nothing above the store knows about the cluster. DDL runs ON CLUSTER.
// Materialised views read and write the local tables, so they fire on each
// shard's own inserts.
type layout struct {
	cluster string // empty on one node
	db      string
}

func (l layout) clustered() bool { return l.cluster != "" }

// local names the table that holds the rows on each node.
func (l layout) local(table string) string {
	if !l.clustered() {
		return table
	}
	return l.db + "." + table + "_local"
}

// qualified names a table that is the same on every node (the version
// table), with its database on a cluster, where ON CLUSTER DDL needs it.
func (l layout) qualified(table string) string {
	if !l.clustered() {
		return table
	}
	return l.db + "." + table
}

// onCluster is the ON CLUSTER clause of a DDL statement, empty on one node.
func (l layout) onCluster() string {
	if !l.clustered() {
		return ""
	}
	return "ON CLUSTER " + l.cluster
}

// engine is table's engine: engine(params) on one node, its Replicated
// variant on a cluster, whose replicas of a shard share a ZooKeeper path.
// A table replicated on every node whatever its shard (the version table)
// passes shard "all".
func (l layout) engine(table, engine string, params ...string) string {
	if !l.clustered() {
		if len(params) == 0 {
			return engine
		}
		return engine + "(" + strings.Join(params, ", ") + ")"
	}
	return l.replicated(table, "{shard}", engine, params)
}

func (l layout) replicated(table, shard, engine string, params []string) string {
	path := fmt.Sprintf("'/clickhouse/tables/%s/%s/%s'", shard, l.db, table)
	return "Replicated" + engine + "(" + strings.Join(append([]string{path, "'{replica}'"}, params...), ", ") + ")"
}

// distributed is the statement creating the Distributed table <table> over
// the local tables, its rows sent to a shard by key; none on one node.
func (l layout) distributed(table, key string) string {
	if !l.clustered() {
		return ""
	}
	return fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s.%s %s AS %s ENGINE = Distributed(%s, %s, %s, %s)",
		l.db, table, l.onCluster(), l.local(table), l.cluster, l.db, table+"_local", key)
}

// computed is the keyword of a column computed from others. MATERIALIZED
// on one node; on a cluster DEFAULT, because a Distributed table of
// ClickHouse 18.16 forwards materialised columns to the shards, which then
// refuse the insert. Either way inserts leave the column out.
func (l layout) computed() string {
	if !l.clustered() {
		return "MATERIALIZED"
	}
	return "DEFAULT"
}

// alter changes table (its columns, say): on a cluster both the local
// tables and the Distributed table, which must know the same columns. The
// local tables are replicated: the change goes to one replica of each shard,
// which replicates it (everyShardMarker; Store.everyShard says why not ON
// CLUSTER). ClickHouse 18.16 refuses ALTER ... ON CLUSTER of a Distributed
// table over replicated shards, so that one runs on every node in turn
// (everyNodeMarker).
func (l layout) alter(table, change string) string {
	if !l.clustered() {
		return "ALTER TABLE " + table + " " + change
	}
	return fmt.Sprintf("%sALTER TABLE %s %s;\n%sALTER TABLE %s.%s %s",
		everyShardMarker, l.local(table), change, everyNodeMarker, l.db, table, change)
}

// everyNodeMarker and everyShardMarker start a statement that the migrator
// runs itself, as ON CLUSTER cannot or should not: on every node of the
// cluster in turn, or on one replica of each shard.
const (
	everyNodeMarker  = "/* every node */ "
	everyShardMarker = "/* every shard */ "
)

// funcs are the template functions of the migrations (clickhouse/README.md).
func (l layout) funcs() template.FuncMap {
	return template.FuncMap{
		"local":       l.local,
		"onCluster":   l.onCluster,
		"engine":      l.engine,
		"distributed": l.distributed,
		"computed":    l.computed,
		"alter":       l.alter,
	}
}

// render turns a migration file into SQL for this layout. A file with
// template actions ({{...}}) is a text/template over funcs. A plain file is
// used as it is on one node; on a cluster, its statements are adapted when
// their shape leaves no choice (adaptPlain), and refused otherwise.
func (l layout) render(name, body string) (string, error) {
	if !strings.Contains(body, "{{") {
		if !l.clustered() {
			return body, nil
		}
		return l.adaptPlain(name, body)
	}
	t, err := template.New(name).Option("missingkey=error").Funcs(l.funcs()).Parse(body)
	if err != nil {
		return "", fmt.Errorf("chstore: migration %s: %w", name, err)
	}
	var b strings.Builder
	if err := t.Execute(&b, nil); err != nil {
		return "", fmt.Errorf("chstore: migration %s: %w", name, err)
	}
	return b.String(), nil
}

var (
	ident       = `([A-Za-z_][A-Za-z0-9_]*)`
	plainAlter  = regexp.MustCompile(`(?is)^ALTER\s+TABLE\s+` + ident + `\s+(.*)$`)
	plainCreate = regexp.MustCompile(`(?is)^CREATE\s+TABLE\s+IF\s+NOT\s+EXISTS\s+` + ident + `\s*\((.*)\)\s*ENGINE\s*=\s*` +
		`(MergeTree|SummingMergeTree|AggregatingMergeTree|CollapsingMergeTree|VersionedCollapsingMergeTree)(?:\(([^)]*)\))?(.*)$`)
	plainView = regexp.MustCompile(`(?is)^CREATE\s+MATERIALIZED\s+VIEW\s+IF\s+NOT\s+EXISTS\s+` + ident + `\s+TO\s+` + ident +
		`\s+AS\s+(SELECT\s.*)$`)
	plainTruncate = regexp.MustCompile(`(?is)^TRUNCATE\s+TABLE\s+` + ident + `$`)
	plainInsert   = regexp.MustCompile(`(?is)^INSERT\s+INTO\s+` + ident + `\s*\([^)]*\)\s*SELECT\s`)
	sourceTable   = regexp.MustCompile(`(?i)\b(FROM|JOIN)\s+` + ident + `\b`)
	materialized  = regexp.MustCompile(`(?i)\bMATERIALIZED\b`)
)

// adaptPlain adapts a plain (untemplated) migration to the cluster, one
// statement at a time, where its shape leaves no choice — each the way the
// template functions would write it:
//
//   - ALTER TABLE t ... changes the local and the Distributed table (alter);
//   - CREATE TABLE IF NOT EXISTS t (...) ENGINE = E, of an engine whose
//     queries add rows up (MergeTree, Summing, Aggregating, Collapsing),
//     becomes local tables of the Replicated E and a Distributed table that
//     spreads rows at random (rand()): such a table's rows can sit on any
//     shard; a view's rows sit on the shard of the rows they summarise;
//   - CREATE MATERIALIZED VIEW IF NOT EXISTS v TO t AS SELECT ... FROM s
//     becomes a view of each node, from the local s into the local t;
//   - TRUNCATE TABLE t empties the local tables on every node;
//   - INSERT INTO t (...) SELECT ... runs as it is: through the Distributed
//     tables, it reads every shard and spreads what it writes.
//
// Anything else — a ReplacingMergeTree, whose copies of a row must meet on
// one shard, a table that must be sharded by visitor, any other statement —
// says what it wants with the template functions, and is refused until it
// does.
func (l layout) adaptPlain(name, body string) (string, error) {
	var out []string
	for _, stmt := range migrations.Split(body) {
		adapted, ok := l.adaptStatement(stmt)
		if !ok {
			return "", fmt.Errorf("chstore: migration %s is not written for a cluster (TALLY_CLICKHOUSE_CLUSTER): "+
				"write it with the template functions of clickhouse/README.md; statement: %.80q", name, stmt)
		}
		out = append(out, adapted...)
	}
	return strings.Join(out, ";\n") + ";\n", nil
}

func (l layout) adaptStatement(stmt string) ([]string, bool) {
	if m := plainAlter.FindStringSubmatch(stmt); m != nil {
		return []string{l.alter(m[1], m[2])}, true
	}
	if m := plainCreate.FindStringSubmatch(stmt); m != nil {
		var params []string
		if strings.TrimSpace(m[4]) != "" {
			params = []string{strings.TrimSpace(m[4])}
		}
		cols := materialized.ReplaceAllString(m[2], l.computed())
		return []string{
			fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s %s (%s) ENGINE = %s%s", l.local(m[1]), l.onCluster(), cols,
				l.engine(m[1], m[3], params...), m[5]),
			l.distributed(m[1], "rand()"),
		}, true
	}
	if m := plainView.FindStringSubmatch(stmt); m != nil {
		query := sourceTable.ReplaceAllStringFunc(m[3], func(s string) string {
			sm := sourceTable.FindStringSubmatch(s)
			return sm[1] + " " + l.local(sm[2])
		})
		return []string{fmt.Sprintf("CREATE MATERIALIZED VIEW IF NOT EXISTS %s %s TO %s AS %s",
			l.local(m[1]), l.onCluster(), l.local(m[2]), query)}, true
	}
	if m := plainTruncate.FindStringSubmatch(stmt); m != nil {
		return []string{"TRUNCATE TABLE " + l.local(m[1]) + " " + l.onCluster()}, true
	}
	if plainInsert.MatchString(stmt) {
		return []string{stmt}, true
	}
	return nil, false
}

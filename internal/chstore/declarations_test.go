package chstore

import (
	"strings"
	"testing"

	"github.com/tally-analytics/tally/clickhouse"
	"github.com/tally-analytics/tally/internal/migrations"
	"github.com/tally-analytics/tally/internal/stats"
)

// The migrations' rollup views and backfills are the declarations' SQL
// (internal/stats): one rule, in one place. The migrations are read as one
// node runs them, their templates rendered.
func TestRollupMigrationMatchesDeclarations(t *testing.T) {
	ms, err := migrations.Load(clickhouse.Migrations)
	if err != nil {
		t.Fatal(err)
	}
	flat := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	var stmts []string
	for _, m := range ms {
		sql, err := layout{db: "tally"}.render(m.Name, m.Body)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range migrations.Split(sql) {
			stmts = append(stmts, flat(s))
		}
	}
	have := strings.Join(stmts, "\n")
	for _, want := range stats.RollupViews() {
		if !strings.Contains("\n"+have+"\n", "\n"+flat(want)+"\n") {
			t.Errorf("the migrations lack the declared statement\n%s", want)
		}
	}
	for _, table := range stats.RollupTables() {
		if !strings.Contains(have, "CREATE TABLE IF NOT EXISTS "+table+" (") {
			t.Errorf("the migrations do not create %s", table)
		}
	}
}

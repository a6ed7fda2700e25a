package main

import (
	"io/fs"
	"regexp"
	"strings"
	"testing"

	"github.com/tally-analytics/tally/clickhouse"
)

// tally migrate --help names every ClickHouse migration that fills a table
// from the stored rows: the ones not to run while servers insert.
func TestMigrateHelpNamesEveryBackfill(t *testing.T) {
	help := newMigrateCmd().Long
	comment := regexp.MustCompile(`(?m)--.*$`)
	backfill := regexp.MustCompile(`(?is)^\s*INSERT\s+INTO\b.*\bFROM\s+(events|sessions|bot_events)\b`)
	names, err := fs.Glob(clickhouse.Migrations, "*.sql")
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, name := range names {
		b, err := fs.ReadFile(clickhouse.Migrations, name)
		if err != nil {
			t.Fatal(err)
		}
		for _, stmt := range strings.Split(comment.ReplaceAllString(string(b), ""), ";") {
			if !backfill.MatchString(stmt) {
				continue
			}
			found++
			if num := name[:4]; !regexp.MustCompile(`\b` + num + `\b|\b` + num + `_`).MatchString(help) {
				t.Errorf("%s fills a table from the stored rows; tally migrate --help does not name it", name)
			}
			break
		}
	}
	if found < 5 {
		t.Errorf("only %d migrations fill tables from the stored rows?", found)
	}
}

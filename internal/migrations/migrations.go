// Package migrations reads numbered, forward-only SQL migrations
// (NNNN_name.sql) from an embedded file system. Applying them is the stores'
// job; this package only lists and splits them.
package migrations

import (
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
)

// Migration is one numbered .sql file.
type Migration struct {
	Version int
	Name    string
	// Body is the file's text; a store that renders its migrations as
	// templates (ClickHouse, for a cluster) splits the result itself.
	Body       string
	Statements []string
}

// Load lists the migrations of fsys in version order. File names must look
// like 0001_name.sql; versions must be unique.
func Load(fsys fs.FS) ([]Migration, error) {
	names, err := fs.Glob(fsys, "*.sql")
	if err != nil {
		return nil, fmt.Errorf("migrations: list: %w", err)
	}
	var out []Migration
	seen := map[int]string{}
	for _, name := range names {
		num, rest, ok := strings.Cut(strings.TrimSuffix(path.Base(name), ".sql"), "_")
		version, err := strconv.Atoi(num)
		if !ok || err != nil || version <= 0 {
			return nil, fmt.Errorf("migrations: %s: name must be NNNN_name.sql", name)
		}
		if prev, dup := seen[version]; dup {
			return nil, fmt.Errorf("migrations: %s and %s share version %d", prev, name, version)
		}
		seen[version] = name
		body, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, fmt.Errorf("migrations: read %s: %w", name, err)
		}
		stmts := Split(string(body))
		if len(stmts) == 0 {
			return nil, fmt.Errorf("migrations: %s holds no statement", name)
		}
		out = append(out, Migration{Version: version, Name: rest, Body: string(body), Statements: stmts})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	return out, nil
}

// Split cuts a script into statements at semicolons that end a line, dropping
// "--" comment lines. It is deliberately simple: migrations must not put a
// semicolon at the end of a line inside a string literal or a function body.
func Split(script string) []string {
	var stmts []string
	var cur strings.Builder
	flush := func() {
		if s := strings.TrimSpace(cur.String()); s != "" {
			stmts = append(stmts, s)
		}
		cur.Reset()
	}
	for _, line := range strings.Split(script, "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "--") {
			continue
		}
		if strings.HasSuffix(trimmed, ";") {
			cur.WriteString(strings.TrimSuffix(strings.TrimRight(line, " \t\r"), ";"))
			flush()
			continue
		}
		cur.WriteString(line)
		cur.WriteString("\n")
	}
	flush()
	return stmts
}

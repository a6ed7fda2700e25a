package chstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/ext"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/tally-analytics/tally/internal/stats"
)

// Rows runs a query built by the stats package: dims string columns, then
// metrics Float64 columns, the WITH TOTALS row if any, and the number of rows
// before the LIMIT.
func (s *Store) Rows(ctx context.Context, query string, args []any, dims, metrics int) (stats.Result, error) {
	var res stats.Result
	var mu sync.Mutex
	profile := clickhouse.WithProfileInfo(func(p *clickhouse.ProfileInfo) {
		mu.Lock()
		res.RowsBeforeLimit = max(res.RowsBeforeLimit, int64(p.RowsBeforeLimit))
		mu.Unlock()
	})
	err := s.statsQuery(ctx, query, args, func(rows driver.Rows) error {
		row := stats.Row{Dims: make([]string, dims), Metrics: make([]float64, metrics)}
		if err := rows.Scan(rowDest(&row)...); err != nil {
			return err
		}
		res.Rows = append(res.Rows, row)
		return nil
	}, func(rows driver.Rows) {
		totals := stats.Row{Dims: make([]string, dims), Metrics: make([]float64, metrics)}
		if err := rows.Totals(rowDest(&totals)...); err == nil {
			res.Totals = totals.Metrics
		}
	}, profile)
	mu.Lock()
	defer mu.Unlock()
	return res, err
}

// Each runs a query built by the stats package and calls row after scanning
// each of its rows into dest, as they arrive; then, when totals is given,
// scans the WITH TOTALS row into it (left as it is when the query had no
// rows, and so no totals).
func (s *Store) Each(ctx context.Context, query string, args []any, dest []any, row func(), totals ...any) error {
	var scanTotals func(driver.Rows)
	var totalsErr error
	if len(totals) > 0 {
		scanTotals = func(rows driver.Rows) {
			if err := rows.Totals(totals...); !errors.Is(err, sql.ErrNoRows) {
				totalsErr = err
			}
		}
	}
	err := s.statsQuery(ctx, query, args, func(rows driver.Rows) error {
		if err := rows.Scan(dest...); err != nil {
			return err
		}
		row()
		return nil
	}, scanTotals)
	if err == nil && totalsErr != nil {
		return fmt.Errorf("chstore: stats query totals: %w", totalsErr)
	}
	return err
}

// statsQuery runs a query built by the stats package, with its sets sent
// beside it (externalSets) and opts: scan takes each row as it arrives,
// then totals (if any) the result once every row is read.
func (s *Store) statsQuery(ctx context.Context, query string, args []any, scan func(driver.Rows) error, totals func(driver.Rows),
	opts ...clickhouse.QueryOption) error {
	query, args, tables, err := externalSets(query, args)
	if err != nil {
		return err
	}
	ctx = clickhouse.Context(ctx, append(opts, clickhouse.WithExternalTable(tables...))...)
	err = s.timed("stats_query", func() error {
		rows, err := s.conn.Query(ctx, query, args...)
		if err != nil {
			return fmt.Errorf("chstore: stats query: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			if err := scan(rows); err != nil {
				return fmt.Errorf("chstore: stats query: %w", err)
			}
		}
		if err := rows.Err(); err != nil {
			return fmt.Errorf("chstore: stats query: %w", err)
		}
		if totals != nil {
			totals(rows)
		}
		if err := rows.Close(); err != nil {
			return fmt.Errorf("chstore: stats query: %w", err)
		}
		return nil
	})
	return translate(err)
}

// externalSets sends each stats.Set argument ("x IN ?") as a table of its
// own beside the query (ClickHouse's external data) instead of a literal list
// in its text, so a long list of long values (a page of 1,000 long paths)
// cannot push the query past ClickHouse's max_query_size: the placeholder
// becomes the table's name. A set given again (the channel rule names its
// lists many times) is sent once, and every placeholder of it names that
// table: the query's text then repeats the same expression, which
// ClickHouse computes once.
func externalSets(query string, args []any) (string, []any, []*ext.Table, error) {
	var tables []*ext.Table
	var sent []stats.Set
	var kept []any
	var b strings.Builder
	arg := 0
	for i := 0; i < len(query); i++ {
		c := query[i]
		if c == '\'' { // a string literal holds no placeholder
			j := i + 1
			for j < len(query) && query[j] != '\'' {
				if query[j] == '\\' {
					j++
				}
				j++
			}
			b.WriteString(query[i:min(j+1, len(query))])
			i = j
			continue
		}
		if c != '?' || arg >= len(args) {
			b.WriteByte(c)
			continue
		}
		set, ok := args[arg].(stats.Set)
		if !ok {
			kept = append(kept, args[arg])
			arg++
			b.WriteByte(c)
			continue
		}
		name, seen := setName(sent, set)
		if !seen {
			t, err := externalTable(name, []string(set))
			if err != nil {
				return "", nil, nil, fmt.Errorf("chstore: set: %w", err)
			}
			tables, sent = append(tables, t), append(sent, set)
		}
		b.WriteString(name)
		arg++
	}
	return b.String(), append(kept, args[arg:]...), tables, nil
}

// setName is the name of the table of set: that of the same set among
// sent (seen), else the name of the next table.
func setName(sent []stats.Set, set stats.Set) (name string, seen bool) {
	for i, s := range sent {
		if slices.Equal(s, set) {
			return fmt.Sprintf("_set%d", i), true
		}
	}
	return fmt.Sprintf("_set%d", len(sent)), false
}

// rowDest points Scan at a row's fields.
func rowDest(r *stats.Row) []any {
	dest := make([]any, 0, len(r.Dims)+len(r.Metrics))
	for i := range r.Dims {
		dest = append(dest, &r.Dims[i])
	}
	for i := range r.Metrics {
		dest = append(dest, &r.Metrics[i])
	}
	return dest
}

package chstore

import (
	"context"
	"fmt"
	"sync"

	"github.com/ClickHouse/clickhouse-go/v2"

	"github.com/tally-analytics/tally/internal/stats"
)

// Rows runs a query built by the stats package: dims string columns, then
// metrics Float64 columns, the WITH TOTALS row if any, and the number of rows
// before the LIMIT.
func (s *Store) Rows(ctx context.Context, query string, args []any, dims, metrics int) (stats.Result, error) {
	args = append([]any(nil), args...)
	for i, a := range args {
		if set, ok := a.(stats.Set); ok {
			// a tuple, for "x IN ?"
			vals := make([]any, len(set))
			for j, v := range set {
				vals[j] = v
			}
			args[i] = clickhouse.GroupSet{Value: vals}
		}
	}
	var res stats.Result
	var mu sync.Mutex
	ctx = clickhouse.Context(ctx, clickhouse.WithProfileInfo(func(p *clickhouse.ProfileInfo) {
		mu.Lock()
		res.RowsBeforeLimit = max(res.RowsBeforeLimit, int64(p.RowsBeforeLimit))
		mu.Unlock()
	}))
	err := s.timed("stats_query", func() error {
		rows, err := s.conn.Query(ctx, query, args...)
		if err != nil {
			return fmt.Errorf("chstore: stats query: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			row := stats.Row{Dims: make([]string, dims), Metrics: make([]float64, metrics)}
			if err := rows.Scan(rowDest(&row)...); err != nil {
				return fmt.Errorf("chstore: stats query: %w", err)
			}
			res.Rows = append(res.Rows, row)
		}
		if err := rows.Err(); err != nil {
			return fmt.Errorf("chstore: stats query: %w", err)
		}
		totals := stats.Row{Dims: make([]string, dims), Metrics: make([]float64, metrics)}
		if err := rows.Totals(rowDest(&totals)...); err == nil {
			res.Totals = totals.Metrics
		}
		if err := rows.Close(); err != nil {
			return fmt.Errorf("chstore: stats query: %w", err)
		}
		return nil
	})
	if err != nil {
		return res, translate(err)
	}
	mu.Lock()
	defer mu.Unlock()
	return res, nil
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

package chstore

import (
	"context"
	"fmt"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/tally-analytics/tally/internal/stats"
)

// Rows runs a query built by the stats package: dims string columns, then
// metrics Float64 columns.
func (s *Store) Rows(ctx context.Context, query string, args []any, dims, metrics int) ([]stats.Row, error) {
	var out []stats.Row
	dest := make([]any, dims+metrics)
	err := s.collect(ctx, query, args, func(r driver.Rows) error {
		row := stats.Row{Dims: make([]string, dims), Metrics: make([]float64, metrics)}
		for i := range row.Dims {
			dest[i] = &row.Dims[i]
		}
		for i := range row.Metrics {
			dest[dims+i] = &row.Metrics[i]
		}
		if err := r.Scan(dest...); err != nil {
			return err
		}
		out = append(out, row)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("chstore: stats query: %w", err)
	}
	return out, nil
}

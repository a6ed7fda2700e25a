package chstore

import "context"

// QueryRows runs a query whose columns are all strings and returns its rows (tests).
func (s *Store) QueryRows(ctx context.Context, query string, args ...any) ([][]string, error) {
	rows, err := s.conn.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out [][]string
	for rows.Next() {
		row := make([]string, len(rows.Columns()))
		dest := make([]any, len(row))
		for i := range row {
			dest[i] = &row[i]
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		out = append(out, row)
	}
	return out, rows.Err()
}

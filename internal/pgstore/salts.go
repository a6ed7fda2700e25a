package pgstore

import (
	"context"
	"time"
)

// Salt returns the visitor salt of a day, storing candidate as that day's salt
// when it has none yet. All instances therefore agree on each day's salt.
func (s *Store) Salt(ctx context.Context, day time.Time, candidate []byte) ([]byte, error) {
	var salt []byte
	err := s.pool.QueryRow(ctx, `INSERT INTO visitor_salts (day, salt) VALUES ($1, $2)
		ON CONFLICT (day) DO UPDATE SET day = EXCLUDED.day RETURNING salt`, day.Format(time.DateOnly), candidate).Scan(&salt)
	return salt, translate("pgstore: salt", err)
}

// DeleteSaltsBefore forgets the salts of days before day, so old visitor ids
// cannot be recomputed.
func (s *Store) DeleteSaltsBefore(ctx context.Context, day time.Time) error {
	_, err := s.pool.Exec(ctx, "DELETE FROM visitor_salts WHERE day < $1", day.Format(time.DateOnly))
	return translate("pgstore: delete salts", err)
}

package pgstore

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tally-analytics/tally/internal/model"
)

// UpsertRates stores rates, replacing those of the same currency and day.
func (s *Store) UpsertRates(ctx context.Context, rates []model.Rate) error {
	batch := &pgx.Batch{}
	for _, r := range rates {
		batch.Queue(`INSERT INTO exchange_rates (currency, day, rate) VALUES ($1, $2, $3)
			ON CONFLICT (currency, day) DO UPDATE SET rate = EXCLUDED.rate`, r.Currency, r.Day.Format(time.DateOnly), r.Rate)
	}
	return translate("pgstore: upsert rates", s.pool.SendBatch(ctx, batch).Close())
}

// LatestRate is the latest rate of a currency on or before day (its UTC
// date), however old; errs.ErrNotFound when it has none.
func (s *Store) LatestRate(ctx context.Context, currency string, day time.Time) (rate string, err error) {
	err = s.pool.QueryRow(ctx, `SELECT rate::text FROM exchange_rates WHERE currency = $1 AND day <= $2::date
		ORDER BY day DESC LIMIT 1`, currency, day.UTC().Format(time.DateOnly)).Scan(&rate)
	return rate, translate("pgstore: latest rate", err)
}

// RateOn finds the rate of a currency for day: the rate of that day or of
// the latest of the seven days before it. settled reports whether a later
// day already has a rate, that is, whether day itself will never get one
// (a weekend or holiday) rather than not having been published yet.
// errs.ErrNotFound when there is no rate in the window.
func (s *Store) RateOn(ctx context.Context, currency string, day time.Time) (rate string, on time.Time, settled bool, err error) {
	d := day.Format(time.DateOnly)
	err = s.pool.QueryRow(ctx, `SELECT rate::text, day,
			EXISTS (SELECT 1 FROM exchange_rates WHERE currency = $1 AND day > $2::date)
		FROM exchange_rates WHERE currency = $1 AND day <= $2::date AND day > $2::date - 7
		ORDER BY day DESC LIMIT 1`, currency, d).Scan(&rate, &on, &settled)
	return rate, on, settled, translate("pgstore: rate on", err)
}

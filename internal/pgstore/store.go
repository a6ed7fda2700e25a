// Package pgstore is tally's Postgres store: users, sites, memberships, API
// keys, provider secrets and visitor salts. It is one of the two packages that
// import a database driver; it turns driver errors into errs sentinels at its
// boundary.
package pgstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/secretbox"
)

// Store wraps a pgx connection pool.
type Store struct {
	pool *pgxpool.Pool
	// secrets seals the providers' webhook signing secrets at rest.
	secrets *secretbox.Box
}

// Option configures a Store.
type Option func(*Store)

// WithSecrets seals the providers' webhook signing secrets with box; without
// it they can be neither stored nor read.
func WithSecrets(box *secretbox.Box) Option { return func(s *Store) { s.secrets = box } }

// Open connects to Postgres and checks the connection.
func Open(ctx context.Context, url string, opts ...Option) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("pgstore: parse url: %w", errors.New("invalid postgres url"))
	}
	cfg.MaxConnIdleTime = 5 * time.Minute
	cfg.ConnConfig.ConnectTimeout = 5 * time.Second
	// no statement may hold a connection for long
	cfg.ConnConfig.RuntimeParams["statement_timeout"] = "30000"
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("pgstore: connect: %w", err)
	}
	pingCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := pool.Ping(pingCtx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("pgstore: ping: %w", err)
	}
	s := &Store{pool: pool}
	for _, o := range opts {
		o(s)
	}
	return s, nil
}

// Close closes the pool.
func (s *Store) Close() { s.pool.Close() }

// Ping checks that Postgres answers.
func (s *Store) Ping(ctx context.Context) error { return s.pool.Ping(ctx) }

// translate maps driver errors to errs sentinels: no rows → NotFound, unique
// violation → Conflict, Postgres out of reach → StoreDown (503). Other
// errors are wrapped with op.
func translate(op string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("%s: %w", op, errs.ErrNotFound)
	}
	if unreachable(err) {
		return fmt.Errorf("%s: %w", op, errs.StoreDown(err))
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "23505": // unique_violation
			return fmt.Errorf("%s: %w", op, errs.ErrConflict)
		case "22P02": // invalid_text_representation: an id that is no UUID names nothing
			return fmt.Errorf("%s: %w", op, errs.ErrNotFound)
		case "22021", "22P05": // not UTF-8, or a NUL: a client's bytes that are not text
			return fmt.Errorf("%s: %w", op, &errs.Error{Kind: errs.Invalid, Code: "invalid_request",
				Message: "a value is not valid text (it holds bytes that are not UTF-8, or a NUL character)", Err: err})
		}
	}
	return fmt.Errorf("%s: %w", op, err)
}

// unreachable reports whether err says Postgres cannot serve now: no
// connection, or the server refusing work (shutting down, starting,
// connection exceptions, too many connections).
func unreachable(err error) bool {
	var connErr *pgconn.ConnectError
	if errs.IsNetwork(err) || errors.As(err, &connErr) {
		return true
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return strings.HasPrefix(pgErr.Code, "08") || pgErr.Code == "57P01" || pgErr.Code == "57P02" ||
			pgErr.Code == "57P03" || pgErr.Code == "53300"
	}
	return false
}

// QueryRow runs a query returning one row (tools and tests).
func (s *Store) QueryRow(ctx context.Context, sql string, args ...any) interface{ Scan(...any) error } {
	return s.pool.QueryRow(ctx, sql, args...)
}

package pgstore

import (
	"context"

	"github.com/tally-analytics/tally/internal/model"
)

const userColumns = "id, email, name, password_hash, plan, COALESCE(events_per_hour, 0), created_at"

func scanUser(row interface{ Scan(...any) error }) (model.User, error) {
	var u model.User
	var id, plan string
	err := row.Scan(&id, &u.Email, &u.Name, &u.PasswordHash, &plan, &u.EventsPerHour, &u.CreatedAt)
	u.ID, u.Plan = model.UserID(id), model.Plan(plan)
	return u, err
}

// CreateUser stores a new user and returns it with its id; a taken email
// (case-insensitive) is errs.ErrConflict.
func (s *Store) CreateUser(ctx context.Context, u model.User) (model.User, error) {
	var limit *int
	if u.EventsPerHour > 0 {
		limit = &u.EventsPerHour
	}
	row := s.pool.QueryRow(ctx, `INSERT INTO users (email, name, password_hash, plan, events_per_hour)
		VALUES ($1, $2, $3, $4, $5) RETURNING `+userColumns,
		u.Email, u.Name, u.PasswordHash, string(u.Plan), limit)
	created, err := scanUser(row)
	return created, translate("pgstore: create user", err)
}

// UserByEmail finds a user by email, case-insensitively.
func (s *Store) UserByEmail(ctx context.Context, email string) (model.User, error) {
	u, err := scanUser(s.pool.QueryRow(ctx, "SELECT "+userColumns+" FROM users WHERE lower(email) = lower($1)", email))
	return u, translate("pgstore: user by email", err)
}

// UserByID finds a user by id.
func (s *Store) UserByID(ctx context.Context, id model.UserID) (model.User, error) {
	u, err := scanUser(s.pool.QueryRow(ctx, "SELECT "+userColumns+" FROM users WHERE id = $1", string(id)))
	return u, translate("pgstore: user by id", err)
}

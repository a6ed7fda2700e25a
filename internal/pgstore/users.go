package pgstore

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/tally-analytics/tally/internal/model"
)

const userColumns = "id, email, name, password_hash, plan, COALESCE(events_per_hour, 0), token_generation, created_at"

func scanUser(row interface{ Scan(...any) error }) (model.User, error) {
	var u model.User
	var id, plan string
	err := row.Scan(&id, &u.Email, &u.Name, &u.PasswordHash, &plan, &u.EventsPerHour, &u.TokenGeneration, &u.CreatedAt)
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
	var created model.User
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var err error
		created, err = scanUser(tx.QueryRow(ctx, `INSERT INTO users (email, name, password_hash, plan, events_per_hour)
			VALUES ($1, $2, $3, $4, $5) RETURNING `+userColumns,
			u.Email, u.Name, u.PasswordHash, string(u.Plan), limit))
		if err != nil {
			return err
		}
		// the sites this email was invited to
		if _, err := tx.Exec(ctx, `INSERT INTO site_members (site_id, user_id, role)
			SELECT site_id, $1, role FROM site_invitations WHERE email = lower($2)
			ON CONFLICT (site_id, user_id) DO NOTHING`, string(created.ID), created.Email); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, "DELETE FROM site_invitations WHERE email = lower($1)", created.Email)
		return err
	})
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

package pgstore

import (
	"context"
	"fmt"
	"regexp"

	"github.com/jackc/pgx/v5"
)

var safeName = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

// CreateDatabase creates database name through the admin connection URL. Used
// by the test harness to give every test its own database.
func CreateDatabase(ctx context.Context, adminURL, name string) error {
	return adminExec(ctx, adminURL, name, "CREATE DATABASE %s")
}

// DropDatabase drops database name if it exists, disconnecting its sessions.
func DropDatabase(ctx context.Context, adminURL, name string) error {
	return adminExec(ctx, adminURL, name, "DROP DATABASE IF EXISTS %s WITH (FORCE)")
}

func adminExec(ctx context.Context, adminURL, name, stmt string) error {
	if !safeName.MatchString(name) {
		return fmt.Errorf("pgstore: invalid database name %q", name)
	}
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return fmt.Errorf("pgstore: admin connect: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, fmt.Sprintf(stmt, name)); err != nil {
		return fmt.Errorf("pgstore: %s: %w", fmt.Sprintf(stmt, name), err)
	}
	return nil
}

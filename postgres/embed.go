// Package postgres holds tally's Postgres migrations: numbered, forward-only
// .sql files embedded into the binary.
package postgres

import "embed"

// Migrations are the NNNN_name.sql files of this directory.
//
//go:embed *.sql
var Migrations embed.FS

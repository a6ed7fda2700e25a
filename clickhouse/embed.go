// Package clickhouse holds tally's ClickHouse migrations: numbered,
// forward-only .sql files embedded into the binary. Every statement must run on
// ClickHouse 18.16 and on current releases.
package clickhouse

import "embed"

// Migrations are the NNNN_name.sql files of this directory.
//
//go:embed *.sql
var Migrations embed.FS

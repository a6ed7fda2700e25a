package main

import (
	"context"
	"fmt"
	"net"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/tally-analytics/tally/internal/app"
)

func newServeCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "serve",
		Short: "Serve the HTTP API (until SIGTERM, then drain and exit 0)",
		Long: `serve runs the API on TALLY_HTTP_ADDR. Accepted events are written to the
write-ahead log in TALLY_WAL_DIR before they are acknowledged, and flushed to
ClickHouse in batches. On SIGTERM or SIGINT it stops accepting requests,
flushes what it holds, and exits 0. Run "tally migrate" first.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			e, err := loadEnv(cmd)
			if err != nil {
				return err
			}
			return serve(cmd.Context(), e)
		},
	}
}

func serve(ctx context.Context, e *env) error {
	// A blocking fsync holds its P: with a single P, group commit would stall
	// every request behind it.
	if runtime.GOMAXPROCS(0) < 2 {
		runtime.GOMAXPROCS(2)
	}
	ln, err := net.Listen("tcp", e.cfg.HTTPAddr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", e.cfg.HTTPAddr, err)
	}
	defer ln.Close()
	a, err := app.New(ctx, e.cfg, e.log)
	if err != nil {
		return err
	}
	defer a.Close()
	return a.Serve(ctx, ln)
}

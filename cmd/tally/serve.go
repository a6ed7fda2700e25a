package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"runtime"
	"runtime/debug"
	"time"

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

// defaultMemoryLimit is the Go runtime's soft memory limit unless
// GOMEMLIMIT sets one: the collector works harder as the heap nears it, so
// bursts of batches do not inflate the resident memory (the live heap under
// full ingest load is about 100 MiB).
const defaultMemoryLimit = 192 << 20

// defaultGCPercent is the collector's GOGC unless the environment sets one.
// Under single-event ingest the live heap is about 50 MiB and tally
// allocates about 190 MB/s: at Go's default of 100 the collector ran about
// four times a second and took a tenth of tally's CPU. At 200 it runs half
// as often, and the memory limit still bounds the heap.
const defaultGCPercent = 200

func serve(ctx context.Context, e *env) error {
	// A blocking fsync holds its P: with a single P, group commit would stall
	// every request behind it.
	if runtime.GOMAXPROCS(0) < 2 {
		runtime.GOMAXPROCS(2)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(defaultMemoryLimit)
	}
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(defaultGCPercent)
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
	if addr := e.cfg.PprofAddr; addr != "" {
		stop, err := servePprof(addr)
		if err != nil {
			return err
		}
		defer stop()
		e.log.Info("profiling endpoints are served", "addr", addr)
	}
	return a.Serve(ctx, ln)
}

// servePprof serves net/http/pprof on addr until stop is called.
func servePprof(addr string) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on TALLY_PPROF_ADDR %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln) //nolint:errcheck // ends with Close
	return func() { srv.Close() }, nil
}

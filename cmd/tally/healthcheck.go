package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/spf13/cobra"
)

func newHealthcheckCmd() *cobra.Command {
	var url string
	cmd := &cobra.Command{
		Use:   "healthcheck [--url URL]",
		Short: "Exit 0 when the server's /health answers 200 (for container health checks)",
		Long: `healthcheck asks the server's /health and exits 0 when it answers 200. Without
--url it asks this host on the port of TALLY_HTTP_ADDR (:8080 unless set).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if url == "" {
				url = localHealthURL(os.Getenv("TALLY_HTTP_ADDR"))
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), 3*time.Second)
			defer cancel()
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
			if err != nil {
				return err
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return fmt.Errorf("health check: %w", err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				return fmt.Errorf("health check: status %d", resp.StatusCode)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&url, "url", "", "health endpoint to check (default: http://127.0.0.1:<port of TALLY_HTTP_ADDR>/health)")
	return cmd
}

// localHealthURL is the /health of a server listening on addr
// (TALLY_HTTP_ADDR), asked from this host: a server listening on every
// address is asked on loopback.
func localHealthURL(addr string) string {
	if addr == "" {
		addr = ":8080" // the default of TALLY_HTTP_ADDR
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		host, port = "127.0.0.1", "8080"
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port) + "/health"
}

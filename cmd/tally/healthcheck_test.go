package main

import (
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"sync/atomic"
	"testing"
)

// tally healthcheck asks the port the server listens on (TALLY_HTTP_ADDR),
// as the Docker image's HEALTHCHECK and the compose files run it without
// --url.
func TestHealthcheckFollowsHTTPAddr(t *testing.T) {
	var asked atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/health" {
			asked.Add(1)
			w.Write([]byte(`{"status":"ok"}`))
			return
		}
		http.NotFound(w, r)
	}))
	defer srv.Close()
	_, port, err := net.SplitHostPort(srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	for _, addr := range []string{":" + port, "0.0.0.0:" + port, "127.0.0.1:" + port, "[::]:" + port} {
		before := asked.Load()
		cmd := exec.Command(tallyBin, "healthcheck")
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "TALLY_HTTP_ADDR=" + addr}
		if out, err := cmd.CombinedOutput(); err != nil || asked.Load() != before+1 {
			t.Errorf("TALLY_HTTP_ADDR=%s: tally healthcheck: %v, %d requests to /health on port %s\n%s",
				addr, err, asked.Load()-before, port, out)
		}
	}
	// --url still wins
	cmd := exec.Command(tallyBin, "healthcheck", "--url", srv.URL+"/health")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "TALLY_HTTP_ADDR=127.0.0.1:1"}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("--url %s/health: %v\n%s", srv.URL, err, out)
	}
}

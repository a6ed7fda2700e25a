// Package tallyproc drives a tally binary from outside, as an operator
// would: its subcommands (with --json) and "tally serve" as a process to
// start, stop with SIGTERM or kill. The benchmark and the fault soak use it.
package tallyproc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// Server is a tally binary and the environment it runs with.
type Server struct {
	Bin string   // the tally binary
	Env []string // its environment
	URL string   // the base URL "tally serve" answers on

	cmd  *exec.Cmd
	done chan error
	logs *os.File
}

// CLI runs a tally subcommand with --json and decodes its answer into out
// (nil: discard it).
func (s *Server) CLI(ctx context.Context, out any, args ...string) error {
	cmd := exec.CommandContext(ctx, s.Bin, append(args, "--json")...)
	cmd.Env = s.Env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("tally %s: %w: %s", strings.Join(args, " "), err, bytes.TrimSpace(stderr.Bytes()))
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(stdout.Bytes(), out); err != nil {
		return fmt.Errorf("tally %s: decoding %q: %w", strings.Join(args, " "), stdout.Bytes(), err)
	}
	return nil
}

// Start runs "tally serve" with its output appended to logPath, and waits
// until /health answers.
func (s *Server) Start(ctx context.Context, logPath string) error {
	logs, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	s.logs = logs
	s.cmd = exec.Command(s.Bin, "serve")
	s.cmd.Env = s.Env
	s.cmd.Stdout, s.cmd.Stderr = logs, logs
	if err := s.cmd.Start(); err != nil {
		logs.Close()
		return fmt.Errorf("start tally serve: %w", err)
	}
	s.done = make(chan error, 1)
	go func() { s.done <- s.cmd.Wait(); logs.Close() }()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get(s.URL + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case err := <-s.done:
			return fmt.Errorf("tally serve exited at start (%v); log: %s", err, logPath)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return fmt.Errorf("tally serve did not answer /health within 30 s (log: %s)", logPath)
}

// Stop sends SIGTERM and waits for the drain; the error is the exit's (nil
// for exit status 0).
func (s *Server) Stop() error {
	if s.cmd == nil || s.cmd.Process == nil {
		return nil
	}
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return err
	}
	select {
	case err := <-s.done:
		s.cmd = nil
		return err
	case <-time.After(90 * time.Second):
		s.cmd.Process.Kill()
		<-s.done
		s.cmd = nil
		return errors.New("tally serve did not stop within 90 s of SIGTERM")
	}
}

// Kill sends SIGKILL and waits until the process is gone.
func (s *Server) Kill() error {
	if s.cmd == nil || s.cmd.Process == nil {
		return nil
	}
	if err := s.cmd.Process.Kill(); err != nil {
		return err
	}
	<-s.done
	s.cmd = nil
	return nil
}

// PID is the serving process's id.
func (s *Server) PID() int { return s.cmd.Process.Pid }

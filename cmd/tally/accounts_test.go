package main

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"

	"github.com/tally-analytics/tally/internal/testenv"
)

// A command that names a user by --owner says so when there is no such
// user, rather than pointing at an --email flag it does not have.
func TestUnknownOwnerNamesTheOwnerFlag(t *testing.T) {
	cfg := testenv.Config(t)
	for _, args := range [][]string{
		{"site", "create", "--owner", "nobody@example.com", "--domain", "example.com"},
		{"key", "create", "--owner", "nobody@example.com", "--name", "k"},
		{"key", "list", "--owner", "nobody@example.com"},
	} {
		cmd := exec.Command(tallyBin, args...)
		cmd.Env = environ(cfg)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() != 1 || !strings.Contains(stderr.String(), "no user with this email (--owner)") {
			t.Errorf("tally %s: %v, stderr %q; want exit 1 and (--owner)", strings.Join(args, " "), err, stderr.String())
		}
	}
}

package main

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"

	"github.com/spf13/cobra"

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

// A secret flag's "-" reads the secret from the first line of the standard
// input: a password piped in creates the user, and nothing piped in is no
// password.
func TestSecretFromStdin(t *testing.T) {
	cfg := testenv.Config(t)
	email := "stdin-" + strings.ToLower(t.Name()) + "@example.com"
	create := func(stdin string) (string, string, error) {
		cmd := exec.Command(tallyBin, "user", "create", "--email", email, "--password", "-", "--name", "In", "--json")
		cmd.Env = environ(cfg)
		cmd.Stdin = strings.NewReader(stdin)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		return stdout.String(), stderr.String(), err
	}
	if _, stderr, err := create(""); err == nil || !strings.Contains(stderr, "(--password)") {
		t.Errorf("nothing on standard input: %v, stderr %q; want a refused --password", err, stderr)
	}
	if stdout, stderr, err := create("correct horse battery\nnot this line\n"); err != nil || !strings.Contains(stdout, `"user_id"`) {
		t.Errorf("a password on standard input: %v, stdout %q, stderr %q; want the user created", err, stdout, stderr)
	}
}

func TestFromStdinReadsTheFirstLine(t *testing.T) {
	for _, c := range []struct{ flag, stdin, want string }{
		{"-", "whsec_abc\r\nmore\n", "whsec_abc"},
		{"-", "whsec_no_line_end", "whsec_no_line_end"},
		{"-", "", ""},
		{"whsec_given", "ignored\n", "whsec_given"},
	} {
		cmd := &cobra.Command{}
		cmd.SetIn(strings.NewReader(c.stdin))
		v := c.flag
		if err := fromStdin(cmd, &v); err != nil || v != c.want {
			t.Errorf("flag %q, stdin %q: %q, %v; want %q", c.flag, c.stdin, v, err, c.want)
		}
	}
}

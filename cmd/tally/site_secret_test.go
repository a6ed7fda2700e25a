package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/testenv"
)

// tally site secret sets several secrets with a repeated --secret (or one a
// line on standard input), replaces them unless --add, refuses a fourth
// naming --secret, and never prints a secret.
func TestSiteSecret(t *testing.T) {
	cfg := testenv.Config(t)
	ctx := context.Background()
	pg := sealingStore(t, cfg)
	runCLI(t, cfg, nil, "user", "create", "--email", "secrets@example.com", "--password", "password-1", "--name", "S", "--json")
	var site struct {
		SiteID string `json:"site_id"`
	}
	runCLI(t, cfg, &site, "site", "create", "--owner", "secrets@example.com", "--domain", "example.com", "--json")

	all := []string{"whsec_cli_live_0001", "whsec_cli_test_0002", "whsec_cli_roll_0003", "whsec_cli_more_0004"}
	secret := func(stdin string, args ...string) (held int, stdout, stderr string, err error) {
		t.Helper()
		cmd := exec.Command(tallyBin, append([]string{"site", "secret", "--site", site.SiteID, "--provider", "provider_a", "--json"}, args...)...)
		// the key the test opens the secrets with: a process without one makes
		// up its own, which no other process can open
		cmd.Env = append(environ(cfg), "TALLY_SECRETS_KEY="+cfg.SecretsKey)
		cmd.Stdin = strings.NewReader(stdin)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err = cmd.Run()
		var res struct{ Secrets int }
		if err == nil {
			if jerr := json.Unmarshal(out.Bytes(), &res); jerr != nil {
				t.Fatalf("output %q: %v", out.String(), jerr)
			}
		}
		for _, s := range all {
			if strings.Contains(out.String()+errOut.String(), s) {
				t.Errorf("tally site secret %s printed a secret", strings.Join(args, " "))
			}
		}
		return res.Secrets, out.String(), errOut.String(), err
	}
	held := func() []string {
		t.Helper()
		got, err := pg.ProviderSecrets(ctx, model.SiteID(site.SiteID), model.ProviderA)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	if n, _, stderr, err := secret("", "--secret", all[0], "--secret", all[1]); err != nil || n != 2 {
		t.Fatalf("two --secret: %d, %v, %s", n, err, stderr)
	}
	if n, _, stderr, err := secret(all[2]+"\n", "--secret", "-", "--add"); err != nil || n != 3 {
		t.Fatalf("--add from standard input: %d, %v, %s", n, err, stderr)
	}
	if got := held(); !slices.Equal(got, all[:3]) {
		t.Errorf("after adding: %q", got)
	}
	if _, _, stderr, err := secret("", "--secret", all[3], "--add"); err == nil || !strings.Contains(stderr, "(--secret)") {
		t.Errorf("a fourth added: %v, stderr %q; want refused naming --secret", err, stderr)
	}
	if _, _, stderr, err := secret(strings.Join(all, "\n"), "--secret", "-"); err == nil || !strings.Contains(stderr, "at most 3") {
		t.Errorf("four lines on standard input: %v, stderr %q; want refused", err, stderr)
	}
	if got := held(); !slices.Equal(got, all[:3]) {
		t.Errorf("after refused changes: %q", got)
	}
	if n, _, stderr, err := secret("", "--secret", all[3]); err != nil || n != 1 {
		t.Fatalf("replacing: %d, %v, %s", n, err, stderr)
	}
	if got := held(); !slices.Equal(got, all[3:]) {
		t.Errorf("after replacing: %q", got)
	}
}

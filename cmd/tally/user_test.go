package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/config"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/pgstore"
	"github.com/tally-analytics/tally/internal/testenv"
	"github.com/tally-analytics/tally/internal/twofactor"
)

// tally user 2fa-disable turns a user's 2FA off, asking nothing else, and
// says what it did; a user without it is left alone, an unknown email named.
func TestUser2FADisable(t *testing.T) {
	cfg := testenv.Config(t)
	ctx := context.Background()
	pg := sealingStore(t, cfg)
	passwords := auth.NewPasswords(1)
	hash, err := passwords.Hash(ctx, "a password of hers")
	if err != nil {
		t.Fatal(err)
	}
	u, err := pg.CreateUser(ctx, model.User{Email: "lost-phone@example.com", Name: "Lost", PasswordHash: hash, Plan: model.PlanFree})
	if err != nil {
		t.Fatal(err)
	}
	tf := twofactor.NewService(pg, passwords, time.Now)
	setup, err := tf.Begin(ctx, u.ID, "a password of hers")
	if err != nil {
		t.Fatal(err)
	}
	code, err := twofactor.Code(setup.Secret, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tf.Confirm(ctx, u.ID, code); err != nil {
		t.Fatal(err)
	}

	run := func(args ...string) (string, string, error) {
		cmd := exec.Command(tallyBin, append([]string{"user", "2fa-disable"}, args...)...)
		cmd.Env = environ(cfg)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		return stdout.String(), stderr.String(), err
	}
	stdout, stderr, err := run("--email", "LOST-PHONE@example.com")
	if err != nil || !strings.Contains(stdout, "turned off two-factor authentication of user "+string(u.ID)) {
		t.Fatalf("2fa-disable: %v, stdout %q, stderr %q", err, stdout, stderr)
	}
	if on, err := tf.Required(ctx, u.ID); err != nil || on {
		t.Fatalf("after 2fa-disable, 2FA on = %v (%v)", on, err)
	}
	stdout, _, err = run("--email", "lost-phone@example.com", "--json")
	var res struct {
		UserID     string `json:"user_id"`
		WasEnabled bool   `json:"was_enabled"`
	}
	if err != nil || json.Unmarshal([]byte(stdout), &res) != nil || res.UserID != string(u.ID) || res.WasEnabled {
		t.Fatalf("2fa-disable again: %v, %q; want the user, was_enabled false", err, stdout)
	}
	if _, stderr, err = run("--email", "nobody@example.com"); err == nil || !strings.Contains(stderr, "no user with this email (--email)") {
		t.Fatalf("an unknown email: %v, stderr %q", err, stderr)
	}
	if out, err := exec.Command(tallyBin, "user", "2fa-disable", "--help").CombinedOutput(); err != nil ||
		!strings.Contains(string(out), "Turn off a user's two-factor authentication") {
		t.Fatalf("--help: %v, %s", err, out)
	}
}

// sealingStore opens the test's Postgres with the secrets key of cfg, the
// key the CLI's processes are given, so that each opens what the other
// sealed; it is closed with the test.
func sealingStore(t *testing.T, cfg *config.Config) *pgstore.Store {
	t.Helper()
	box, err := cfg.SecretBox()
	if err != nil {
		t.Fatal(err)
	}
	pg, err := pgstore.Open(context.Background(), cfg.PostgresURL, pgstore.WithSecrets(box))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pg.Close)
	return pg
}

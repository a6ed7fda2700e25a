package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/config"
	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/pgstore"
	"github.com/tally-analytics/tally/internal/ratelimit"
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
	tf := twofactor.NewService(pg, auth.NewPasswordCheck(passwords, nil, ratelimit.Bound{}, time.Now, slog.New(slog.DiscardHandler)), time.Now)
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

// staticRevocations is a revocation version that never moves: each test
// checks credentials with a new authenticator, which caches nothing yet.
type staticRevocations struct{}

func (staticRevocations) Version(context.Context) (int64, error) { return 0, nil }
func (staticRevocations) Bump(context.Context) error             { return nil }

// tally user set-password reads the new password from standard input
// (never a flag), sets it under the rule of every password, and ends the
// user's dashboard sessions and login tokens; their API key goes on.
func TestUserSetPassword(t *testing.T) {
	cfg := testenv.Config(t)
	ctx := context.Background()
	pg := sealingStore(t, cfg)
	hasher := auth.NewPasswords(1)
	hash, err := hasher.Hash(ctx, "the password she forgot")
	if err != nil {
		t.Fatal(err)
	}
	u, err := pg.CreateUser(ctx, model.User{Email: "forgot@example.com", Name: "Forgot", PasswordHash: hash, Plan: model.PlanFree})
	if err != nil {
		t.Fatal(err)
	}
	session := auth.HashKey("a session of hers")
	if err := pg.CreateDashboardSession(ctx, session, model.DashboardSession{UserID: u.ID, CSRFToken: "c",
		ExpiresAt: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	tokens := auth.NewTokens("test-secret-test-secret-test-secret", time.Now)
	token, _, err := tokens.Issue(u.ID, u.TokenGeneration)
	if err != nil {
		t.Fatal(err)
	}
	secret, prefix, keyHash := auth.NewKeySecret(auth.EnvTest)
	if _, err := pg.CreateKey(ctx, model.APIKey{ID: "key_setpassword01", UserID: u.ID, Name: "k", Prefix: prefix,
		Environment: auth.EnvTest, Scopes: model.AllScopes}, keyHash); err != nil {
		t.Fatal(err)
	}
	authenticate := func(credential string) error {
		_, err := auth.NewService(pg, staticRevocations{}, tokens, nil, auth.EnvTest, time.Now, slog.New(slog.DiscardHandler)).
			Authenticate(ctx, credential)
		return err
	}
	if err := authenticate(token); err != nil {
		t.Fatal(err)
	}

	run := func(stdin string, args ...string) (string, string, error) {
		cmd := exec.Command(tallyBin, append([]string{"user", "set-password"}, args...)...)
		cmd.Env = environ(cfg)
		cmd.Stdin = strings.NewReader(stdin)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		return stdout.String(), stderr.String(), err
	}
	passwordIs := func(pw string) bool {
		t.Helper()
		got, err := pg.UserByID(ctx, u.ID)
		if err != nil {
			t.Fatal(err)
		}
		ok, err := hasher.Check(ctx, pw, got.PasswordHash)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if _, stderr, err := run("short\n", "--email", "forgot@example.com"); err == nil ||
		!strings.Contains(stderr, "the new password: a password must be 8 to 256 characters") {
		t.Errorf("a short password: %v, stderr %q; want the rule's refusal", err, stderr)
	}
	if _, stderr, err := run("a new password of hers\n", "--email", "nobody@example.com"); err == nil ||
		!strings.Contains(stderr, "no user with this email (--email)") {
		t.Errorf("an unknown email: %v, stderr %q", err, stderr)
	}
	if _, stderr, err := run("", "--email", "forgot@example.com", "--password", "a new password of hers"); err == nil ||
		!strings.Contains(stderr, "unknown flag: --password") {
		t.Errorf("a password as a flag: %v, stderr %q; want no such flag", err, stderr)
	}
	if !passwordIs("the password she forgot") {
		t.Fatal("a refused command changed the password")
	}

	stdout, stderr, err := run("a new password of hers\nnot this line\n", "--email", "FORGOT@example.com")
	if err != nil || !strings.Contains(stdout, "set the password of user "+string(u.ID)) {
		t.Fatalf("set-password: %v, stdout %q, stderr %q", err, stdout, stderr)
	}
	if !passwordIs("a new password of hers") || passwordIs("the password she forgot") {
		t.Error("the password is not the one given")
	}
	if _, err := pg.DashboardSession(ctx, session, time.Now()); !errors.Is(err, errs.ErrNotFound) {
		t.Errorf("her dashboard session after set-password: %v, want ended", err)
	}
	if err := authenticate(token); !errs.Is(err, errs.Unauthenticated) {
		t.Errorf("her login token after set-password: %v, want refused", err)
	}
	if err := authenticate(secret); err != nil {
		t.Errorf("her API key after set-password: %v, want it working", err)
	}
	stdout, _, err = run("yet another password\n", "--email", "forgot@example.com", "--json")
	var res struct {
		UserID string `json:"user_id"`
	}
	if err != nil || json.Unmarshal([]byte(stdout), &res) != nil || res.UserID != string(u.ID) {
		t.Errorf("set-password --json: %v, %q", err, stdout)
	}
	if out, err := exec.Command(tallyBin, "user", "set-password", "--help").CombinedOutput(); err != nil ||
		!strings.Contains(string(out), "never a flag") || !strings.Contains(string(out), "API keys keep working") {
		t.Errorf("--help: %v, %s", err, out)
	}
}

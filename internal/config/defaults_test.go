package config

import (
	"os"
	"strings"
	"testing"
)

// A server that was not told its environment is a production one: without
// a JWT secret or a key to seal webhook secrets with it refuses to start,
// and it takes only live keys, redirects to HTTPS and marks cookies Secure.
// A development server without them uses ones of its own process: no fixed
// secret exists to forge tokens or open stored secrets with. The Dockerfile
// says production.
func TestSafeDefaults(t *testing.T) {
	t.Setenv("TALLY_ENV", "")
	os.Unsetenv("TALLY_ENV")
	t.Setenv("TALLY_JWT_SECRET", "")
	t.Setenv("TALLY_SECRETS_KEY", "")
	_, _, err := Load()
	if err == nil || !strings.Contains(err.Error(), "TALLY_JWT_SECRET is required") || !strings.Contains(err.Error(), "TALLY_SECRETS_KEY is required") {
		t.Errorf("no TALLY_ENV and no secrets: %v, want a refusal to start naming both", err)
	}
	t.Setenv("TALLY_SECRETS_KEY", "too-short")
	t.Setenv("TALLY_JWT_SECRET", strings.Repeat("s", 32))
	if _, _, err := Load(); err == nil || !strings.Contains(err.Error(), "TALLY_SECRETS_KEY") {
		t.Errorf("a key that is not 32 bytes: %v, want a refusal", err)
	}
	t.Setenv("TALLY_SECRETS_KEY", "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=")
	cfg, _, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.Production() || cfg.KeyEnvironment() != "live" || !cfg.ForceHTTPS() {
		t.Errorf("no TALLY_ENV: env %q, keys %q, HTTPS redirect %t; want production, live, true", cfg.Env,
			cfg.KeyEnvironment(), cfg.ForceHTTPS())
	}

	t.Setenv("TALLY_ENV", EnvDevelopment)
	t.Setenv("TALLY_JWT_SECRET", "")
	t.Setenv("TALLY_SECRETS_KEY", "")
	a, warnings, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	if a.SecretsKey == "" || a.SecretsKey == b.SecretsKey || len(warnings) < 2 {
		t.Errorf("development without a secrets key: the same in two processes: %t, warnings %v", a.SecretsKey == b.SecretsKey, warnings)
	}
	if len(a.JWTSecret) < 32 || a.JWTSecret == b.JWTSecret || len(warnings) == 0 {
		t.Errorf("development without a secret: %d-character secret, the same in two processes: %t, warnings %v; "+
			"want one of 32 or more per process, and a warning", len(a.JWTSecret), a.JWTSecret == b.JWTSecret, warnings)
	}

	dockerfile, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(dockerfile), "TALLY_ENV=production") {
		t.Error("the Dockerfile does not set TALLY_ENV=production")
	}
}

// The rates URL is https, or http to this machine only.
func TestRatesURL(t *testing.T) {
	t.Setenv("TALLY_ENV", EnvTest)
	for url, ok := range map[string]bool{
		"https://www.ecb.europa.eu/stats/eurofxref/eurofxref-hist.zip": true,
		"http://127.0.0.1:8000/eurofxref.csv":                          true,
		"http://localhost/eurofxref.csv":                               true,
		"http://[::1]:9/x.csv":                                         true,
		"http://www.ecb.europa.eu/stats/eurofxref/eurofxref.csv":       false,
		"file:///etc/passwd":                                           false,
		"gopher://127.0.0.1/x":                                         false,
		"http://169.254.169.254/latest/meta-data/":                     false,
	} {
		t.Setenv("TALLY_ECB_RATES_URL", url)
		if _, _, err := Load(); (err == nil) != ok {
			t.Errorf("TALLY_ECB_RATES_URL=%s: %v, want accepted %t", url, err, ok)
		}
	}
}

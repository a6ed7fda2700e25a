package config

import (
	"strings"
	"testing"
)

// A value tally cannot use is refused at start, naming its variable, never
// replaced by the default behind the operator's back.
func TestRefusedValues(t *testing.T) {
	t.Setenv("TALLY_ENV", EnvTest)
	for _, c := range []struct{ name, value string }{
		{"TALLY_LOG_LEVEL", "verbose"},
		{"TALLY_LOG_LEVEL", "trace"},
		{"TALLY_LOG_FORMAT", "xml"},
		{"TALLY_LOG_FORMAT", "logfmt"},
		{"TALLY_UA_CACHE_SIZE", "0"},
		{"TALLY_UA_CACHE_SIZE", "-1"},
		{"TALLY_CLICKHOUSE_ADDR", "clickhouse"},
		{"TALLY_CLICKHOUSE_ADDR", "ch1:9000,ch2"},
		{"TALLY_CLICKHOUSE_ADDR", ","},
		{"TALLY_CLICKHOUSE_ADDR", "ch1:nine"},
	} {
		t.Run(c.name+"="+c.value, func(t *testing.T) {
			t.Setenv(c.name, c.value)
			if _, _, err := Load(); err == nil || !strings.Contains(err.Error(), c.name) {
				t.Errorf("%s=%s: %v, want a refusal naming %s", c.name, c.value, err, c.name)
			}
		})
	}
	for _, c := range []struct{ name, value string }{
		{"TALLY_LOG_LEVEL", "debug"},
		{"TALLY_LOG_LEVEL", "WARN"},
		{"TALLY_LOG_LEVEL", "error"},
		{"TALLY_LOG_FORMAT", "json"},
		{"TALLY_LOG_FORMAT", "text"},
		{"TALLY_CLICKHOUSE_ADDR", "clickhouse:9000"},
		{"TALLY_CLICKHOUSE_ADDR", "ch1:9000, ch2:9000,"},
		{"TALLY_CLICKHOUSE_ADDR", "[::1]:9000"},
	} {
		t.Run(c.name+"="+c.value, func(t *testing.T) {
			t.Setenv(c.name, c.value)
			if _, _, err := Load(); err != nil {
				t.Errorf("%s=%s: %v, want accepted", c.name, c.value, err)
			}
		})
	}
}

// The configuration prints every variable with its secrets hidden, a
// development server's made-up secrets key included.
func TestStringRedacts(t *testing.T) {
	t.Setenv("TALLY_ENV", EnvDevelopment)
	t.Setenv("TALLY_SECRETS_KEY", "")
	t.Setenv("TALLY_JWT_SECRET", "jwt-secret-jwt-secret-jwt-secret-jwt")
	t.Setenv("TALLY_POSTGRES_URL", "postgres://tally:pg-password@db:5432/tally")
	t.Setenv("TALLY_REDIS_URL", "redis://:redis-password@redis:6379/0")
	t.Setenv("TALLY_CLICKHOUSE_PASSWORD", "ch-password")
	cfg, _, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	var out string
	func() {
		defer func() {
			if r := recover(); r != nil {
				t.Fatalf("String panicked: %v", r)
			}
		}()
		out = cfg.String()
	}()
	for _, secret := range []string{"pg-password", "redis-password", "ch-password", "jwt-secret", cfg.SecretsKey} {
		if strings.Contains(out, secret) {
			t.Errorf("String shows %q:\n%s", secret, out)
		}
	}
	for _, line := range []string{"TALLY_ENV=development\n", "TALLY_CLICKHOUSE_PASSWORD=[redacted]\n", "TALLY_SECRETS_KEY=[redacted]\n"} {
		if !strings.Contains(out, line) {
			t.Errorf("String has no line %q:\n%s", line, out)
		}
	}
	if strings.Contains(out, "\n=") || strings.HasPrefix(out, "=") {
		t.Errorf("String prints a setting without a variable:\n%s", out)
	}
}

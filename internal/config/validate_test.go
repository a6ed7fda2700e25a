package config

import (
	"slices"
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
	t.Setenv("TALLY_SMTP_URL", "smtp://reports:smtp-password@mail.example.com:587")
	t.Setenv("TALLY_MAIL_FROM", "tally <reports@example.com>")
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
	for _, secret := range []string{"pg-password", "redis-password", "ch-password", "jwt-secret", "smtp-password", cfg.SecretsKey} {
		if strings.Contains(out, secret) {
			t.Errorf("String shows %q:\n%s", secret, out)
		}
	}
	for _, line := range []string{"TALLY_ENV=development\n", "TALLY_CLICKHOUSE_PASSWORD=[redacted]\n", "TALLY_SECRETS_KEY=[redacted]\n",
		"TALLY_SMTP_URL=smtp://reports:xxxxx@mail.example.com:587\n"} {
		if !strings.Contains(out, line) {
			t.Errorf("String has no line %q:\n%s", line, out)
		}
	}
	if strings.Contains(out, "\n=") || strings.HasPrefix(out, "=") {
		t.Errorf("String prints a setting without a variable:\n%s", out)
	}
}

// The email reports' settings: a URL tally cannot use, or one without a
// From address, is refused naming its variable and never quoting the URL.
func TestMailSettings(t *testing.T) {
	t.Setenv("TALLY_ENV", EnvTest)
	for _, c := range []struct{ url, from, name string }{
		{"mail.example.com:587", "reports@example.com", "TALLY_SMTP_URL"},
		{"https://u:smtp-password-9@mail.example.com", "reports@example.com", "TALLY_SMTP_URL"},
		{"smtp://u:smtp-password-9@mail.example.com:nine", "reports@example.com", "TALLY_SMTP_URL"},
		{"smtp://:smtp-password-9@mail.example.com", "reports@example.com", "TALLY_SMTP_URL"},
		{"smtp://u:smtp-password-9@mail.example.com", "", "TALLY_MAIL_FROM"},
		{"smtp://u:smtp-password-9@mail.example.com", "not an address", "TALLY_MAIL_FROM"},
	} {
		t.Run(c.url+" "+c.from, func(t *testing.T) {
			t.Setenv("TALLY_SMTP_URL", c.url)
			t.Setenv("TALLY_MAIL_FROM", c.from)
			_, _, err := Load()
			if err == nil || !strings.Contains(err.Error(), c.name) {
				t.Fatalf("%v, want a refusal naming %s", err, c.name)
			}
			if strings.Contains(err.Error(), "smtp-password-9") {
				t.Errorf("the refusal shows the password: %v", err)
			}
		})
	}
	for _, c := range []struct{ url, from string }{
		{"", ""},
		{"smtp://u:smtp-password-9@mail.example.com", "reports@example.com"},
		{"smtps://mail.example.com:465", "tally <reports@example.com>"},
	} {
		t.Setenv("TALLY_SMTP_URL", c.url)
		t.Setenv("TALLY_MAIL_FROM", c.from)
		cfg, _, err := Load()
		if err != nil {
			t.Errorf("%s %s: %v, want accepted", c.url, c.from, err)
			continue
		}
		if _, from, ok := cfg.Mail(); ok != (c.url != "") || (ok && from != "reports@example.com") {
			t.Errorf("%s %s: Mail() = %q, %v", c.url, c.from, from, ok)
		}
	}
	// reports without a public URL have no unsubscribe link: a warning
	const noLinks = "TALLY_SMTP_URL is set but TALLY_PUBLIC_URL is not: the email reports and traffic spike notifications carry no links, no unsubscribe link among them"
	t.Setenv("TALLY_SMTP_URL", "smtp://u:smtp-password-9@mail.example.com")
	t.Setenv("TALLY_MAIL_FROM", "reports@example.com")
	for public, want := range map[string]bool{"": true, "https://analytics.example.com": false} {
		t.Setenv("TALLY_PUBLIC_URL", public)
		_, warnings, err := Load()
		if err != nil || slices.ContainsFunc(warnings, func(w string) bool { return strings.HasPrefix(w, noLinks) }) != want {
			t.Errorf("TALLY_PUBLIC_URL=%q: %v, warnings %q; want the no-links warning: %v", public, err, warnings, want)
		}
	}
}

// The ClickHouse database is named in statements unquoted, so a name
// ClickHouse would not take unquoted is refused at start, before any
// store is opened, and the message says what a name may hold.
func TestClickHouseDatabaseName(t *testing.T) {
	t.Setenv("TALLY_ENV", EnvTest)
	for _, name := range []string{"tally-test", "1tally", "tally.events", "tally;DROP", "tälly", "tally db", "`tally`",
		strings.Repeat("a", 64)} {
		t.Run("refused "+name, func(t *testing.T) {
			t.Setenv("TALLY_CLICKHOUSE_DATABASE", name)
			_, _, err := Load()
			if err == nil || !strings.Contains(err.Error(), "TALLY_CLICKHOUSE_DATABASE must be a ClickHouse identifier (letters, digits, _") {
				t.Errorf("TALLY_CLICKHOUSE_DATABASE=%s: %v, want a refusal saying what a name may hold", name, err)
			}
		})
	}
	for _, name := range []string{"tally", "tally_test_2", "_scratch", "T", strings.Repeat("a", 63)} {
		t.Run("accepted "+name, func(t *testing.T) {
			t.Setenv("TALLY_CLICKHOUSE_DATABASE", name)
			cfg, _, err := Load()
			if err != nil {
				t.Fatalf("TALLY_CLICKHOUSE_DATABASE=%s: %v, want accepted", name, err)
			}
			if cfg.ClickHouseDatabase != name {
				t.Errorf("ClickHouseDatabase = %q, want %q", cfg.ClickHouseDatabase, name)
			}
		})
	}
}

// A mail server without the server's public address sends no reset links
// (they would be of no address, or of the one a request claims): the
// server starts, and says so.
func TestMailWithoutPublicURLWarns(t *testing.T) {
	t.Setenv("TALLY_ENV", EnvTest)
	t.Setenv("TALLY_SMTP_URL", "smtp://u:smtp-password-9@mail.example.com")
	t.Setenv("TALLY_MAIL_FROM", "reports@example.com")
	for _, c := range []struct {
		publicURL string
		warned    bool
	}{{"", true}, {"https://analytics.example.com", false}} {
		t.Setenv("TALLY_PUBLIC_URL", c.publicURL)
		_, warnings, err := Load()
		if err != nil {
			t.Fatal(err)
		}
		warned := false
		for _, w := range warnings {
			warned = warned || strings.Contains(w, "no password-reset links are sent")
		}
		if warned != c.warned {
			t.Errorf("TALLY_PUBLIC_URL %q: warned %v, want %v (%q)", c.publicURL, warned, c.warned, warnings)
		}
	}
}

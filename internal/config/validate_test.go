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
	} {
		t.Run(c.name+"="+c.value, func(t *testing.T) {
			t.Setenv(c.name, c.value)
			if _, _, err := Load(); err != nil {
				t.Errorf("%s=%s: %v, want accepted", c.name, c.value, err)
			}
		})
	}
}

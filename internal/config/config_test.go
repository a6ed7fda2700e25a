package config

import (
	"os"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// The stop budget: requests in flight get a third of it up to 5 s, an
// insert under way a third up to 10 s, the drain the rest.
func TestStopBudget(t *testing.T) {
	for _, c := range []struct{ total, grace, insert, drain time.Duration }{
		{3 * time.Second, time.Second, time.Second, time.Second},
		{12 * time.Second, 4 * time.Second, 4 * time.Second, 4 * time.Second},
		{30 * time.Second, 5 * time.Second, 10 * time.Second, 15 * time.Second},
		{2 * time.Minute, 5 * time.Second, 10 * time.Second, 105 * time.Second},
	} {
		cfg := Config{ShutdownTimeout: c.total}
		if g, i, d := cfg.HTTPStopGrace(), cfg.InsertTimeout(), cfg.DrainTimeout(); g != c.grace || i != c.insert || d != c.drain {
			t.Errorf("%v: grace %v, insert %v, drain %v; want %v, %v, %v", c.total, g, i, d, c.grace, c.insert, c.drain)
		}
	}
}

// docker compose kills the container when its stop_grace_period ends: it
// must leave tally its whole stop budget (TALLY_SHUTDOWN_TIMEOUT), with room.
func TestComposeGracePeriodCoversTheStop(t *testing.T) {
	data, err := os.ReadFile("../../docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	var compose struct {
		Services map[string]struct {
			StopGracePeriod string         `yaml:"stop_grace_period"`
			Environment     map[string]any `yaml:"environment"`
		} `yaml:"services"`
	}
	if err := yaml.Unmarshal(data, &compose); err != nil {
		t.Fatal(err)
	}
	svc, ok := compose.Services["tally"]
	if !ok {
		t.Fatal("docker-compose.yml has no tally service")
	}
	grace, err := time.ParseDuration(svc.StopGracePeriod)
	if err != nil {
		t.Fatalf("stop_grace_period %q: %v (docker compose's default, 10s, is too short)", svc.StopGracePeriod, err)
	}
	stop := 30 * time.Second // the default of TALLY_SHUTDOWN_TIMEOUT
	if v, ok := svc.Environment["TALLY_SHUTDOWN_TIMEOUT"].(string); ok {
		if stop, err = time.ParseDuration(v); err != nil {
			t.Fatal(err)
		}
	}
	if grace < stop+10*time.Second {
		t.Errorf("stop_grace_period %v leaves TALLY_SHUTDOWN_TIMEOUT %v less than 10s of room", grace, stop)
	}
}

// ClickHouse on this host: every node's host is loopback (and then its
// traffic goes uncompressed).
func TestClickHouseOnThisHost(t *testing.T) {
	cases := map[string]bool{
		"127.0.0.1:19000":                    true,
		"localhost:9000":                     true,
		"[::1]:9000, 127.0.0.2:9000":         true,
		"127.0.0.1:19101,127.0.0.1:19102":    true,
		"clickhouse:9000":                    false,
		"10.0.0.5:9000":                      false,
		"127.0.0.1:19000, ch2.internal:9000": false,
		"ch1.example.com:9440":               false,
	}
	for addr, want := range cases {
		c := &Config{ClickHouseAddr: addr}
		if got := c.ClickHouseOnThisHost(); got != want {
			t.Errorf("ClickHouseOnThisHost(%q) = %v, want %v", addr, got, want)
		}
	}
}

// Package testenv gives integration tests their own databases on the real
// ClickHouse, Postgres and Redis that `go tool task test` starts: a fresh
// Postgres database and ClickHouse database per test (migrated), and a Redis
// key prefix per test. Without the servers a test is skipped, except under
// CI=true where a missing service fails the test.
package testenv

import (
	"context"
	"io"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/chstore"
	"github.com/tally-analytics/tally/internal/config"
	"github.com/tally-analytics/tally/internal/pgstore"
)

// Lookup returns an environment variable the tests need, skipping the test
// (failing it under CI=true) when it is not set.
func Lookup(t testing.TB, name string) string {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not set: run the tests with `go tool task test`, which starts the services", name)
		}
		t.Skipf("%s is not set; run `go tool task test` for integration tests", name)
	}
	return v
}

func dbName() string { return "t_" + auth.RandomString(12, "abcdefghijklmnopqrstuvwxyz0123456789") }

func ctx(t testing.TB) context.Context {
	c, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return c
}

// Postgres creates and migrates a database of its own for the test and
// returns its URL; the database is dropped when the test ends.
func Postgres(t testing.TB) string {
	t.Helper()
	admin := Lookup(t, "TALLY_TEST_POSTGRES_ADMIN_URL")
	name := dbName()
	c := ctx(t)
	if err := pgstore.CreateDatabase(c, admin, name); err != nil {
		t.Fatalf("postgres: %v", err)
	}
	t.Cleanup(func() {
		if err := pgstore.DropDatabase(context.Background(), admin, name); err != nil {
			t.Logf("postgres cleanup: %v", err)
		}
	})
	u, err := url.Parse(admin)
	if err != nil {
		t.Fatalf("TALLY_TEST_POSTGRES_ADMIN_URL: %v", err)
	}
	u.Path = "/" + name
	store, err := pgstore.Open(c, u.String())
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if _, err := store.Migrate(c); err != nil {
		t.Fatal(err)
	}
	return u.String()
}

// ClickHouseOptions are the connection options of the test ClickHouse
// server, for database db.
func ClickHouseOptions(t testing.TB, db string) chstore.Options {
	return chstore.Options{Addr: Lookup(t, "TALLY_CLICKHOUSE_ADDR"), Database: db, User: "default", Timeout: 30 * time.Second,
		Cluster: os.Getenv("TALLY_CLICKHOUSE_CLUSTER")}
}

// ClickHouse creates and migrates a database of its own for the test and
// returns an open store on it; the database is dropped when the test ends.
func ClickHouse(t testing.TB) (*chstore.Store, chstore.Options) {
	t.Helper()
	opts := ClickHouseOptions(t, dbName())
	c := ctx(t)
	store, err := chstore.Open(c, opts)
	if err != nil {
		t.Fatalf("clickhouse: %v", err)
	}
	t.Cleanup(func() {
		store.Close()
		if err := chstore.DropDatabase(context.Background(), opts, opts.Database); err != nil {
			t.Logf("clickhouse cleanup: %v", err)
		}
	})
	if _, err := store.Migrate(c); err != nil {
		t.Fatal(err)
	}
	return store, opts
}

// Redis returns a client on the test Redis database and a key prefix of the
// test's own; the test's keys are deleted when it ends.
func Redis(t testing.TB) (*redis.Client, string) {
	t.Helper()
	opts, err := redis.ParseURL(Lookup(t, "TALLY_REDIS_URL"))
	if err != nil {
		t.Fatalf("TALLY_REDIS_URL: %v", err)
	}
	rdb := redis.NewClient(opts)
	if err := rdb.Ping(ctx(t)).Err(); err != nil {
		t.Fatalf("redis: %v", err)
	}
	prefix := dbName() + ":"
	t.Cleanup(func() {
		c := context.Background()
		iter := rdb.Scan(c, 0, prefix+"*", 1000).Iterator()
		for iter.Next(c) {
			rdb.Del(c, iter.Val())
		}
		rdb.Close()
	})
	return rdb, prefix
}

// Config is a complete server configuration on fresh per-test databases and
// a per-test WAL directory.
func Config(t testing.TB) *config.Config {
	t.Helper()
	pgURL := Postgres(t)
	_, ch := ClickHouse(t)
	_, prefix := Redis(t)
	t.Setenv("TALLY_ENV", config.EnvTest)
	cfg, _, err := config.Load()
	if err != nil {
		t.Fatal(err)
	}
	cfg.PostgresURL = pgURL
	cfg.ClickHouseAddr, cfg.ClickHouseDatabase, cfg.ClickHouseCluster = ch.Addr, ch.Database, ch.Cluster
	cfg.RedisURL = Lookup(t, "TALLY_REDIS_URL")
	cfg.RedisPrefix = prefix
	cfg.WALDir = t.TempDir()
	cfg.FlushInterval = 100 * time.Millisecond
	cfg.GeoIPPath = ""
	return cfg
}

// Logger writes to the test log when -v is given, and at debug level to a
// file in TALLY_TEST_LOG_DIR when it is set: the log of a whole test run,
// which a last test scans for secrets and addresses.
func Logger(t testing.TB) *slog.Logger {
	var writers []io.Writer
	if testing.Verbose() {
		writers = append(writers, testWriter{t})
	}
	if f := runLog(); f != nil {
		writers = append(writers, f)
	}
	return slog.New(slog.NewTextHandler(io.MultiWriter(writers...), &slog.HandlerOptions{Level: slog.LevelDebug}))
}

var (
	runLogOnce sync.Once
	runLogFile *lockedWriter
)

type lockedWriter struct {
	mu sync.Mutex
	f  *os.File
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.f.Write(p)
}

// runLog is this test process's file in TALLY_TEST_LOG_DIR, or nil.
func runLog() io.Writer {
	runLogOnce.Do(func() {
		dir := os.Getenv("TALLY_TEST_LOG_DIR")
		if dir == "" {
			return
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return
		}
		f, err := os.CreateTemp(dir, "run-*.log")
		if err != nil {
			return
		}
		runLogFile = &lockedWriter{f: f}
	})
	if runLogFile == nil {
		return nil
	}
	return runLogFile
}

// RunLog is where a test should copy the output of processes it starts, so
// that the run's log holds it too; nil when there is no run log.
func RunLog() io.Writer { return runLog() }

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

package testenv

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/tally-analytics/tally/internal/chstore"
)

// ClickHouseServer is a private clickhouse-server process for tests that
// stop and start ClickHouse, which the shared test server cannot do.
type ClickHouseServer struct {
	t    testing.TB
	bin  string
	dir  string
	Addr string
	cmd  *exec.Cmd
	done chan struct{}
}

const chConfig = `<?xml version="1.0"?>
<yandex>
    <logger><level>warning</level><log>%[1]s/log/clickhouse.log</log><errorlog>%[1]s/log/clickhouse.err.log</errorlog><size>10M</size><count>1</count></logger>
    <tcp_port>%[2]d</tcp_port>
    <listen_host>127.0.0.1</listen_host>
    <max_connections>256</max_connections>
    <keep_alive_timeout>3</keep_alive_timeout>
    <max_concurrent_queries>50</max_concurrent_queries>
    <uncompressed_cache_size>67108864</uncompressed_cache_size>
    <mark_cache_size>67108864</mark_cache_size>
    <path>%[1]s/data/</path>
    <tmp_path>%[1]s/tmp/</tmp_path>
    <user_files_path>%[1]s/data/user_files/</user_files_path>
    <users_config>users.xml</users_config>
    <default_profile>default</default_profile>
    <default_database>default</default_database>
    <timezone>UTC</timezone>
    <mlock_executable>false</mlock_executable>
</yandex>
`

const chUsers = `<?xml version="1.0"?>
<yandex>
    <profiles><default><max_memory_usage>1000000000</max_memory_usage></default></profiles>
    <users><default><password></password><networks><ip>127.0.0.1</ip><ip>::1</ip></networks><profile>default</profile><quota>default</quota></default></users>
    <quotas><default><interval><duration>3600</duration><queries>0</queries><errors>0</errors><result_rows>0</result_rows><read_rows>0</read_rows><execution_time>0</execution_time></interval></default></quotas>
</yandex>
`

// StartClickHouse starts a clickhouse-server of the test's own on a free
// port, with its data in a temporary directory, and stops it when the test ends.
func StartClickHouse(t testing.TB) *ClickHouseServer {
	t.Helper()
	bin, err := exec.LookPath("clickhouse-server")
	if err != nil {
		bin = "/usr/sbin/clickhouse-server"
		if _, statErr := os.Stat(bin); statErr != nil {
			if os.Getenv("CI") == "true" {
				t.Fatal("clickhouse-server is not installed; run the tests with `go tool task test`")
			}
			t.Skip("clickhouse-server is not installed")
		}
	}
	dir := t.TempDir()
	for _, d := range []string{"data", "tmp", "log"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	port := FreePort(t)
	if err := os.WriteFile(filepath.Join(dir, "config.xml"), fmt.Appendf(nil, chConfig, dir, port), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "users.xml"), []byte(chUsers), 0o644); err != nil {
		t.Fatal(err)
	}
	s := &ClickHouseServer{t: t, bin: bin, dir: dir, Addr: fmt.Sprintf("127.0.0.1:%d", port)}
	s.Start()
	t.Cleanup(s.Stop)
	return s
}

// Start starts the server (again) on the same port and data, and waits until it answers.
func (s *ClickHouseServer) Start() {
	s.t.Helper()
	cmd := exec.Command(s.bin, "--config-file="+filepath.Join(s.dir, "config.xml"))
	cmd.Dir = s.dir
	log, err := os.OpenFile(filepath.Join(s.dir, "log", "stdout.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		s.t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		s.t.Fatalf("start clickhouse-server: %v", err)
	}
	s.cmd, s.done = cmd, make(chan struct{})
	go func() { cmd.Wait(); log.Close(); close(s.done) }()
	deadline := time.Now().Add(60 * time.Second)
	for {
		st, err := chstore.Open(context.Background(), chstore.Options{Addr: s.Addr, Database: "default", User: "default", Timeout: 5 * time.Second})
		if err == nil {
			st.Close()
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("clickhouse-server on %s did not answer: %v (logs in %s/log)", s.Addr, err, s.dir)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// Stop stops the server gracefully and waits for it to exit.
func (s *ClickHouseServer) Stop() {
	if s.done == nil {
		return
	}
	select {
	case <-s.done:
		return
	default:
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		s.cmd.Process.Kill()
		<-s.done
	}
}

// FreePort returns a TCP port that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

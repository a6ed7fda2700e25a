package chstore

import (
	"encoding/xml"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/tally-analytics/tally/internal/config"
)

// deploy/cluster (the production compose file of a cluster) cannot be run
// here, so these tests read it: the compose file, the ClickHouse and Keeper
// configurations beside it and tally's settings must agree.

const deployDir = "../../deploy/cluster"

type composeFile struct {
	Services map[string]composeService `yaml:"services"`
	Volumes  map[string]any            `yaml:"volumes"`
	Networks map[string]struct {
		IPAM struct {
			Config []struct {
				Subnet string `yaml:"subnet"`
			} `yaml:"config"`
		} `yaml:"ipam"`
	} `yaml:"networks"`
}

type composeService struct {
	Image       string            `yaml:"image"`
	Hostname    string            `yaml:"hostname"`
	Command     []string          `yaml:"command"`
	Environment map[string]string `yaml:"environment"`
	Volumes     []string          `yaml:"volumes"`
	DependsOn   map[string]struct {
		Condition string `yaml:"condition"`
	} `yaml:"depends_on"`
}

// mounts maps each path inside the container to its source (a volume's
// name, or a file of deploy/cluster as "./…").
func (s composeService) mounts() map[string]string {
	out := map[string]string{}
	for _, v := range s.Volumes {
		parts := strings.Split(v, ":")
		out[parts[1]] = parts[0]
	}
	return out
}

// chConfig is what tally needs of a ClickHouse or Keeper configuration file.
type chConfig struct {
	RemoteServers struct {
		Clusters []struct {
			XMLName xml.Name
			Secret  struct {
				FromEnv string `xml:"from_env,attr"`
			} `xml:"secret"`
			Shards []struct {
				InternalReplication bool `xml:"internal_replication"`
				Replicas            []struct {
					Host string `xml:"host"`
					Port string `xml:"port"`
				} `xml:"replica"`
			} `xml:"shard"`
		} `xml:",any"`
	} `xml:"remote_servers"`
	Keepers []struct {
		Host string `xml:"host"`
		Port string `xml:"port"`
	} `xml:"zookeeper>node"`
	Macros struct {
		Shard   string `xml:"shard"`
		Replica string `xml:"replica"`
	} `xml:"macros"`
	InterserverHost string `xml:"interserver_http_host"`
	Profiles        struct {
		Default struct {
			Settings []struct {
				XMLName xml.Name
				Value   string `xml:",chardata"`
			} `xml:",any"`
		} `xml:"default"`
	} `xml:"profiles"`
	Keeper struct {
		ServerID string `xml:"server_id"`
		TCPPort  string `xml:"tcp_port"`
		Raft     []struct {
			ID       string `xml:"id"`
			Hostname string `xml:"hostname"`
		} `xml:"raft_configuration>server"`
	} `xml:"keeper_server"`
}

func readCompose(t *testing.T) composeFile {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(deployDir, "docker-compose.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var c composeFile
	if err := yaml.Unmarshal(data, &c); err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	return c
}

// mountedConfig parses the file of deploy/cluster that svc mounts at path.
func mountedConfig(t *testing.T, name string, svc composeService, path string) chConfig {
	t.Helper()
	src, ok := svc.mounts()[path]
	if !ok || !strings.HasPrefix(src, "./") {
		t.Fatalf("%s mounts no file of deploy/cluster at %s", name, path)
	}
	data, err := os.ReadFile(filepath.Join(deployDir, src))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var c chConfig
	if err := xml.Unmarshal(data, &c); err != nil {
		t.Fatalf("%s: %s: %v", name, src, err)
	}
	return c
}

// byCommand lists the services whose command starts with word, sorted.
func (c composeFile) byCommand(word string) []string {
	var out []string
	for name, s := range c.Services {
		if len(s.Command) > 0 && s.Command[0] == word {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// The ClickHouse cluster tally is told about is the one its nodes are
// configured with: every node of remote_servers a service with its own
// macros, the profile settings tally requires, the shared secret, Keeper.
func TestDeployClusterClickHouse(t *testing.T) {
	c := readCompose(t)
	env := c.Services["migrate"].Environment
	cluster := env["TALLY_CLICKHOUSE_CLUSTER"]
	var nodes []string // host:port of remote_servers, shard by shard
	shardOf, replicas, keepers := map[string]string{}, map[string]string{}, map[string]bool{}
	for name, svc := range c.Services {
		if _, ok := svc.mounts()["/etc/clickhouse-server/config.d/cluster.xml"]; !ok {
			continue
		}
		cfg := mountedConfig(t, name, svc, "/etc/clickhouse-server/config.d/cluster.xml")
		if len(cfg.RemoteServers.Clusters) != 1 || cfg.RemoteServers.Clusters[0].XMLName.Local != cluster {
			t.Fatalf("%s: remote_servers does not define exactly the cluster %q of TALLY_CLICKHOUSE_CLUSTER", name, cluster)
		}
		rs := cfg.RemoteServers.Clusters[0]
		if secret := rs.Secret.FromEnv; secret == "" || svc.Environment[secret] == "" {
			t.Errorf("%s: the cluster's secret comes from %q, which the service does not set", name, secret)
		}
		var here []string
		for i, sh := range rs.Shards {
			if !sh.InternalReplication {
				t.Errorf("%s: shard %d without internal_replication", name, i+1)
			}
			for _, r := range sh.Replicas {
				here = append(here, net.JoinHostPort(r.Host, r.Port))
				shardOf[r.Host] = string(rune('1' + i))
			}
		}
		if nodes == nil {
			nodes = here
		} else if !slices.Equal(nodes, here) {
			t.Errorf("%s: remote_servers %v, another node's %v", name, here, nodes)
		}
		for _, k := range cfg.Keepers {
			keepers[net.JoinHostPort(k.Host, k.Port)] = true
		}

		node := mountedConfig(t, name, svc, "/etc/clickhouse-server/config.d/node.xml")
		if svc.Hostname != name || node.InterserverHost != name {
			t.Errorf("%s: hostname %q, interserver_http_host %q: want the service's name", name, svc.Hostname, node.InterserverHost)
		}
		if other, dup := replicas[node.Macros.Replica]; dup || node.Macros.Replica == "" {
			t.Errorf("%s: macro replica %q, also %s's: it must be unique in the cluster", name, node.Macros.Replica, other)
		}
		replicas[node.Macros.Replica] = name
		if want := shardOf[name]; node.Macros.Shard != want {
			t.Errorf("%s: macro shard %q, want %q (its shard in remote_servers)", name, node.Macros.Shard, want)
		}

		profile := map[string]string{}
		for _, s := range mountedConfig(t, name, svc, "/etc/clickhouse-server/users.d/tally-profile.xml").Profiles.Default.Settings {
			profile[s.XMLName.Local] = s.Value
		}
		for k, v := range profileSettings { // what tally migrate checks
			if profile[k] != v {
				t.Errorf("%s: the default profile sets %s = %q, tally needs %q", name, k, profile[k], v)
			}
		}
	}
	if len(nodes) != 4 || len(replicas) != 4 {
		t.Fatalf("remote_servers lists %v and %d services hold its configuration; want 2 shards × 2 replicas", nodes, len(replicas))
	}
	for _, n := range nodes {
		host, _, _ := net.SplitHostPort(n)
		if _, ok := c.Services[host]; !ok {
			t.Errorf("remote_servers names %s, which is no service", n)
		}
	}
	if addr := strings.Split(env["TALLY_CLICKHOUSE_ADDR"], ","); !slices.Equal(addr, nodes) {
		t.Errorf("TALLY_CLICKHOUSE_ADDR %v, want the nodes of remote_servers %v", addr, nodes)
	}
	if user := env["TALLY_CLICKHOUSE_USER"]; user != "" && user != "default" {
		t.Errorf("tally connects as %q, whose profile tally-profile.xml does not set", user)
	}

	// Keeper: three nodes, each the service ClickHouse reaches, with its own
	// server_id in a Raft configuration that lists them all
	ids := map[string]string{}
	for _, name := range c.byCommand("clickhouse") {
		k := mountedConfig(t, name, c.Services[name], "/etc/clickhouse-keeper/keeper.xml").Keeper
		if !keepers[net.JoinHostPort(name, k.TCPPort)] {
			t.Errorf("keeper %s on port %s is not in the nodes' zookeeper section %v", name, k.TCPPort, keepers)
		}
		ids[k.ServerID] = name
		for _, s := range k.Raft {
			if s.ID == k.ServerID && s.Hostname != name {
				t.Errorf("keeper %s: its server_id %s is %s's in raft_configuration", name, k.ServerID, s.Hostname)
			}
		}
		if len(k.Raft) != len(keepers) {
			t.Errorf("keeper %s: raft_configuration lists %d servers, want %d", name, len(k.Raft), len(keepers))
		}
	}
	if len(ids) != 3 || len(keepers) != 3 {
		t.Errorf("keepers %v with server_ids %v: want three, each its own id", keepers, ids)
	}
}

// The tally services: a one-shot migrate before two instances, each with a
// write-ahead log of its own, behind the proxy; every setting one tally
// reads.
func TestDeployClusterTally(t *testing.T) {
	c := readCompose(t)
	settings := map[string]bool{}
	fields := reflect.TypeOf(config.Config{})
	for i := range fields.NumField() {
		if name := fields.Field(i).Tag.Get("env"); name != "" {
			settings[name] = true
		}
	}
	instances := c.byCommand("serve")
	if len(instances) != 2 || c.Services["migrate"].Command[0] != "migrate" {
		t.Fatalf("serving %v, migrate %v: want two instances and a migration", instances, c.Services["migrate"].Command)
	}
	caddy, err := os.ReadFile(filepath.Join(deployDir, "Caddyfile"))
	if err != nil {
		t.Fatal(err)
	}
	wals := map[string]string{}
	for _, name := range append([]string{"migrate"}, instances...) {
		svc := c.Services[name]
		for k := range svc.Environment {
			if strings.HasPrefix(k, "TALLY_") && !settings[k] {
				t.Errorf("%s: %s is no setting of tally (internal/config)", name, k)
			}
		}
		if name == "migrate" {
			continue
		}
		wal := svc.mounts()[svc.Environment["TALLY_WAL_DIR"]]
		if _, ok := c.Volumes[wal]; !ok {
			t.Errorf("%s: TALLY_WAL_DIR %s is not on a volume of its own", name, svc.Environment["TALLY_WAL_DIR"])
		}
		for other, s := range c.Services {
			for _, src := range s.mounts() {
				if other != name && src == wal {
					t.Errorf("%s's write-ahead log volume %s is mounted by %s too", name, wal, other)
				}
			}
		}
		wals[name] = wal
		if svc.DependsOn["migrate"].Condition != "service_completed_successfully" {
			t.Errorf("%s does not wait for the migration", name)
		}
		_, port, _ := net.SplitHostPort(svc.Environment["TALLY_HTTP_ADDR"])
		if !strings.Contains(string(caddy), name+":"+port) {
			t.Errorf("the Caddyfile does not send requests to %s:%s", name, port)
		}
	}
	if len(wals) != 2 || wals[instances[0]] == wals[instances[1]] {
		t.Errorf("write-ahead logs %v: want one volume each", wals)
	}
	subnets := c.Networks["default"].IPAM.Config
	if len(subnets) != 1 || c.Services[instances[0]].Environment["TALLY_TRUSTED_PROXIES"] != subnets[0].Subnet {
		t.Errorf("TALLY_TRUSTED_PROXIES %q: want the services' network %v, where the proxy is",
			c.Services[instances[0]].Environment["TALLY_TRUSTED_PROXIES"], subnets)
	}
}

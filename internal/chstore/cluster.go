package chstore

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// clusterSettings are the settings tally sends with every query on a
// cluster:
//
//   - insert_distributed_sync: an insert into a Distributed table returns
//     only once every shard has its rows (one replica of each wrote them),
//     so the write buffer's checkpoint never passes rows that a shard has
//     not accepted; a shard that is down fails the insert, and the batch
//     waits in the WAL;
//   - insert_deduplicate off: Replicated tables would drop a block equal to
//     one of the last hundred (two flushes of the same counts of refused
//     events, say); the write buffer has its own exactly-once lookups.
//
// Two more must be in the ClickHouse user's profile (profileSettings):
// 18.16's native protocol takes only numbers per query.
func clusterSettings(cluster string) clickhouse.Settings {
	if cluster == "" {
		return nil
	}
	return clickhouse.Settings{"insert_distributed_sync": 1, "insert_deduplicate": 0}
}

// profileSettings are the settings a cluster's user profile must hold:
//
//   - distributed_product_mode global: a subquery over a Distributed table
//     inside a query over one (IN, JOIN) runs once over the whole cluster
//     and its result goes to every shard, so it means what it means on one
//     node (18.16 refuses such queries by default);
//   - load_balancing in_order: reads and inserts use the first replica of a
//     shard that answers, so a read after a write sees it.
var profileSettings = map[string]string{"distributed_product_mode": "global", "load_balancing": "in_order"}

// checkProfile fails unless the connection's profile has profileSettings.
func (s *Store) checkProfile(ctx context.Context) error {
	for name, want := range profileSettings {
		var got string
		if err := s.conn.QueryRow(ctx, "SELECT value FROM system.settings WHERE name = ?", name).Scan(&got); err != nil {
			return fmt.Errorf("chstore: read setting %s: %w", name, err)
		}
		if got != want {
			return fmt.Errorf("chstore: on a cluster the ClickHouse user's profile must set %s = %s (it is %s); see README, Scaling out",
				name, want, got)
		}
	}
	return nil
}

// node is one ClickHouse server of the cluster.
type node struct {
	addr  string
	shard uint32
	conn  driver.Conn
}

func (n *node) collect(ctx context.Context, query string, args []any, scan func(driver.Rows) error) error {
	if err := collectOn(ctx, n.conn, query, args, scan); err != nil {
		return fmt.Errorf("node %s: %w", n.addr, err)
	}
	return nil
}

// nodeConns are connections to every node of the cluster, found in
// system.clusters on first use.
type nodeConns struct {
	mu    sync.Mutex
	nodes []*node
}

func (c *nodeConns) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, n := range c.nodes {
		n.conn.Close()
	}
	c.nodes = nil
}

// everyNode runs fn on every node of the cluster in turn, and fails with the
// first node that fails (a node that is down fails).
func (s *Store) everyNode(ctx context.Context, fn func(*node) error) error {
	nodes, err := s.clusterNodes(ctx)
	if err != nil {
		return err
	}
	for _, n := range nodes {
		if err := fn(n); err != nil {
			return translate(err)
		}
	}
	return nil
}

// everyShard runs fn on one replica of each shard of the cluster: the first,
// or the next when a replica cannot take it (down, or its tables read-only
// while it has no ZooKeeper session). It is how tally changes replicated
// tables (ALTER of their columns, mutations): the replica that takes the
// change writes it to its shard's log in ZooKeeper, and the other replicas
// apply it from there (one that is down, once it returns).
//
// Not ALTER ... ON CLUSTER: ClickHouse 18.16's DDL worker lets both
// replicas of a shard run such an ALTER now and then, and the second one
// then stops its DDL worker for good ("Node exists" on the task's executed
// mark), after which every ON CLUSTER query waits on that node.
func (s *Store) everyShard(ctx context.Context, fn func(*node) error) error {
	nodes, err := s.clusterNodes(ctx)
	if err != nil {
		return err
	}
	for i := 0; i < len(nodes); {
		j := i
		for j < len(nodes) && nodes[j].shard == nodes[i].shard {
			j++
		}
		if err := onOneReplica(nodes[i:j], fn); err != nil {
			return translate(err)
		}
		i = j
	}
	return nil
}

// onOneReplica runs fn on the first of a shard's replicas that can take it.
func onOneReplica(replicas []*node, fn func(*node) error) (err error) {
	for _, n := range replicas {
		if err = fn(n); err == nil || !replicaUnable(err) {
			return err
		}
	}
	return err
}

// replicaUnable reports whether err says that a replica could not take a
// change its shard's other replica may take: it is down, or its replicated
// tables are read-only (TABLE_IS_READ_ONLY, 242).
func replicaUnable(err error) bool {
	var e *clickhouse.Exception
	return unreachable(err) || (errors.As(err, &e) && e.Code == 242)
}

func (s *Store) clusterNodes(ctx context.Context) ([]*node, error) {
	s.nodes.mu.Lock()
	defer s.nodes.mu.Unlock()
	if s.nodes.nodes != nil {
		return s.nodes.nodes, nil
	}
	var found []*node
	err := s.collect(ctx, "SELECT host_name, toUInt32(port), toUInt32(shard_num) FROM system.clusters WHERE cluster = ? ORDER BY shard_num, replica_num",
		[]any{s.layout.cluster}, func(r driver.Rows) error {
			var host string
			var port, shard uint32
			if err := r.Scan(&host, &port, &shard); err != nil {
				return err
			}
			found = append(found, &node{addr: net.JoinHostPort(host, strconv.Itoa(int(port))), shard: shard})
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("chstore: nodes of cluster %s: %w", s.layout.cluster, err)
	}
	if len(found) == 0 {
		return nil, fmt.Errorf("chstore: ClickHouse knows no cluster %q (remote_servers)", s.layout.cluster)
	}
	for i, n := range found {
		o := s.opts
		o.Addr = n.addr
		conn, err := connect(o, s.db)
		if err != nil {
			for _, n := range found[:i] {
				n.conn.Close()
			}
			return nil, err
		}
		n.conn = conn
	}
	s.nodes.nodes = found
	return found, nil
}

// endInsertCluster is EndInsert on a cluster: an insert through a
// Distributed table runs on the node that took it and, under its id as the
// initial query, on the shards it writes to; it is over when no node runs
// any of them.
func (s *Store) endInsertCluster(ctx context.Context, id string) (running bool, err error) {
	err = s.everyNode(ctx, func(n *node) error {
		var count uint64
		if err := n.conn.QueryRow(ctx, "SELECT count() FROM system.processes WHERE query_id = ? OR initial_query_id = ?", id, id).
			Scan(&count); err != nil {
			return fmt.Errorf("node %s: %w", n.addr, err)
		}
		running = running || count > 0
		return nil
	})
	return running, err
}

// optimizeCluster merges every part of table's local tables now: OPTIMIZE
// on the leader replica of each shard (18.16 fails an OPTIMIZE ON CLUSTER,
// which a follower forwards to its leader), then waits until every replica
// has applied the merges.
func (s *Store) optimizeCluster(ctx context.Context, table string) error {
	local := s.layout.local(table)
	err := s.everyNode(ctx, func(n *node) error {
		var leader uint8
		if err := n.conn.QueryRow(ctx, "SELECT is_leader FROM system.replicas WHERE database = ? AND table = ?",
			s.db, table+"_local").Scan(&leader); err != nil {
			return fmt.Errorf("node %s: %w", n.addr, err)
		}
		if leader == 1 {
			if err := n.conn.Exec(ctx, "OPTIMIZE TABLE "+local+" FINAL"); err != nil {
				return fmt.Errorf("node %s: %w", n.addr, err)
			}
		}
		return nil
	})
	if err == nil {
		err = s.SyncReplicas(ctx, table)
	}
	if err != nil {
		return fmt.Errorf("chstore: optimize %s: %w", table, err)
	}
	return nil
}

// SyncReplicas waits until every replica of table (on a cluster) has
// fetched every part its shard holds and applied every merge and mutation
// queued for it. On one node there is nothing to wait for.
func (s *Store) SyncReplicas(ctx context.Context, table string) error {
	if !s.layout.clustered() {
		return nil
	}
	if !safeName.MatchString(table) {
		return fmt.Errorf("chstore: invalid table name %q", table)
	}
	return s.everyNode(ctx, func(n *node) error {
		if err := n.conn.Exec(ctx, "SYSTEM SYNC REPLICA "+s.layout.local(table)); err != nil {
			return fmt.Errorf("node %s: sync replica %s: %w", n.addr, table, err)
		}
		return nil
	})
}

package chstore

import (
	"errors"
	"net"
	"testing"

	"github.com/ClickHouse/clickhouse-go/v2"
)

// A change goes to the first replica of a shard that can take it: past a
// replica that is down or read-only, never past one that refused it.
func TestOnOneReplica(t *testing.T) {
	down := &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}
	readOnly := &clickhouse.Exception{Code: 242, Message: "Table is in readonly mode"}
	refused := &clickhouse.Exception{Code: 44, Message: "column with this name already exists"}
	for _, tc := range []struct {
		name    string
		answers []error // each replica's answer, in order
		tried   int
		want    error
	}{
		{"first takes it", []error{nil, nil}, 1, nil},
		{"first down", []error{down, nil}, 2, nil},
		{"first read-only", []error{readOnly, nil}, 2, nil},
		{"first refuses", []error{refused, nil}, 1, refused},
		{"both down", []error{down, down}, 2, down},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var replicas []*node
			for range tc.answers {
				replicas = append(replicas, &node{})
			}
			tried := 0
			err := onOneReplica(replicas, func(n *node) error {
				tried++
				for i, r := range replicas {
					if r == n {
						return tc.answers[i]
					}
				}
				t.Fatal("not a replica of the shard")
				return nil
			})
			if tried != tc.tried || !errors.Is(err, tc.want) {
				t.Errorf("tried %d replicas, got %v; want %d, %v", tried, err, tc.tried, tc.want)
			}
		})
	}
}

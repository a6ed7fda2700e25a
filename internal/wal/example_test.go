package wal_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"

	"github.com/tally-analytics/tally/internal/wal"
)

// The flusher tails the log from its checkpoint, ships each batch, saves the
// new checkpoint and only then deletes the consumed segments.
func Example_flusher() {
	dir, err := os.MkdirTemp("", "wal-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	l, err := wal.Open(wal.Options{Dir: dir})
	if err != nil {
		log.Fatal(err)
	}
	defer l.Close()
	ctx := context.Background()
	for _, e := range []string{`{"n":"pageview"}`, `{"n":"signup"}`} {
		if _, err := l.Append(ctx, []byte(e)); err != nil { // answer 201 only now
			log.Fatal(err)
		}
	}

	checkpointPath := filepath.Join(dir, "checkpoint.json")
	var checkpoint wal.Position // read from checkpointPath at start; zero reads from First()
	r, err := l.NewReader(checkpoint)
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	for {
		var batch []string
		end := checkpoint
		for len(batch) < 1000 {
			p, e, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				log.Fatal(err)
			}
			batch, end = append(batch, string(p)), e
		}
		if len(batch) == 0 {
			break // a real flusher calls l.Wait(ctx, checkpoint) here
		}
		fmt.Println("insert", batch) // the ClickHouse batch insert
		data, _ := json.Marshal(end)
		if err := wal.WriteFileAtomic(checkpointPath, data); err != nil {
			log.Fatal(err)
		}
		checkpoint = end
		if err := l.TruncateBefore(checkpoint); err != nil {
			log.Print(err) // retried after the next batch
		}
	}
	// Output: insert [{"n":"pageview"} {"n":"signup"}]
}

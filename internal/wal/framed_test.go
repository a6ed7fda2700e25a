package wal

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestFramed: records encoded in place are framed byte for byte as
// AppendBatch frames its payloads; a refused payload leaves the records
// before it as they were; the log reads back what AppendFramed committed.
func TestFramed(t *testing.T) {
	var f Framed
	f.Grow(64)
	for _, p := range []string{"first", payload(1, 300)} {
		if err := f.Add(func(b []byte) []byte { return append(b, p...) }); err != nil {
			t.Fatalf("Add(%.10q): %v", p, err)
		}
	}
	want := appendRecord(appendRecord(nil, []byte("first")), []byte(payload(1, 300)))
	if !bytes.Equal(f.data, want) || f.records != 2 {
		t.Fatalf("framed %d records as %x, want 2 as %x", f.records, f.data, want)
	}
	for name, encode := range map[string]func([]byte) []byte{
		"empty":     func(b []byte) []byte { return b },
		"too large": func(b []byte) []byte { return append(b, make([]byte, MaxPayload+1)...) },
	} {
		if err := f.Add(encode); !errors.Is(err, ErrPayloadSize) {
			t.Errorf("%s payload: %v, want ErrPayloadSize", name, err)
		}
		if !bytes.Equal(f.data, want) || f.records != 2 {
			t.Errorf("after the %s payload: %d records, %d bytes; want the 2 before, %d bytes", name, f.records, len(f.data), len(want))
		}
	}

	l := openLog(t, Options{Dir: t.TempDir()})
	if end, err := l.AppendFramed(context.Background(), &Framed{}); err != nil || end != l.Durable() {
		t.Errorf("no records: %v, %v; want Durable() %v", end, err, l.Durable())
	}
	end, err := l.AppendFramed(context.Background(), &f)
	if err != nil {
		t.Fatal(err)
	}
	if f.data != nil || f.records != 0 {
		t.Error("the records stayed with the caller after AppendFramed")
	}
	got := readAll(t, l, Position{})
	if len(got) != 2 {
		t.Fatalf("read back %d records, want 2", len(got))
	}
	if diff := cmp.Diff([]string{"first", payload(1, 300)}, []string{got[0].Payload, got[1].Payload}); diff != "" || got[1].End != end {
		t.Errorf("read back records ending at %v, want %v (-want +got):\n%s", got[1].End, end, diff)
	}
}

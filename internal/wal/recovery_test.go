package wal

import (
	"bytes"
	"encoding/binary"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRecoverTornTail(t *testing.T) {
	valid := appendRecord(nil, []byte("an unacknowledged record"))
	badCRC := bytes.Clone(valid)
	badCRC[5] ^= 0xff
	tests := []struct {
		name   string
		damage []byte
	}{
		{name: "garbage", damage: []byte("\xde\xad\xbe\xef garbage that is no record")},
		{name: "partial header", damage: valid[:3]},
		{name: "truncated record", damage: valid[:len(valid)-5]},
		{name: "bad checksum", damage: badCRC},
		{name: "flipped payload byte", damage: append(bytes.Clone(valid[:len(valid)-1]), valid[len(valid)-1]^1)},
		{name: "zero fill", damage: make([]byte, 4096)},
		{name: "length too large", damage: binary.LittleEndian.AppendUint32(nil, MaxPayload+1)},
		{name: "valid record then garbage", damage: append(bytes.Clone(valid), 0xff, 0xff, 0xff)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			opts := Options{Dir: dir, SegmentBytes: 400}
			l := openLog(t, opts)
			want := appendAll(t, l, payloads(0, 25, 30))
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			nums := segmentNums(t, dir)
			last := segmentPath(dir, nums[len(nums)-1])
			info, err := os.Stat(last)
			if err != nil {
				t.Fatal(err)
			}
			appendFile(t, last, tt.damage)

			l = openLog(t, opts)
			wantSize := info.Size()
			if bytes.HasPrefix(tt.damage, valid) {
				// A whole record before the damage is kept.
				wantSize += int64(len(valid))
				want = append(want, record{Payload: "an unacknowledged record", End: Position{nums[len(nums)-1], wantSize}})
			}
			if got, err := os.Stat(last); err != nil || got.Size() != wantSize {
				t.Errorf("damaged segment holds %v bytes (%v), want %d", got.Size(), err, wantSize)
			}
			if diff := cmp.Diff(want, readAll(t, l, Position{})); diff != "" {
				t.Fatalf("records after recovery (-want +got):\n%s", diff)
			}
			want = append(want, appendAll(t, l, payloads(100, 5, 30))...)
			if diff := cmp.Diff(want, readAll(t, l, Position{})); diff != "" {
				t.Errorf("records after new appends (-want +got):\n%s", diff)
			}
			if size, disk := l.Size(), dirBytes(t, dir); size != disk {
				t.Errorf("Size() = %d, files hold %d", size, disk)
			}
		})
	}
}

func appendFile(t *testing.T, path string, data []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestReaderCorruptSealedSegment(t *testing.T) {
	dir := t.TempDir()
	l := openLog(t, Options{Dir: dir, SegmentBytes: 200, NoSync: true})
	appendAll(t, l, payloads(0, 20, 30))
	nums := segmentNums(t, dir)
	path := segmentPath(dir, nums[1])
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)-1] ^= 0xff
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := l.NewReader(Position{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for {
		_, _, err := r.Next()
		if err == nil {
			continue
		}
		if !errorsIs(err, ErrCorrupt) {
			t.Errorf("Next: %v, want ErrCorrupt", err)
		}
		return
	}
}

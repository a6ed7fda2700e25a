package wal

import (
	"bufio"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

const (
	headerSize = 8 // uint32 length + uint32 CRC-32C
	segmentExt = ".wal"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// appendRecord appends the framed payload to buf.
func appendRecord(buf, payload []byte) []byte {
	buf = binary.LittleEndian.AppendUint32(buf, uint32(len(payload)))
	buf = binary.LittleEndian.AppendUint32(buf, crc32.Checksum(payload, castagnoli))
	return append(buf, payload...)
}

// AppendFramed appends payload framed as the log frames its records —
// length, CRC-32C, payload — for small files that must tell a whole write
// from a torn one (the write buffer's checkpoint and plan).
func AppendFramed(buf, payload []byte) []byte { return appendRecord(buf, payload) }

// Unframe returns the payload framed at the start of p by AppendFramed, or
// ok false when p holds no whole, intact frame.
func Unframe(p []byte) (payload []byte, ok bool) {
	if len(p) < headerSize {
		return nil, false
	}
	n, sum, ok := parseHeader(p)
	if !ok || len(p)-headerSize < n {
		return nil, false
	}
	payload = p[headerSize : headerSize+n]
	return payload, crc32.Checksum(payload, castagnoli) == sum
}

// parseHeader returns the payload length and checksum of a record header, or
// ok false when the length cannot be that of a record.
func parseHeader(hdr []byte) (n int, sum uint32, ok bool) {
	n64 := binary.LittleEndian.Uint32(hdr)
	sum = binary.LittleEndian.Uint32(hdr[4:])
	return int(n64), sum, n64 > 0 && n64 <= MaxPayload
}

func segmentPath(dir string, num uint64) string {
	return filepath.Join(dir, fmt.Sprintf("%020d%s", num, segmentExt))
}

// listSegments returns the segment files in dir, oldest first, with their
// sizes. Other files are ignored.
func listSegments(dir string) ([]segment, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("wal: list segments: %w", err)
	}
	var segs []segment
	for _, e := range entries {
		digits, ok := strings.CutSuffix(e.Name(), segmentExt)
		if !ok || len(digits) != 20 || !e.Type().IsRegular() {
			continue
		}
		num, err := strconv.ParseUint(digits, 10, 64)
		if err != nil || num == 0 {
			continue
		}
		info, err := e.Info()
		if err != nil {
			return nil, fmt.Errorf("wal: list segments: %w", err)
		}
		segs = append(segs, segment{num: num, size: info.Size()})
	}
	slices.SortFunc(segs, func(a, b segment) int { return cmp.Compare(a.num, b.num) })
	return segs, nil
}

// repairTail checks segment num record by record, cuts it at the first torn
// or corrupt record and returns its valid length.
func repairTail(opts Options, num uint64) (int64, error) {
	path := segmentPath(opts.Dir, num)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return 0, fmt.Errorf("wal: recover segment %d: %w", num, err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("wal: recover segment %d: %w", num, err)
	}
	valid, err := scanValid(bufio.NewReaderSize(f, 1<<20))
	if err != nil {
		return 0, fmt.Errorf("wal: recover segment %d: %w", num, err)
	}
	if valid == info.Size() {
		return valid, nil
	}
	zeros, err := allZero(io.NewSectionReader(f, valid, info.Size()-valid))
	if err != nil {
		return 0, fmt.Errorf("wal: recover segment %d: %w", num, err)
	}
	if zeros {
		// the unused part of a preallocated segment (a crash kept it from
		// being cut), or zeros the file system left: nothing was written there
		opts.Logger.Info("wal: cutting the unused zeros off the last segment",
			"segment", num, "offset", valid, "bytes", info.Size()-valid)
	} else {
		opts.Logger.Warn("wal: cutting torn tail off the log",
			"segment", num, "offset", valid, "bytes", info.Size()-valid)
	}
	if err := f.Truncate(valid); err != nil {
		return 0, fmt.Errorf("wal: recover segment %d: %w", num, err)
	}
	if !opts.NoSync {
		if err := f.Sync(); err != nil {
			return 0, fmt.Errorf("wal: recover segment %d: %w", num, err)
		}
	}
	return valid, nil
}

// scanValid returns the length of the longest prefix of r made of whole,
// intact records. Only an I/O error is an error.
func scanValid(r io.Reader) (int64, error) {
	var (
		valid   int64
		hdr     [headerSize]byte
		payload []byte
	)
	for {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return valid, ignoreEOF(err)
		}
		n, sum, ok := parseHeader(hdr[:])
		if !ok {
			return valid, nil
		}
		if cap(payload) < n {
			payload = make([]byte, n)
		}
		if _, err := io.ReadFull(r, payload[:n]); err != nil {
			return valid, ignoreEOF(err)
		}
		if crc32.Checksum(payload[:n], castagnoli) != sum {
			return valid, nil
		}
		valid += int64(headerSize + n)
	}
}

func ignoreEOF(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return nil
	}
	return err
}

// createSegment creates the empty segment file num and, with sync, fsyncs the
// directory so that the file survives a crash. A file of that name can only
// be the leftover of a failed rotation, as every live segment is older.
func createSegment(dir string, num uint64, sync bool) (*os.File, error) {
	path := segmentPath(dir, num)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("wal: create segment %d: %w", num, err)
	}
	if sync {
		if err := SyncDir(dir); err != nil {
			f.Close()
			os.Remove(path)
			return nil, fmt.Errorf("wal: create segment %d: %w", num, err)
		}
	}
	return f, nil
}

// SyncDir fsyncs a directory, making the creation, renaming or removal of
// its entries durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

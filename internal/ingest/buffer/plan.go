package buffer

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/tally-analytics/tally/internal/ingest/session"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/wal"
)

// plan is the first thing a batch writes to disk, before any of its steps
// has an effect elsewhere: which records it holds (from the checkpoint's
// Committed position to End) and the session snapshot its rows are computed
// from. With it a restart replays the batch to the same rows.
type plan struct {
	Seq        uint64
	Start, End wal.Position
	Snapshot   *session.Snapshot
}

const planName = "plan"

func (b *Buffer) planPath() string { return filepath.Join(b.opts.Dir, planName) }

// createPlanFile makes sure the plan file exists durably, so that writing a
// plan is one fsync of the file: a plan whose directory entry a crash could
// lose would let a batch's session states be applied twice.
func (b *Buffer) createPlanFile() error {
	f, err := openSlotFile(b.planPath())
	if err != nil {
		return err
	}
	return f.Close()
}

// writePlan replaces the plan file: length, CRC-32C, then the plan. A crash
// while writing leaves a file that fails its check and reads as no plan,
// which is right: nothing of the batch happened yet.
func (b *Buffer) writePlan(p plan) error {
	body := binary.AppendUvarint(nil, p.Seq)
	body = appendPosition(body, p.Start)
	body = appendPosition(body, p.End)
	body, err := p.Snapshot.AppendBinary(body)
	if err != nil {
		return fmt.Errorf("buffer: encode plan: %w", err)
	}
	data := binary.LittleEndian.AppendUint32(nil, uint32(len(body)))
	data = binary.LittleEndian.AppendUint32(data, crc32.Checksum(body, castagnoli))
	data = append(data, body...)
	f, err := os.OpenFile(b.planPath(), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("buffer: write plan: %w", err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("buffer: write plan: %w", err)
	}
	return nil
}

// readPlan reads the plan file; nil when there is none or it is torn.
func (b *Buffer) readPlan() (*plan, error) {
	data, err := os.ReadFile(b.planPath())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("buffer: read plan: %w", err)
	}
	if len(data) < 8 {
		return nil, nil
	}
	body := data[8:]
	if int(binary.LittleEndian.Uint32(data)) != len(body) || crc32.Checksum(body, castagnoli) != binary.LittleEndian.Uint32(data[4:]) {
		return nil, nil
	}
	seq, n := binary.Uvarint(body)
	if n <= 0 {
		return nil, fmt.Errorf("buffer: plan: %w", model.ErrCorruptRecord)
	}
	p := &plan{Seq: seq}
	body = body[n:]
	if p.Start, body, err = readPosition(body); err != nil {
		return nil, err
	}
	if p.End, body, err = readPosition(body); err != nil {
		return nil, err
	}
	p.Snapshot = &session.Snapshot{}
	if err := p.Snapshot.UnmarshalBinary(body); err != nil {
		return nil, fmt.Errorf("buffer: plan: %w", err)
	}
	return p, nil
}

func appendPosition(b []byte, p wal.Position) []byte {
	b = binary.AppendUvarint(b, p.Segment)
	return binary.AppendVarint(b, p.Offset)
}

func readPosition(b []byte) (wal.Position, []byte, error) {
	seg, n := binary.Uvarint(b)
	if n <= 0 {
		return wal.Position{}, nil, fmt.Errorf("buffer: plan: %w", model.ErrCorruptRecord)
	}
	off, m := binary.Varint(b[n:])
	if m <= 0 {
		return wal.Position{}, nil, fmt.Errorf("buffer: plan: %w", model.ErrCorruptRecord)
	}
	return wal.Position{Segment: seg, Offset: off}, b[n+m:], nil
}

package buffer

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/tally-analytics/tally/internal/wal"
)

// checkpoint is how far the log has reached ClickHouse, and where the batch
// under way stands. It is rewritten at each step of a batch.
type checkpoint struct {
	// Committed is the log position up to which every record is stored.
	Committed wal.Position `json:"committed"`
	// Seq numbers the last committed batch.
	Seq uint64 `json:"seq"`
	// Batch is the batch under way, once its sessions are resolved.
	Batch *progress `json:"batch,omitempty"`
	// Writes counts writes, to tell the newer of the file's two copies.
	Writes uint64 `json:"writes"`
	// Instance names this write-ahead log among the instances that share
	// ClickHouse: it starts the names of its inserts.
	Instance string `json:"instance"`
}

// progress is where a batch stands: its steps before Step are done; Sent
// says Step's insert may have reached ClickHouse (so its rows are looked up
// before they are sent again).
type progress struct {
	Seq  uint64       `json:"seq"`
	End  wal.Position `json:"end"`
	Step step         `json:"step"`
	Sent bool         `json:"sent"`
	// Unsure says that every insert from Step on may have reached
	// ClickHouse, so each is looked up first: a batch's inserts run at once
	// (store), and an earlier release's batch in flight is converted so.
	Unsure bool `json:"unsure,omitempty"`
}

// step is a stage of a batch's way to ClickHouse, in order. (Recording the
// revenue of its events comes after them and needs no step of its own: the
// ledger keeps one payment per event id.)
type step int

const (
	stepResolve     step = iota // sessions resolved (Redis)
	stepEvents                  // events inserted
	stepSessions                // session rows inserted
	stepBots                    // bot events inserted
	stepEngagements             // scroll depths inserted
	// stepLast is the last of the inserts, which run at once (store).
	stepLast = stepEngagements
)

func (s step) String() string {
	return [...]string{"resolve", "events", "sessions", "bot_events", "engagements"}[s]
}

const (
	checkpointName       = "checkpoint"
	legacyCheckpointName = "checkpoint.json"
	slotBytes            = 1024
)

// openCheckpoint reads the checkpoint, converting the single-file one of
// earlier releases (whose batch under way was "in flight": any of its
// inserts may have run).
func (b *Buffer) openCheckpoint() error {
	f, err := openSlotFile(filepath.Join(b.opts.Dir, checkpointName))
	if err != nil {
		return err
	}
	b.cpFile = f
	data, err := f.read()
	if err != nil {
		return err
	}
	if data != nil {
		if err := json.Unmarshal(data, &b.cp); err != nil {
			return fmt.Errorf("buffer: checkpoint: %w", err)
		}
	} else if err := b.convertLegacy(); err != nil {
		return err
	}
	// Segments before the first live one were deleted after being committed.
	if first := b.log.First(); b.cp.Committed.Less(first) && b.cp.Batch == nil {
		b.cp.Committed = first
	}
	if b.cp.Instance == "" { // saved with the first checkpoint, before any insert
		b.cp.Instance = randomHex(6)
	}
	return nil
}

func randomHex(n int) string {
	p := make([]byte, n)
	rand.Read(p) //nolint:errcheck // never fails
	return hex.EncodeToString(p)
}

func (b *Buffer) convertLegacy() error {
	path := filepath.Join(b.opts.Dir, legacyCheckpointName)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		b.cp = checkpoint{Committed: b.log.First()}
		return nil
	}
	if err != nil {
		return fmt.Errorf("buffer: read checkpoint: %w", err)
	}
	var old struct {
		Committed wal.Position  `json:"committed"`
		InFlight  *wal.Position `json:"in_flight,omitempty"`
	}
	if err := json.Unmarshal(data, &old); err != nil {
		return fmt.Errorf("buffer: checkpoint %s is corrupt: %w", path, err)
	}
	cp := checkpoint{Committed: old.Committed}
	if old.InFlight != nil {
		cp.Batch = &progress{Seq: 1, End: *old.InFlight, Step: stepEvents, Sent: true, Unsure: true}
	}
	if err := b.saveCheckpoint(cp); err != nil {
		return err
	}
	return os.Remove(path)
}

func (b *Buffer) saveCheckpoint(cp checkpoint) error {
	cp.Writes, cp.Instance = b.cp.Writes+1, b.cp.Instance
	data, err := json.Marshal(cp)
	if err != nil {
		return fmt.Errorf("buffer: encode checkpoint: %w", err)
	}
	if err := b.cpFile.write(cp.Writes, data); err != nil {
		return err
	}
	b.cp = cp
	return nil
}

// slotFile keeps a small value that survives a crash in the middle of
// rewriting it: two copies in alternate 1 KiB slots, each with the value's
// length, its CRC-32C and a write counter, then the value; each write
// overwrites the older copy in place and fsyncs it (one fsync; no rename, no
// directory fsync).
type slotFile struct {
	f *os.File
}

// slotHeader is the length, CRC-32C and write counter before a slot's value.
const slotHeader = 16

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func openSlotFile(path string) (*slotFile, error) {
	_, statErr := os.Stat(path)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("buffer: open %s: %w", path, err)
	}
	if errors.Is(statErr, fs.ErrNotExist) {
		// a new file: its directory entry must survive a crash too
		if err := f.Sync(); err != nil {
			f.Close()
			return nil, fmt.Errorf("buffer: open %s: %w", path, err)
		}
		if err := wal.SyncDir(filepath.Dir(path)); err != nil {
			f.Close()
			return nil, fmt.Errorf("buffer: sync %s: %w", filepath.Dir(path), err)
		}
	}
	return &slotFile{f: f}, nil
}

// read returns the newer intact copy, or nil when there is none.
func (s *slotFile) read() ([]byte, error) {
	buf := make([]byte, 2*slotBytes)
	n, err := s.f.ReadAt(buf, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("buffer: read checkpoint: %w", err)
	}
	var best []byte
	var bestWrites uint64
	for slot := 0; (slot+1)*slotBytes <= n; slot++ {
		p := buf[slot*slotBytes : (slot+1)*slotBytes]
		size := binary.LittleEndian.Uint32(p)
		if size == 0 || size > slotBytes-slotHeader {
			continue
		}
		data := p[slotHeader : slotHeader+size]
		if crc32.Checksum(data, castagnoli) != binary.LittleEndian.Uint32(p[4:]) {
			continue
		}
		if w := binary.LittleEndian.Uint64(p[8:]); best == nil || w > bestWrites {
			best, bestWrites = data, w
		}
	}
	return best, nil
}

// write stores data as copy number writes, in the slot of the older copy.
func (s *slotFile) write(writes uint64, data []byte) error {
	if len(data) > slotBytes-slotHeader {
		return fmt.Errorf("buffer: checkpoint of %d bytes does not fit its slot", len(data))
	}
	p := make([]byte, slotBytes)
	binary.LittleEndian.PutUint32(p, uint32(len(data)))
	binary.LittleEndian.PutUint32(p[4:], crc32.Checksum(data, castagnoli))
	binary.LittleEndian.PutUint64(p[8:], writes)
	copy(p[slotHeader:], data)
	if _, err := s.f.WriteAt(p, int64(writes%2)*slotBytes); err != nil {
		return fmt.Errorf("buffer: write checkpoint: %w", err)
	}
	if err := s.f.Sync(); err != nil {
		return fmt.Errorf("buffer: sync checkpoint: %w", err)
	}
	return nil
}

func (s *slotFile) Close() error {
	if s == nil {
		return nil
	}
	return s.f.Close()
}

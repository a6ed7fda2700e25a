package buffer

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/tally-analytics/tally/internal/ingest/session"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/wal"
)

// plan is the first thing a batch writes to disk, before any of its steps
// has an effect elsewhere: which records it holds (its number Seq, the one
// after the checkpoint's, runs from the checkpoint's Committed position to
// End) and the session snapshot its rows are computed from. With it a
// restart replays the batch to the same rows.
//
// A batch's plan is written again when another instance moved some of its
// visitors on (Rev counts the versions). The versions go to two files in
// turn, so that a crash while writing one leaves the one before: either
// the previous batch's plan (nothing of this batch happened yet) or an
// earlier version of this batch's (a valid snapshot whose states, where
// already written, are in the batch's applied set).
type plan struct {
	Seq, Rev uint64
	End      wal.Position
	Snapshot *session.Snapshot
}

var planNames = [2]string{"plan.0", "plan.1"}

func (b *Buffer) planPath(i int) string { return filepath.Join(b.opts.Dir, planNames[i]) }

// createPlanFiles makes sure both plan files exist durably, so that writing
// a plan is one fsync of a file: a plan whose directory entry a crash could
// lose would let a batch's session states be applied twice.
func (b *Buffer) createPlanFiles() error {
	for i := range planNames {
		f, err := openSlotFile(b.planPath(i))
		if err != nil {
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	return nil
}

// writePlan writes p over the older of the two plan files, framed as the
// WAL frames its records.
func (b *Buffer) writePlan(p plan) error {
	body := binary.AppendUvarint(nil, p.Seq)
	body = binary.AppendUvarint(body, p.Rev)
	body = appendPosition(body, p.End)
	body, err := p.Snapshot.AppendBinary(body)
	if err != nil {
		return fmt.Errorf("buffer: encode plan: %w", err)
	}
	data := wal.AppendFramed(nil, body)
	f, err := os.OpenFile(b.planPath(int((b.planWrites+1)%2)), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
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
	b.planWrites++ // only now: after a failed write, the other file is still the one to keep
	return nil
}

// readPlan reads the newest whole plan of the two files (nil when there is
// none) and says which file holds it.
func readPlan(dir string) (*plan, int, error) {
	var newest *plan
	at := 0
	for i, name := range planNames {
		p, err := readPlanFile(filepath.Join(dir, name))
		if err != nil {
			return nil, 0, err
		}
		if p != nil && (newest == nil || p.Seq > newest.Seq || (p.Seq == newest.Seq && p.Rev > newest.Rev)) {
			newest, at = p, i
		}
	}
	return newest, at, nil
}

// readPlanFile reads one plan file; nil when it is empty or torn.
func readPlanFile(path string) (*plan, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("buffer: read plan: %w", err)
	}
	body, ok := wal.Unframe(data)
	if !ok {
		return nil, nil // empty, or torn by a crash
	}
	d := model.NewDecoder(body)
	p := &plan{Seq: d.ReadUvarint(), Rev: d.ReadUvarint()}
	p.End = wal.Position{Segment: d.ReadUvarint(), Offset: d.ReadVarint()}
	rest := d.Rest()
	if d.Err() != nil {
		return nil, fmt.Errorf("buffer: plan %s: %w", path, model.ErrCorruptRecord)
	}
	p.Snapshot = &session.Snapshot{}
	if err := p.Snapshot.UnmarshalBinary(rest); err != nil {
		return nil, fmt.Errorf("buffer: plan %s: %w", path, err)
	}
	return p, nil
}

func appendPosition(b []byte, p wal.Position) []byte {
	b = binary.AppendUvarint(b, p.Segment)
	return binary.AppendVarint(b, p.Offset)
}

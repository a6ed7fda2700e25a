package buffer

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/tally-analytics/tally/internal/ingest/session"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/wal"
)

// plan is the first thing a batch writes to disk, before any of its steps
// has an effect elsewhere: which records it holds (its number Seq, the one
// after the batch before it, runs from that batch's end to End) and the
// session snapshot its rows are computed from. With it a restart replays
// the batch to the same rows.
//
// A batch's plan is written again when another instance moved some of its
// visitors on (Rev counts the versions). The versions of one batch go to two
// files in turn, so that a crash while writing one leaves the one before
// (an earlier version of this batch's, a valid snapshot whose states, where
// already written, are in the batch's applied set); batches of even and odd
// number use two different pairs, so that the next batch is planned while
// one is stored without touching its plan.
type plan struct {
	Seq, Rev uint64
	End      wal.Position
	Snapshot *session.Snapshot
}

var planNames = [4]string{"plan.even.0", "plan.even.1", "plan.odd.0", "plan.odd.1"}

// legacyPlanNames are the files an earlier release wrote its plans to, in
// turn: read at Open (a batch it planned is finished from them), never
// written, and removed once no batch needs them.
var legacyPlanNames = [2]string{"plan.0", "plan.1"}

// planSlot is the file (in planNames) of version rev of batch seq's plan.
func planSlot(seq, rev uint64) int { return int(2*(seq%2) + rev%2) }

func (b *Buffer) planPath(i int) string { return filepath.Join(b.opts.Dir, planNames[i]) }

// createPlanFiles makes sure the plan files exist durably, so that writing
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

// writePlan writes p to its file, framed as the WAL frames its records.
func (b *Buffer) writePlan(p plan) error {
	body := binary.AppendUvarint(make([]byte, 0, p.Snapshot.Size()+4*binary.MaxVarintLen64), p.Seq)
	body = binary.AppendUvarint(body, p.Rev)
	body = appendPosition(body, p.End)
	body, err := p.Snapshot.AppendBinary(body)
	if err != nil {
		return fmt.Errorf("buffer: encode plan: %w", err)
	}
	data := wal.AppendFramed(nil, body)
	f, err := os.OpenFile(b.planPath(planSlot(p.Seq, p.Rev)), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
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

// readPlans reads the whole plans of the batches after batch committed
// (the newest version of each), by batch number, and names the legacy plan
// files that hold none of them (and can go).
func readPlans(dir string, committed uint64) (map[uint64]*plan, []string, error) {
	plans, stale := map[uint64]*plan{}, []string(nil)
	for _, name := range append(legacyPlanNames[:], planNames[:]...) {
		path := filepath.Join(dir, name)
		p, err := readPlanFile(path)
		if err != nil {
			return nil, nil, err
		}
		if p == nil || p.Seq <= committed {
			if _, err := os.Stat(path); err == nil && slices.Contains(legacyPlanNames[:], name) {
				stale = append(stale, path)
			}
			continue
		}
		if q := plans[p.Seq]; q == nil || p.Rev > q.Rev {
			plans[p.Seq] = p
		}
	}
	return plans, stale, nil
}

// readPlanFile reads one plan file; nil when it is empty, torn or absent.
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

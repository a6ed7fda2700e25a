package buffer

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/tally-analytics/tally/internal/wal"
)

// checkpoint records how far the log has reached ClickHouse. Committed is the
// position up to which every record is stored. InFlight, when set, is the end
// of a batch whose insert had started: after a crash, rows of that batch may
// or may not be in ClickHouse, so the replay looks them up before inserting.
type checkpoint struct {
	Committed wal.Position  `json:"committed"`
	InFlight  *wal.Position `json:"in_flight,omitempty"`
}

func loadCheckpoint(path string, first wal.Position) (checkpoint, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return checkpoint{Committed: first}, nil
	}
	if err != nil {
		return checkpoint{}, fmt.Errorf("buffer: read checkpoint: %w", err)
	}
	var cp checkpoint
	if err := json.Unmarshal(data, &cp); err != nil {
		return checkpoint{}, fmt.Errorf("buffer: checkpoint %s is corrupt: %w", path, err)
	}
	// Segments before the first live one were deleted after being committed.
	if cp.Committed.Less(first) {
		cp.Committed = first
	}
	return cp, nil
}

func (b *Buffer) saveCheckpoint(cp checkpoint) error {
	data, err := json.Marshal(cp)
	if err != nil {
		return fmt.Errorf("buffer: encode checkpoint: %w", err)
	}
	if err := wal.WriteFileAtomic(b.checkpointPath(), data); err != nil {
		return fmt.Errorf("buffer: save checkpoint: %w", err)
	}
	b.cp = cp
	return nil
}

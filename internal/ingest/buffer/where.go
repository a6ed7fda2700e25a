package buffer

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Where tells, from the files of a write-ahead-log directory, where the
// flusher stood when it last wrote them: between batches, with a batch
// planned (its sessions being resolved), or at the inserts of a batch. The
// fault soak reports it for every kill; it reads, never writes.
func Where(dir string) (string, error) {
	if _, err := os.Stat(filepath.Join(dir, checkpointName)); errors.Is(err, fs.ErrNotExist) {
		return "before the first batch", nil
	}
	f, err := openSlotFile(filepath.Join(dir, checkpointName))
	if err != nil {
		return "", err
	}
	defer f.Close()
	data, err := f.read()
	if err != nil {
		return "", err
	}
	var cp checkpoint
	if data != nil {
		if err := json.Unmarshal(data, &cp); err != nil {
			return "", fmt.Errorf("buffer: checkpoint: %w", err)
		}
	}
	switch {
	case cp.Batch != nil && cp.Batch.Unsure:
		return "at the inserts", nil
	case cp.Batch != nil: // a checkpoint of a release that inserted one table at a time
		return "at the " + cp.Batch.Step.String() + " insert", nil
	}
	plans, _, err := readPlans(dir, cp.Seq)
	if err != nil {
		return "", err
	}
	if plans[cp.Seq+1] != nil { // the next batch's plan (its start may be in another form)
		return "planned, resolving sessions", nil
	}
	return "between batches", nil
}

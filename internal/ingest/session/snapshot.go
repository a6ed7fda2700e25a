package session

import (
	"encoding/binary"
	"fmt"

	"github.com/tally-analytics/tally/internal/model"
)

const snapshotV1 = 1

// AppendBinary appends the snapshot's encoding to b (encoding.BinaryAppender).
func (s *Snapshot) AppendBinary(b []byte) ([]byte, error) {
	b = append(b, snapshotV1)
	b = binary.AppendUvarint(b, s.Tag)
	b = model.AppendBool(b, s.Degraded)
	b = binary.AppendUvarint(b, uint64(len(s.States)))
	for _, st := range s.States {
		b = model.AppendString(b, string(st.Site))
		b = binary.AppendUvarint(b, st.Visitor)
		b = model.AppendBool(b, st.Value != nil)
		b = model.AppendString(b, string(st.Value))
	}
	return b, nil
}

// Size is at least the length of the snapshot's encoding, so that an
// encoder can take room for it at once: the states of a flush take a few
// hundred kilobytes, which a slice grown by doubling copies about twice.
func (s *Snapshot) Size() int {
	n := 1 + 2*binary.MaxVarintLen64 + 1
	for _, st := range s.States {
		n += 3*binary.MaxVarintLen64 + 1 + len(st.Site) + len(st.Value)
	}
	return n
}

// UnmarshalBinary decodes what AppendBinary wrote (encoding.BinaryUnmarshaler).
func (s *Snapshot) UnmarshalBinary(p []byte) error {
	if len(p) == 0 || p[0] != snapshotV1 {
		return fmt.Errorf("session: snapshot: %w", model.ErrCorruptRecord)
	}
	d := model.NewDecoder(p[1:])
	*s = Snapshot{Tag: d.ReadUvarint(), Degraded: d.ReadBool()}
	n := d.ReadCount()
	s.States = make([]Stored, n)
	for i := range s.States {
		st := &s.States[i]
		st.Site, st.Visitor = model.SiteID(d.ReadString()), d.ReadUvarint()
		has, value := d.ReadBool(), d.ReadString()
		if has {
			st.Value = []byte(value)
		}
	}
	if err := d.Done(); err != nil {
		return fmt.Errorf("session: snapshot: %w", err)
	}
	return nil
}

package session

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"time"

	"github.com/tally-analytics/tally/internal/model"
)

// state is a visitor's current session, as Redis stores it.
type state struct {
	sid               uint64
	start, last       int64 // unix seconds
	version           uint32
	pageviews, events uint32
	entry, exit       string
	lastPageview      int64 // unix seconds of the last pageview; 0 = none yet
	// attribution is where the session came from, fixed at its start and
	// shared, never changed: states are copied on every event of a batch
	attribution *model.Attribution
}

// The stored form of a state: the tag of the batch that wrote it (8 bytes),
// then a version byte and the fields. cas.lua compares the first 8 bytes
// and knows nothing else of the layout.
const (
	tagBytes = 8
	stateV1  = 1
)

// stored is a state with the tag of the batch that wrote it.
type stored struct {
	tag uint64
	state
}

// appendStored encodes s.
func appendStored(b []byte, s stored) []byte {
	b = binary.BigEndian.AppendUint64(b, s.tag)
	b = append(b, stateV1)
	b = binary.AppendUvarint(b, s.sid)
	b = binary.AppendVarint(b, s.start)
	b = binary.AppendVarint(b, s.last)
	b = binary.AppendUvarint(b, uint64(s.version))
	b = binary.AppendUvarint(b, uint64(s.pageviews))
	b = binary.AppendUvarint(b, uint64(s.events))
	b = model.AppendString(b, s.entry)
	b = model.AppendString(b, s.exit)
	b = binary.AppendVarint(b, s.lastPageview)
	return model.AppendAttribution(b, *s.attribution)
}

// storedSize is the length of appendStored's encoding of a state.
func storedSize(s *state) int {
	return tagBytes + 1 + model.UvarintSize(s.sid) + model.VarintSize(s.start) + model.VarintSize(s.last) +
		model.UvarintSize(uint64(s.version)) + model.UvarintSize(uint64(s.pageviews)) + model.UvarintSize(uint64(s.events)) +
		model.StringSize(s.entry) + model.StringSize(s.exit) + model.VarintSize(s.lastPageview) + model.AttributionSize(s.attribution)
}

// decodeStored reads what appendStored wrote. Anything else (a state of an
// older release, kept as a hash, reads as nothing) is an error: the visitor
// then starts a new session, which is safe.
func decodeStored(p []byte) (stored, error) {
	if len(p) <= tagBytes || p[tagBytes] != stateV1 {
		return stored{}, fmt.Errorf("session: stored state of %d bytes is not a state", len(p))
	}
	s := stored{tag: binary.BigEndian.Uint64(p)}
	d := model.NewDecoder(p[tagBytes+1:])
	s.sid = d.ReadUvarint()
	s.start, s.last = d.ReadVarint(), d.ReadVarint()
	s.version = uint32(d.ReadUvarint())
	s.pageviews, s.events = uint32(d.ReadUvarint()), uint32(d.ReadUvarint())
	s.entry, s.exit = d.ReadString(), d.ReadString()
	s.lastPageview = d.ReadVarint()
	a := d.ReadAttribution()
	s.attribution = &a
	if err := d.Done(); err != nil {
		return stored{}, fmt.Errorf("session: stored state: %w", err)
	}
	return s, nil
}

// tagOf is the tag of a stored value as cas.lua reads it: its first 8 bytes
// (fewer if it is shorter; none for no value).
func tagOf(value []byte) []byte {
	return value[:min(len(value), tagBytes)]
}

// row is the state as a row of the sessions table.
func (s state) row(site model.SiteID, visitor uint64, sign int8) model.SessionRow {
	return model.SessionRow{
		SiteID: site, SessionID: s.sid, VisitorID: visitor, Sign: sign, Version: s.version,
		Start: time.Unix(s.start, 0).UTC(), End: time.Unix(s.last, 0).UTC(),
		Pageviews: s.pageviews, Events: s.events, IsBounce: model.Bounce(s.pageviews, s.events),
		EntryPage: s.entry, ExitPage: s.exit, Attribution: *s.attribution,
	}
}

func formatUint(v uint64) string { return strconv.FormatUint(v, 10) }

func fmtErr(op string, err error) error { return fmt.Errorf("session: %s: %w", op, err) }

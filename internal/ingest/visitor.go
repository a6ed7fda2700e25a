package ingest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"sync"
	"time"

	"github.com/tally-analytics/tally/internal/model"
)

// SaltStore keeps one random salt per day, shared by all instances.
type SaltStore interface {
	// Salt returns day's salt, storing candidate if the day has none yet.
	Salt(ctx context.Context, day time.Time, candidate []byte) ([]byte, error)
	DeleteSaltsBefore(ctx context.Context, day time.Time) error
}

// Visitors derives visitor ids. A visitor id sent by the client (the
// tracker's analytics_vid) is hashed with the site id; without one, the id is
// a hash of a daily rotating random salt, the site, the IP address and the
// user agent, so a visitor cannot be followed across days and neither the IP
// address nor the user agent is ever stored.
type Visitors struct {
	store SaltStore

	mu    sync.Mutex
	salts map[string][]byte // by UTC date
}

// NewVisitors uses store for the daily salts.
func NewVisitors(store SaltStore) *Visitors {
	return &Visitors{store: store, salts: map[string][]byte{}}
}

// FromClientID is the visitor id of a client-supplied identifier.
func FromClientID(site model.SiteID, id string) uint64 {
	return hash64([]byte("vid"), []byte(site), []byte(id))
}

// Anonymous is the visitor id of a client that sent no identifier.
func (v *Visitors) Anonymous(ctx context.Context, site model.SiteID, ip, userAgent string, at time.Time) (uint64, error) {
	salt, err := v.salt(ctx, at.UTC())
	if err != nil {
		return 0, err
	}
	return hash64(salt, []byte(site), []byte(ip), []byte(userAgent)), nil
}

func hash64(parts ...[]byte) uint64 {
	h := sha256.New()
	var n [4]byte
	for _, p := range parts {
		binary.LittleEndian.PutUint32(n[:], uint32(len(p)))
		h.Write(n[:])
		h.Write(p)
	}
	var sum [sha256.Size]byte
	return binary.LittleEndian.Uint64(h.Sum(sum[:0]))
}

func (v *Visitors) salt(ctx context.Context, at time.Time) ([]byte, error) {
	day := at.Format(time.DateOnly)
	v.mu.Lock()
	s, ok := v.salts[day]
	v.mu.Unlock()
	if ok {
		return s, nil
	}
	return v.load(ctx, at)
}

func (v *Visitors) load(ctx context.Context, at time.Time) ([]byte, error) {
	day := time.Date(at.Year(), at.Month(), at.Day(), 0, 0, 0, 0, time.UTC)
	candidate := make([]byte, 32)
	rand.Read(candidate) //nolint:errcheck // never fails
	s, err := v.store.Salt(ctx, day, candidate)
	if err != nil {
		return nil, fmt.Errorf("ingest: visitor salt: %w", err)
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	v.salts[day.Format(time.DateOnly)] = s
	for d := range v.salts {
		if d < day.AddDate(0, 0, -1).Format(time.DateOnly) {
			delete(v.salts, d)
		}
	}
	return s, nil
}

// Prepare loads today's and tomorrow's salts ahead of time (so a Postgres
// outage around midnight does not stop ingestion) and forgets salts older
// than yesterday. Run it at start-up and then every hour.
func (v *Visitors) Prepare(ctx context.Context, now time.Time) error {
	now = now.UTC()
	for _, at := range []time.Time{now, now.Add(24 * time.Hour)} {
		if _, err := v.load(ctx, at); err != nil {
			return err
		}
	}
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	return v.store.DeleteSaltsBefore(ctx, today.AddDate(0, 0, -1))
}

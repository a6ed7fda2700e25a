package accounts

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/model"
)

// An id found missing is remembered for the TTL by the clock it is given,
// and not a moment longer.
func TestMissingSitesExpire(t *testing.T) {
	now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	m := newMissingSites(10, time.Minute, func() time.Time { return now })
	m.add("gone")
	if !m.has("gone") || m.has("other") {
		t.Fatalf("just added: has(gone) %v, has(other) %v; want true, false", m.has("gone"), m.has("other"))
	}
	now = now.Add(59 * time.Second)
	if !m.has("gone") {
		t.Errorf("59 s later: forgotten, want remembered for a minute")
	}
	now = now.Add(time.Second)
	if m.has("gone") {
		t.Errorf("a minute later: still remembered")
	}
	m.add("gone") // found missing again: another minute
	now = now.Add(30 * time.Second)
	if !m.has("gone") {
		t.Errorf("30 s after it was added again: forgotten")
	}
}

// However many ids are found missing, the cache holds at most its size.
func TestMissingSitesBounded(t *testing.T) {
	now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	m := newMissingSites(maxMissingSites, time.Minute, func() time.Time { return now })
	for i := range maxMissingSites + 5_000 {
		m.add(model.SiteID(fmt.Sprintf("made-up-%05d", i)))
	}
	m.ids.CleanUp()
	if n := m.ids.EstimatedSize(); n > maxMissingSites {
		t.Errorf("%d ids held after %d added, want at most %d", n, maxMissingSites+5_000, maxMissingSites)
	}
	held := 0
	for i := range maxMissingSites + 5_000 {
		if m.has(model.SiteID(fmt.Sprintf("made-up-%05d", i))) {
			held++
		}
	}
	if held > maxMissingSites {
		t.Errorf("%d ids answered as missing, want at most %d", held, maxMissingSites)
	}
}

// lookupStore has the sites of its map, counts how often it was asked, and
// fails while down.
type lookupStore struct {
	sites map[model.SiteID]model.Site
	down  error
	calls int
}

func (s *lookupStore) SiteByID(_ context.Context, id model.SiteID) (model.Site, error) {
	s.calls++
	if s.down != nil {
		return model.Site{}, s.down
	}
	if site, ok := s.sites[id]; ok {
		return site, nil
	}
	return model.Site{}, fmt.Errorf("pgstore: site by id: %w", errs.ErrNotFound)
}

func (s *lookupStore) MemberRole(context.Context, model.SiteID, model.UserID) (model.Role, error) {
	return "", errs.ErrNotFound
}

// budget is a LookupBudget of n lookups that counts what is spent, given
// back and refused.
type budget struct {
	left, spent, givenBack, refused int
}

var errOverBudget = errs.E(errs.RateLimited, "rate_limit_exceeded", "over budget")

func (b *budget) spend(context.Context) (func(), error) {
	if b.left == 0 {
		b.refused++
		return nil, errOverBudget
	}
	b.left--
	b.spent++
	return func() { b.left++; b.givenBack++ }, nil
}

// A site id the store found missing is answered from the cache for a
// minute, whatever the access version, and asks nothing of the budget; a
// site found gives its lookup back; past the budget the store is not asked.
func TestSiteLookupsWithinBudget(t *testing.T) {
	now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	store := &lookupStore{sites: map[model.SiteID]model.Site{"real": {ID: "real", Domain: "example.com"}}}
	ver := &versions{v: 7}
	var counted []string
	a := NewAccess(store, ver, func() time.Time { return now }, nil,
		CountingLookups(func(result string) { counted = append(counted, result) }))
	ctx := context.Background()
	b := &budget{left: 2}

	if _, err := a.SiteWithin(ctx, "gone", b.spend); !errors.Is(err, errs.ErrNotFound) {
		t.Fatalf("an unknown id: %v, want not found", err)
	}
	ver.v = 8 // an access change elsewhere: the missing id holds
	for range 3 {
		if _, err := a.SiteWithin(ctx, "gone", b.spend); !errors.Is(err, errs.ErrNotFound) {
			t.Fatalf("the unknown id again: %v, want not found", err)
		}
	}
	if store.calls != 1 || b.spent != 1 {
		t.Errorf("4 lookups of one missing id: %d store calls, %d spent; want 1 and 1", store.calls, b.spent)
	}
	// the real site is found: its lookup is given back
	if site, err := a.SiteWithin(ctx, "real", b.spend); err != nil || site.Domain != "example.com" {
		t.Fatalf("the real site: %+v, %v", site, err)
	}
	if b.givenBack != 1 || b.left != 1 {
		t.Errorf("after the real site: %d given back, %d left; want 1 and 1", b.givenBack, b.left)
	}
	if _, err := a.SiteWithin(ctx, "made-up-1", b.spend); !errors.Is(err, errs.ErrNotFound) {
		t.Fatalf("made-up-1: %v, want not found", err)
	}
	// the budget is spent: a new id is refused without a lookup, and the
	// ids the caches hold are still answered
	if _, err := a.SiteWithin(ctx, "made-up-2", b.spend); !errors.Is(err, errOverBudget) {
		t.Errorf("made-up-2 past the budget: %v, want the budget's refusal", err)
	}
	if _, err := a.SiteWithin(ctx, "gone", b.spend); !errors.Is(err, errs.ErrNotFound) {
		t.Errorf("a missing id past the budget: %v, want not found from the cache", err)
	}
	if _, err := a.SiteWithin(ctx, "real", b.spend); err != nil {
		t.Errorf("a cached site past the budget: %v, want it from the cache", err)
	}
	if store.calls != 3 || b.refused != 1 {
		t.Errorf("%d store calls and %d refusals, want 3 (gone, real, made-up-1) and 1", store.calls, b.refused)
	}
	want := []string{LookupMissing, LookupFound, LookupMissing}
	if fmt.Sprint(counted) != fmt.Sprint(want) {
		t.Errorf("lookups counted %v, want %v", counted, want)
	}

	// a minute on, the missing id is looked up again
	now = now.Add(time.Minute)
	b.left = 1
	if _, err := a.SiteWithin(ctx, "gone", b.spend); !errors.Is(err, errs.ErrNotFound) || store.calls != 4 {
		t.Errorf("a minute later: %v after %d store calls, want not found from the store (4)", err, store.calls)
	}
	// a store that fails spends nothing either
	store.down = errors.New("dial tcp: connection refused")
	b.left, b.givenBack = 1, 0
	if _, err := a.SiteWithin(ctx, "made-up-3", b.spend); err == nil || errors.Is(err, errs.ErrNotFound) {
		t.Errorf("the store down: %v, want its error", err)
	}
	if b.givenBack != 1 || b.left != 1 {
		t.Errorf("the store down: %d given back, %d left; want 1 and 1", b.givenBack, b.left)
	}
	if a.missing.has("made-up-3") {
		t.Errorf("an id the store failed on is remembered as missing")
	}
}

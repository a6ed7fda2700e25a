package pgstore_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/model"
)

// Segments: at most limit per site even when created at once (ErrFull), a
// name once per site whatever its case (ErrConflict), found, changed and
// deleted through their own site only, and gone with their site.
func TestSegments(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	u := ownerOf(t, s, "site1", "site2")
	filters := map[string]string{"country": "DE", "props[plan]": "pro"}
	sg, err := s.CreateSegment(ctx, model.Segment{SiteID: "site1", Name: "Germans on pro", Filters: filters, CreatedBy: u.ID}, 3)
	if err != nil {
		t.Fatal(err)
	}
	if sg.ID == "" || sg.SiteID != "site1" || sg.Name != "Germans on pro" || !cmp.Equal(sg.Filters, filters) || sg.CreatedBy != u.ID || sg.CreatedAt.IsZero() {
		t.Errorf("created %+v", sg)
	}
	if got, err := s.SegmentOf(ctx, "site1", sg.ID); err != nil || !cmp.Equal(got, sg) {
		t.Errorf("SegmentOf = %+v, %v; want %+v", got, err, sg)
	}
	for _, site := range []model.SiteID{"site2", "nope"} {
		if _, err := s.SegmentOf(ctx, site, sg.ID); !errors.Is(err, errs.ErrNotFound) {
			t.Errorf("SegmentOf through %s: %v, want ErrNotFound", site, err)
		}
	}
	if _, err := s.SegmentOf(ctx, "site1", "not-a-uuid"); !errors.Is(err, errs.ErrNotFound) {
		t.Errorf("SegmentOf a malformed id: %v, want ErrNotFound", err)
	}
	if _, err := s.CreateSegment(ctx, model.Segment{SiteID: "site1", Name: "GERMANS ON PRO", Filters: filters}, 3); !errors.Is(err, errs.ErrConflict) {
		t.Errorf("the name in capitals: %v, want ErrConflict", err)
	}
	if _, err := s.CreateSegment(ctx, model.Segment{SiteID: "site2", Name: "Germans on pro", Filters: filters}, 3); err != nil {
		t.Errorf("the name on another site: %v", err)
	}

	// three at most, however many are sent at once: 1 exists, 2 more pass
	passed, full := atOnce(t, 5, errs.ErrFull, func(i int) error {
		_, err := s.CreateSegment(ctx, model.Segment{SiteID: "site1", Name: "s" + string(rune('a'+i)), Filters: filters}, 3)
		return err
	})
	if passed != 2 || full != 3 {
		t.Errorf("five concurrent creations beside one segment, limit 3: %d passed, %d refused; want 2 and 3", passed, full)
	}
	list, err := s.SegmentsBySite(ctx, "site1")
	if err != nil || len(list) != 3 || list[0].ID != sg.ID || list[1].CreatedBy != "" {
		t.Errorf("SegmentsBySite = %+v, %v", list, err)
	}

	// changed and deleted through its own site only
	sg.Name, sg.Filters = "Germans", map[string]string{"country": "DE"}
	if got, err := s.UpdateSegment(ctx, sg); err != nil || got.Name != "Germans" || !cmp.Equal(got.Filters, sg.Filters) {
		t.Errorf("UpdateSegment = %+v, %v", got, err)
	}
	other := sg
	other.SiteID = "site2"
	if _, err := s.UpdateSegment(ctx, other); !errors.Is(err, errs.ErrNotFound) {
		t.Errorf("changing through another site: %v, want ErrNotFound", err)
	}
	taken := list[1]
	taken.Name = "germans"
	if _, err := s.UpdateSegment(ctx, taken); !errors.Is(err, errs.ErrConflict) {
		t.Errorf("renaming to a taken name: %v, want ErrConflict", err)
	}
	if err := s.DeleteSegment(ctx, "site2", sg.ID); !errors.Is(err, errs.ErrNotFound) {
		t.Errorf("deleting through another site: %v, want ErrNotFound", err)
	}
	if err := s.DeleteSegment(ctx, "site1", "not-a-uuid"); !errors.Is(err, errs.ErrNotFound) {
		t.Errorf("deleting a malformed id: %v, want ErrNotFound", err)
	}
	if err := s.DeleteSegment(ctx, "site1", sg.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SegmentOf(ctx, "site1", sg.ID); !errors.Is(err, errs.ErrNotFound) {
		t.Errorf("a deleted segment: %v, want ErrNotFound", err)
	}

	// a site's segments go with it
	if err := s.DeleteSite(ctx, "site1"); err != nil {
		t.Fatal(err)
	}
	if list, err := s.SegmentsBySite(ctx, "site1"); err != nil || len(list) != 0 {
		t.Errorf("segments of a deleted site: %+v, %v", list, err)
	}
	if _, err := s.CreateSegment(ctx, model.Segment{SiteID: "site1", Name: "x", Filters: filters}, 3); !errors.Is(err, errs.ErrNotFound) {
		t.Errorf("a segment of a deleted site: %v, want ErrNotFound", err)
	}
}

package stats

import (
	"errors"
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tally-analytics/tally/internal/errs"
)

// field is the field an error names ("-" for no *errs.Error, "" for none).
func field(err error) string {
	var e *errs.Error
	if err == nil || !errors.As(err, &e) {
		return "-"
	}
	return e.Field
}

// A segment's filters are read by ParseFilters' rules and kept as it
// normalises them; what is no filter is refused.
func TestParseFilterSet(t *testing.T) {
	fs, err := ParseFilterSet(map[string]string{"country": "de", "device": "mobile", "props[plan]": "pro", "utm_source": "news"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"country": "DE", "device": "Mobile", "props[plan]": "pro", "utm_source": "news"}
	if diff := cmp.Diff(want, FilterSet(fs)); diff != "" {
		t.Errorf("the canonical set (-want +got):\n%s", diff)
	}
	// the same filters as a query string gives them
	byQuery, err := ParseFilters(url.Values{"country": {"DE"}, "device": {"Mobile"}, "props[plan]": {"pro"}, "utm_source": {"news"}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(FilterSet(byQuery), FilterSet(fs)); diff != "" {
		t.Errorf("the set and the query string differ:\n%s", diff)
	}
	for _, tc := range []struct {
		set   map[string]string
		field string
	}{
		{nil, ""},
		{map[string]string{}, ""},
		{map[string]string{"date_from": "2026-05-01"}, "date_from"},
		{map[string]string{"segment": "x"}, "segment"},
		{map[string]string{"country": "Germany"}, "country"},
		{map[string]string{"props[": "x"}, "props["},
		{map[string]string{"props[a]": "1", "props[b]": "1", "props[c]": "1", "props[d]": "1"}, "props"},
	} {
		if _, err := ParseFilterSet(tc.set); field(err) != tc.field {
			t.Errorf("%v: %v, want a refusal naming %q", tc.set, err, tc.field)
		}
	}
}

// Both apply; a dimension both filter, or more than 3 props together,
// is refused naming segment.
func TestCombineFilters(t *testing.T) {
	seg := []Filter{Eq(Device, "Desktop"), Eq(PropFilter("plan"), "pro")}
	got, err := CombineFilters([]Filter{Eq(Source, "Google")}, seg)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"source": "Google", "device": "Desktop", "props[plan]": "pro"}, FilterSet(got)); diff != "" {
		t.Errorf("combined (-want +got):\n%s", diff)
	}
	for _, own := range [][]Filter{
		{Eq(Device, "Mobile")},
		{Eq(Device, "Desktop")},
		{Eq(PropFilter("plan"), "free")},
		{Eq(PropFilter("a"), "1"), Eq(PropFilter("b"), "1"), Eq(PropFilter("c"), "1")},
		// a group's filters count each: a dimension one of them names, or
		// three props in an or beside the segment's
		{AnyOf(Eq(Country, "DE"), Eq(Device, "Mobile"))},
		{AnyOf(Eq(PropFilter("a"), "1"), Eq(PropFilter("b"), "1"), Eq(PropFilter("c"), "1"))},
	} {
		if _, err := CombineFilters(own, seg); field(err) != SegmentParam {
			t.Errorf("%v with the segment: %v, want a refusal naming segment", FilterSet(own), err)
		}
	}
	if got, err := CombineFilters([]Filter{Eq(PropFilter("a"), "1"), Eq(PropFilter("b"), "1")}, seg); err != nil || len(got) != 4 {
		t.Errorf("three props in all: %v, %v", FilterSet(got), err)
	}
}
